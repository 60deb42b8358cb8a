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
