// The test double beside DlNvml: answers from a script of snapshots. Each
// devices() call returns the next snapshot, and the last one forever after, so
// "memory released late" is a script of three snapshots.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "harness/observe/nvml.h"

namespace aftermath {

class FakeNvml final : public Nvml {
 public:
  // A machine without a driver: init() fails with `why`.
  static FakeNvml unavailable(std::string why) {
    FakeNvml f;
    f.init_error_ = std::move(why);
    return f;
  }
  FakeNvml() = default;
  explicit FakeNvml(std::vector<std::vector<NvmlDeviceInfo>> script) : script_(std::move(script)) {}

  void push(std::vector<NvmlDeviceInfo> snapshot) { script_.push_back(std::move(snapshot)); }
  std::string init() override {
    ++init_calls_;
    return init_error_;
  }
  std::vector<NvmlDeviceInfo> devices() override {
    ++device_calls_;
    if (script_.empty()) return {};
    size_t i = next_ < script_.size() ? next_++ : script_.size() - 1;
    return script_[i];
  }
  std::string driver_version() override { return init_error_.empty() ? "999.0-fake" : ""; }
  int device_calls() const { return device_calls_; }
  int init_calls() const { return init_calls_; }

  // A GPU for scripts: index, uuid "GPU-<n>...", bus id, memory in MiB.
  static NvmlDeviceInfo gpu(unsigned index, std::uint64_t used_mib, std::uint64_t total_mib = 81920,
                            std::vector<NvmlProcessInfo> procs = {}) {
    NvmlDeviceInfo d;
    d.index = index;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08x-1111-2222-3333-44445555666%u", 0xa0u + index, index);
    d.uuid = uuid;
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + 0x10 * index);
    d.pci_bus_id = bus;
    d.name = "Fake GPU";
    d.total = total_mib << 20;
    d.used = used_mib << 20;
    d.free = d.total - d.used;
    d.processes = std::move(procs);
    return d;
  }
  static NvmlProcessInfo proc(unsigned pid, std::uint64_t used_mib) {
    NvmlProcessInfo p;
    p.pid = pid;
    p.used_bytes = used_mib << 20;
    return p;
  }

 private:
  std::string init_error_;
  std::vector<std::vector<NvmlDeviceInfo>> script_;
  size_t next_ = 0;
  int device_calls_ = 0;
  int init_calls_ = 0;
};

}  // namespace aftermath
