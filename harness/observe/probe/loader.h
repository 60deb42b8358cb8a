// Header-only pieces shared by the programs that load the CUDA runtime by
// hand (aftermath-probe, aftermath-device-hog) and check their hand-written
// declarations against the toolkit's headers where it is found. No harness
// dependencies: these programs stay standalone.
#pragma once

#include <dlfcn.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "harness/observe/probe/cudart.h"

namespace aftermath::cudart_loading {

// The CUDA runtime's sonames, newest first, after any explicit choice and
// the toolkit found at build time (each caller adds those).
inline const std::vector<std::string>& cudart_sonames() {
  static const std::vector<std::string> kNames = {"libcudart.so", "libcudart.so.13",
                                                  "libcudart.so.12", "libcudart.so.11.0"};
  return kNames;
}

// dlopen()s the first candidate that loads (RTLD_NOW | RTLD_LOCAL); its path
// in *path. nullptr when none does, and *why lists what each attempt said.
inline void* dlopen_first(const std::vector<std::string>& candidates, std::string* path,
                          std::string* why) {
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) {
      *path = c;
      return h;
    }
    const char* e = ::dlerror();
    *why += (why->empty() ? "" : "; ") + std::string(e ? e : c);
  }
  return nullptr;
}

// The runtime entry points every such program needs, from the first
// candidate that loads. Programs that need more resolve it with sym().
struct Cudart {
  void* handle = nullptr;
  std::string path;
  cudart::GetDeviceCountFn get_device_count = nullptr;
  cudart::SetDeviceFn set_device = nullptr;
  cudart::MallocFn malloc = nullptr;
  cudart::FreeFn free = nullptr;
  cudart::MemGetInfoFn mem_get_info = nullptr;
  cudart::GetErrorStringFn error_name = nullptr;  // cudaGetErrorName; may be missing

  template <typename Fn>
  Fn sym(const char* name) const {
    return reinterpret_cast<Fn>(::dlsym(handle, name));
  }
  // "cudaErrorMemoryAllocation", or "cudaError <code>" without the name.
  std::string name(int code) const {
    const char* n = error_name ? error_name(code) : nullptr;
    return n ? std::string(n) : "cudaError " + std::to_string(code);
  }
};

// Loads the first candidate that has the entry points above; false, with
// *why, when none loads or the one that does lacks them.
inline bool load_cudart(Cudart& r, const std::vector<std::string>& candidates, std::string* why) {
  r.handle = dlopen_first(candidates, &r.path, why);
  if (!r.handle) return false;
  r.get_device_count = r.sym<cudart::GetDeviceCountFn>("cudaGetDeviceCount");
  r.set_device = r.sym<cudart::SetDeviceFn>("cudaSetDevice");
  r.malloc = r.sym<cudart::MallocFn>("cudaMalloc");
  r.free = r.sym<cudart::FreeFn>("cudaFree");
  r.mem_get_info = r.sym<cudart::MemGetInfoFn>("cudaMemGetInfo");
  r.error_name = r.sym<cudart::GetErrorStringFn>("cudaGetErrorName");
  if (!r.get_device_count || !r.set_device || !r.malloc || !r.free || !r.mem_get_info) {
    *why = r.path + " lacks the runtime entry points (cudaMalloc, ...)";
    return false;
  }
  return true;
}

template <typename F>
struct Signature;
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
};

// For static_asserts: the same arguments, and a result of the same size
// (cudaError_t and CUresult are enums, declared here as int).
template <typename Real, typename Ours>
constexpr bool same_abi() {
  using RS = Signature<Real>;
  using OS = Signature<Ours>;
  return std::is_same_v<typename RS::Args, typename OS::Args> &&
         sizeof(typename RS::Result) == sizeof(typename OS::Result);
}

}  // namespace aftermath::cudart_loading
