#include "harness/observe/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "harness/observe/nvml_abi.h"

namespace aftermath {

namespace abi = nvml_abi;

struct DlNvml::Impl {
  NvmlSymbolLookup lookup;
  void* handle = nullptr;  // from dlopen; null with an injected lookup
  bool use_dlopen = false;
  bool initialized = false;  // nvmlInit succeeded: shutdown owed
  std::optional<std::string> init_result;

  abi::InitFn init = nullptr;
  abi::ShutdownFn shutdown = nullptr;
  abi::ErrorStringFn error_string = nullptr;
  abi::GetCountFn get_count = nullptr;
  abi::GetHandleByIndexFn get_handle = nullptr;
  abi::GetStringFn get_uuid = nullptr;
  abi::GetStringFn get_name = nullptr;
  abi::GetPciInfoFn get_pci = nullptr;
  abi::GetMemoryInfoFn get_memory = nullptr;
  abi::GetProcessesV2Fn processes_v3 = nullptr;
  abi::GetProcessesV2Fn processes_v2 = nullptr;
  abi::GetProcessesV1Fn processes_v1 = nullptr;
  abi::GetDriverVersionFn get_driver_version = nullptr;
  int process_api = 0;  // 3, 2, 1: the newest that answered; 0: none tried yet

  struct Identity {
    abi::Device device = nullptr;
    std::string uuid, pci_bus_id, name;
  };
  std::vector<std::optional<Identity>> identities;  // by index, filled on first use

  template <typename Fn>
  Fn sym(std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (void* p = lookup(n)) return reinterpret_cast<Fn>(p);
    return nullptr;
  }

  std::string error(int code) const {
    const char* s = error_string ? error_string(code) : nullptr;
    return std::string(s && *s ? s : "NVML error") + " (" + std::to_string(code) + ")";
  }

  std::string read_string(abi::GetStringFn fn, abi::Device d, unsigned size) {
    if (!fn) return {};
    std::string buf(size, '\0');
    if (fn(d, buf.data(), size) != abi::kSuccess) return {};
    buf.resize(std::strlen(buf.c_str()));
    return buf;
  }

  // Calls one process query, growing the buffer while the driver says it is
  // too small (processes can start between the sizing call and the real one).
  template <typename Info, typename Fn>
  int query(Fn fn, abi::Device d, std::vector<NvmlProcessInfo>& out) {
    std::vector<Info> buf;
    unsigned n = 0;
    int r = fn(d, &n, nullptr);
    for (int attempt = 0; attempt < 8; ++attempt) {
      if (r == abi::kSuccess) {
        n = std::min<unsigned>(n, static_cast<unsigned>(buf.size()));
        for (unsigned i = 0; i < n; ++i) {
          NvmlProcessInfo p;
          p.pid = buf[i].pid;
          if (buf[i].usedGpuMemory != abi::kValueNotAvailable) p.used_bytes = buf[i].usedGpuMemory;
          out.push_back(p);
        }
        return r;
      }
      if (r != abi::kErrorInsufficientSize) return r;
      buf.assign(n + 8, Info{});
      n = static_cast<unsigned>(buf.size());
      r = fn(d, &n, buf.data());
    }
    return r;
  }

