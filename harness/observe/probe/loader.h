// Header-only pieces shared by the programs that load the CUDA runtime by
// hand (aftermath-probe, aftermath-device-hog) and check their hand-written
// declarations against the toolkit's headers where it is found. No harness
// dependency but the header-only error type: these programs stay standalone.
#pragma once

#include <dlfcn.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "harness/observe/probe/cudart.h"
#include "harness/os/expected.h"

namespace aftermath::cudart_loading {

// The CUDA runtime's sonames, newest first, after any explicit choice and
// the toolkit found at build time (each caller adds those).
inline const std::vector<std::string>& cudart_sonames() {
  static const std::vector<std::string> kNames = {"libcudart.so", "libcudart.so.13",
                                                  "libcudart.so.12", "libcudart.so.11.0"};
  return kNames;
}

// A library dlopen()ed, and the candidate that loaded.
struct Loaded {
  void* handle = nullptr;
  std::string path;
};

// dlopen()s the first candidate that loads (`flags`: RTLD_LOCAL with RTLD_NOW
// or RTLD_LAZY); when none does, the error lists what each attempt said.
inline Expected<Loaded> dlopen_first(const std::vector<std::string>& candidates,
                                     int flags = RTLD_NOW | RTLD_LOCAL) {
  std::string why;
  for (const auto& c : candidates) {
    if (c.empty()) continue;
    if (void* h = ::dlopen(c.c_str(), flags)) return Loaded{h, c};
    const char* e = ::dlerror();
    why += (why.empty() ? "" : "; ") + std::string(e ? e : c);
  }
  return Error{why.empty() ? std::string("no candidate") : why};
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

// Loads the first candidate that has the entry points above; an error when
// none loads or the one that does lacks them.
inline Status load_cudart(Cudart& r, const std::vector<std::string>& candidates) {
  auto loaded = dlopen_first(candidates);
  if (!loaded) return loaded.error();
  r.handle = loaded->handle;
  r.path = loaded->path;
  r.get_device_count = r.sym<cudart::GetDeviceCountFn>("cudaGetDeviceCount");
  r.set_device = r.sym<cudart::SetDeviceFn>("cudaSetDevice");
  r.malloc = r.sym<cudart::MallocFn>("cudaMalloc");
  r.free = r.sym<cudart::FreeFn>("cudaFree");
  r.mem_get_info = r.sym<cudart::MemGetInfoFn>("cudaMemGetInfo");
  r.error_name = r.sym<cudart::GetErrorStringFn>("cudaGetErrorName");
  if (!r.get_device_count || !r.set_device || !r.malloc || !r.free || !r.mem_get_info) {
    return Error{r.path + " lacks the runtime entry points (cudaMalloc, ...)"};
  }
  return {};
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
