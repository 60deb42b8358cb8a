// aftermath-probe: can a new process use each GPU it sees? For every CUDA
// device: select it, allocate one byte, free it, read free/total memory. One
// JSON line per GPU on stdout:
//
//   {"ordinal":0,"status":"ok","name":"...","uuid":"GPU-...","pci_bus_id":"0000:3b:00.0",
//    "free":84540784640,"total":85045526528,"ms":212.4}
//   {"ordinal":1,"status":"failed","stage":"cudaMalloc","error":"cudaErrorMemoryAllocation: ..."}
//
// or, when there is nothing to probe, one line
//   {"status":"unavailable","reason":"no_runtime"|"no_driver"|"no_device","error":"..."}
//
// libcudart is loaded with dlopen (from --cudart PATH, $AFTERMATH_CUDART, the
// toolkit found at build time, then the usual sonames), so the probe builds
// and runs on any machine and says why it cannot probe.
//
// Exit status: 0 every GPU ok; 1 some GPU failed; 3 nothing to probe; 2 usage.
// The probe bounds its own life (SIGALRM after $AFTERMATH_PROBE_LIFETIME_S,
// default 120 s) and dies with its parent: the harness still kills it at its
// own deadline, this only covers a harness that died first.
#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness/observe/probe/cudart.h"
#include "harness/observe/probe/loader.h"

namespace {

namespace rt = aftermath::cudart;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);  // each line as soon as it is known: a later hang keeps it
}

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The shared entry points, and what only the probe asks for.
struct Runtime : aftermath::cudart_loading::Cudart {
  rt::DeviceGetPCIBusIdFn pci_bus_id = nullptr;
  rt::GetDevicePropertiesFn get_properties = nullptr;
  rt::VersionFn runtime_version = nullptr;
  rt::VersionFn driver_version = nullptr;
  rt::GetErrorStringFn error_string = nullptr;

  std::string error(int code) const {
    const char* text = error_string ? error_string(code) : nullptr;
    return name(code) + (text ? std::string(": ") + text : std::string());
  }
};

// Tries each candidate; on failure the error lists what was tried.
aftermath::Status load(Runtime& r, const std::vector<std::string>& candidates) {
  if (auto s = aftermath::cudart_loading::load_cudart(r, candidates); !s) return s;
  r.pci_bus_id = r.sym<rt::DeviceGetPCIBusIdFn>("cudaDeviceGetPCIBusId");
  // CUDA 12 renamed the current ABI to _v2 and kept the old name; 13 has one.
  r.get_properties = r.sym<rt::GetDevicePropertiesFn>("cudaGetDeviceProperties_v2");
  if (!r.get_properties)
    r.get_properties = r.sym<rt::GetDevicePropertiesFn>("cudaGetDeviceProperties");
  r.runtime_version = r.sym<rt::VersionFn>("cudaRuntimeGetVersion");
  r.driver_version = r.sym<rt::VersionFn>("cudaDriverGetVersion");
  r.error_string = r.sym<rt::GetErrorStringFn>("cudaGetErrorString");
  return {};
}

std::string uuid_string(const unsigned char* u) {
  char buf[48];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                u[14], u[15]);
  return buf;
}

void unavailable(const char* reason, const std::string& error) {
  emit(std::string("{\"status\":\"unavailable\",\"reason\":\"") + reason +
       "\",\"error\":" + json_string(error) + "}");
}

// Probes one ordinal; true when it passed.
bool probe(const Runtime& r, int ordinal) {
  double t0 = now_ms();
  std::string head = "{\"ordinal\":" + std::to_string(ordinal);
  // Identity first (no context needed), so a failure still says which GPU.
  std::vector<unsigned char> prop(rt::kPropBufferSize, 0);
  if (r.get_properties && r.get_properties(prop.data(), ordinal) == rt::kSuccess) {
    std::string name(reinterpret_cast<const char*>(prop.data() + rt::kPropNameOffset),
                     strnlen(reinterpret_cast<const char*>(prop.data()), rt::kPropNameSize));
    head += ",\"name\":" + json_string(name);
    head += ",\"uuid\":" + json_string(uuid_string(prop.data() + rt::kPropUuidOffset));
  }
  char bus[64] = {};
  if (r.pci_bus_id && r.pci_bus_id(bus, sizeof bus, ordinal) == rt::kSuccess)
    head += ",\"pci_bus_id\":" + json_string(bus);
  auto fail = [&](const char* stage, int code) {
    emit(head + ",\"status\":\"failed\",\"stage\":\"" + stage + "\",\"error\":" +
         json_string(r.error(code)) + ",\"ms\":" + std::to_string(now_ms() - t0) + "}");
    return false;
  };
  int e = r.set_device(ordinal);
  if (e != rt::kSuccess) return fail("cudaSetDevice", e);
  void* p = nullptr;
  e = r.malloc(&p, 1);
  if (e != rt::kSuccess) return fail("cudaMalloc", e);
  e = r.free(p);
  if (e != rt::kSuccess) return fail("cudaFree", e);
  std::size_t free_b = 0, total_b = 0;
  e = r.mem_get_info(&free_b, &total_b);
  if (e != rt::kSuccess) return fail("cudaMemGetInfo", e);
  emit(head + ",\"status\":\"ok\",\"free\":" + std::to_string(free_b) +
       ",\"total\":" + std::to_string(total_b) + ",\"ms\":" + std::to_string(now_ms() - t0) + "}");
  return true;
}

void usage() {
  std::fprintf(stderr,
               "usage: aftermath-probe [--cudart PATH]\n"
               "Probes every CUDA device this process sees (CUDA_VISIBLE_DEVICES applies):\n"
               "select it, allocate one byte, read free/total memory; one JSON line per GPU.\n"
               "Exit: 0 all ok, 1 some failed, 3 nothing to probe, 2 usage.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string cudart_arg;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--cudart" && i + 1 < argc) {
      cudart_arg = argv[++i];
    } else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  // Bound our own life; die with the harness.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  long lifetime = 120;
  if (const char* l = std::getenv("AFTERMATH_PROBE_LIFETIME_S")) lifetime = std::atol(l);
  if (lifetime > 0) ::alarm(static_cast<unsigned>(lifetime));

  std::vector<std::string> candidates;
  candidates.push_back(cudart_arg);
  if (const char* env = std::getenv("AFTERMATH_CUDART")) candidates.emplace_back(env);
#ifdef AFTERMATH_CUDART_HINT
  candidates.emplace_back(AFTERMATH_CUDART_HINT);  // the toolkit found at build time
#endif
  for (const auto& n : aftermath::cudart_loading::cudart_sonames()) candidates.push_back(n);
  Runtime r;
  if (auto loaded = load(r, candidates); !loaded) {
    unavailable("no_runtime", "no CUDA runtime: " + loaded.error().what);
    return 3;
  }
  int count = 0;
  int e = r.get_device_count(&count);
  if (e == rt::kErrorInsufficientDriver || e == rt::kErrorInitializationError) {
    unavailable("no_driver", "no usable NVIDIA driver (" + r.path + "): " + r.error(e));
    return 3;
  }
  if (e == rt::kErrorNoDevice || (e == rt::kSuccess && count == 0)) {
    unavailable("no_device", "no CUDA device" + (e ? ": " + r.error(e) : std::string()));
    return 3;
  }
  if (e != rt::kSuccess) {
    unavailable("no_device", "cudaGetDeviceCount: " + r.error(e));
    return 3;
  }
  bool all_ok = true;
  for (int i = 0; i < count; ++i) all_ok = probe(r, i) && all_ok;
  return all_ok ? 0 : 1;
}
