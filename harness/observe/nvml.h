// NVML behind a small interface. The harness asks one question: what does
// every GPU hold right now (memory, compute processes, identity)? DlNvml
// answers it by loading libnvidia-ml.so.1 at run time, so a machine without
// the driver still runs everything and gets a clear "unavailable" reason;
// FakeNvml (nvml_fake.h) answers it from a script in tests.
//
// Versioned entry points. NVML keeps old ABIs alive under suffixed names. For
// the process list DlNvml takes the newest it finds:
// nvmlDeviceGetComputeRunningProcesses_v3, then _v2 (both with the 24-byte
// nvmlProcessInfo_v2_t), then the unsuffixed one (the 16-byte v1 layout).
// A driver older than the library's headers fails the newer names with
// NVML_ERROR_FUNCTION_NOT_FOUND at call time, so that also falls back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aftermath {

struct NvmlProcessInfo {
  unsigned pid = 0;                         // as the driver reports it (see pid_map.h)
  std::optional<std::uint64_t> used_bytes;  // nullopt: NVML_VALUE_NOT_AVAILABLE
};

struct NvmlDeviceInfo {
  unsigned index = 0;
  std::string uuid;
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::string name;
  std::uint64_t total = 0;
  std::uint64_t free = 0;
  std::uint64_t used = 0;
  std::vector<NvmlProcessInfo> processes;
  std::string error;  // non-empty: this device's query failed (then the numbers are 0)
};

// The device query. Not thread-safe: one caller at a time.
class Nvml {
 public:
  virtual ~Nvml() = default;
  // Loads and initialises NVML; idempotent. "" when usable, else why not
  // ("no NVIDIA driver: libnvidia-ml.so.1 not found", ...).
  virtual std::string init() = 0;
  // Every GPU now. Precondition: init() returned "". A failing device is
  // reported with its error, never dropped.
  virtual std::vector<NvmlDeviceInfo> devices() = 0;
  // The driver's version ("580.159.04"), or "" when unknown.
  virtual std::string driver_version() { return {}; }
};

// Resolves an NVML entry point by name; nullptr when absent.
using NvmlSymbolLookup = std::function<void*(const char* name)>;

// The real NVML, loaded with dlopen("libnvidia-ml.so.1").
class DlNvml final : public Nvml {
 public:
  DlNvml();
  // Resolves entry points through `lookup` instead of dlopen: how tests drive
  // this very code with fake entry points.
  explicit DlNvml(NvmlSymbolLookup lookup);
  ~DlNvml() override;  // nvmlShutdown, dlclose
  DlNvml(const DlNvml&) = delete;
  DlNvml& operator=(const DlNvml&) = delete;

  std::string init() override;
  std::vector<NvmlDeviceInfo> devices() override;
  std::string driver_version() override;
  // Which process query is in use: "v3", "v2", "v1", or "" before the first.
  std::string process_api() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace aftermath