  // The newest process query that the library and the driver both know.
  int processes(abi::Device d, std::vector<NvmlProcessInfo>& out) {
    if (process_api == 0) process_api = processes_v3 ? 3 : processes_v2 ? 2 : processes_v1 ? 1 : 0;
    while (process_api > 0) {
      out.clear();
      int r = process_api == 3   ? query<abi::ProcessInfoV2>(processes_v3, d, out)
              : process_api == 2 ? query<abi::ProcessInfoV2>(processes_v2, d, out)
                                 : query<abi::ProcessInfoV1>(processes_v1, d, out);
      if (r != abi::kErrorFunctionNotFound) return r;
      // The library has the name, the driver does not: take the next older.
      --process_api;
      while (process_api > 0 &&
             !(process_api == 2 ? processes_v2 != nullptr : processes_v1 != nullptr))
        --process_api;
    }
    return abi::kErrorFunctionNotFound;
  }
};

DlNvml::DlNvml() : impl_(std::make_unique<Impl>()) { impl_->use_dlopen = true; }

DlNvml::DlNvml(NvmlSymbolLookup lookup) : impl_(std::make_unique<Impl>()) {
  impl_->lookup = std::move(lookup);
}

DlNvml::~DlNvml() {
  if (impl_->initialized && impl_->shutdown) impl_->shutdown();
  if (impl_->handle) ::dlclose(impl_->handle);
}

std::string DlNvml::init() {
  Impl& m = *impl_;
  if (m.init_result) return *m.init_result;
  auto fail = [&](std::string why) { return *(m.init_result = std::move(why)); };
  if (m.use_dlopen) {
    m.handle = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m.handle) {
      const char* e = ::dlerror();
      return fail(std::string("no NVIDIA driver: cannot load libnvidia-ml.so.1 (") +
                  (e ? e : "not found") + ")");
    }
    void* h = m.handle;
    m.lookup = [h](const char* name) { return ::dlsym(h, name); };
  }
  m.init = m.sym<abi::InitFn>({"nvmlInit_v2", "nvmlInit"});
  m.shutdown = m.sym<abi::ShutdownFn>({"nvmlShutdown"});
  m.error_string = m.sym<abi::ErrorStringFn>({"nvmlErrorString"});
  m.get_count = m.sym<abi::GetCountFn>({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  m.get_handle = m.sym<abi::GetHandleByIndexFn>(
      {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  m.get_uuid = m.sym<abi::GetStringFn>({"nvmlDeviceGetUUID"});
  m.get_name = m.sym<abi::GetStringFn>({"nvmlDeviceGetName"});
  // The unsuffixed nvmlDeviceGetPciInfo has an older layout: never take it.
  m.get_pci = m.sym<abi::GetPciInfoFn>({"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  m.get_memory = m.sym<abi::GetMemoryInfoFn>({"nvmlDeviceGetMemoryInfo"});
  m.processes_v3 = m.sym<abi::GetProcessesV2Fn>({"nvmlDeviceGetComputeRunningProcesses_v3"});
  m.processes_v2 = m.sym<abi::GetProcessesV2Fn>({"nvmlDeviceGetComputeRunningProcesses_v2"});
  m.processes_v1 = m.sym<abi::GetProcessesV1Fn>({"nvmlDeviceGetComputeRunningProcesses"});
  m.get_driver_version = m.sym<abi::GetDriverVersionFn>({"nvmlSystemGetDriverVersion"});
  const char* missing = !m.init         ? "nvmlInit_v2"
                        : !m.get_count  ? "nvmlDeviceGetCount_v2"
                        : !m.get_handle ? "nvmlDeviceGetHandleByIndex_v2"
                        : !m.get_memory ? "nvmlDeviceGetMemoryInfo"
                                        : nullptr;
  if (missing) return fail(std::string("NVML is unusable: it lacks ") + missing);
  int r = m.init();
  if (r != abi::kSuccess) {
    std::string why = r == abi::kErrorDriverNotLoaded ? "no NVIDIA driver loaded"
                      : r == abi::kErrorLibRmVersionMismatch
                          ? "NVML and the kernel driver disagree on versions (reboot pending?)"
                          : "NVML could not start";
    return fail(why + ": nvmlInit: " + m.error(r));
  }
  m.initialized = true;
  return fail("");
}

std::vector<NvmlDeviceInfo> DlNvml::devices() {
  Impl& m = *impl_;
  std::vector<NvmlDeviceInfo> out;
  if (!m.initialized) return out;
  unsigned count = 0;
  int r = m.get_count(&count);
  if (r != abi::kSuccess) {
    NvmlDeviceInfo d;
    d.error = "nvmlDeviceGetCount: " + m.error(r);
    out.push_back(std::move(d));
    return out;
  }
  if (m.identities.size() < count) m.identities.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    NvmlDeviceInfo d;
    d.index = i;
    auto& id = m.identities[i];
    if (!id) {
      abi::Device h = nullptr;
      r = m.get_handle(i, &h);
      if (r != abi::kSuccess) {
        d.error = "nvmlDeviceGetHandleByIndex(" + std::to_string(i) + "): " + m.error(r);
        out.push_back(std::move(d));
        continue;
      }
      Impl::Identity ident;
      ident.device = h;
      ident.uuid = m.read_string(m.get_uuid, h, abi::kUuidBufferSize);
      ident.name = m.read_string(m.get_name, h, abi::kNameBufferSize);
      abi::PciInfo pci{};
      if (m.get_pci && m.get_pci(h, &pci) == abi::kSuccess) {
        pci.busId[sizeof pci.busId - 1] = '\0';
        ident.pci_bus_id = pci.busId;
      }
      id = std::move(ident);
    }
    d.uuid = id->uuid;
    d.name = id->name;
    d.pci_bus_id = id->pci_bus_id;
    abi::Memory mem{};
    r = m.get_memory(id->device, &mem);
    if (r != abi::kSuccess) {
      d.error = "nvmlDeviceGetMemoryInfo: " + m.error(r);
      if (r == abi::kErrorGpuIsLost) id.reset();
      out.push_back(std::move(d));
      continue;
    }
    d.total = mem.total;
    d.free = mem.free;
    d.used = mem.used;
    r = m.processes(id->device, d.processes);
    if (r != abi::kSuccess && r != abi::kErrorNotSupported)
      d.error = "nvmlDeviceGetComputeRunningProcesses: " + m.error(r);
    out.push_back(std::move(d));
  }
  return out;
}

std::string DlNvml::driver_version() {
  Impl& m = *impl_;
  if (!m.initialized || !m.get_driver_version) return {};
  char buf[abi::kVersionBufferSize] = {};
  if (m.get_driver_version(buf, sizeof buf) != abi::kSuccess) return {};
  buf[sizeof buf - 1] = '\0';
  return buf;
}

std::string DlNvml::process_api() const {
  switch (impl_->process_api) {
    case 3:
      return "v3";
    case 2:
      return "v2";
    case 1:
      return "v1";
    default:
      return "";
  }
}

}  // namespace aftermath
