// libaftermath-fakecudart.so (tests only): a stand-in for libcudart and the
// allocation half of libcuda on machines without a GPU. Allocations succeed
// against a fake memory budget and are counted, so a test can tell whether a
// call reached the library at all (the interposer must stop failing calls
// before they get here). Pointers are addresses in a range nobody maps:
// never dereference them.
//
//   AFTERMATH_FAKE_CUDA_DEVICES  devices reported (default 1; 0: cudaErrorNoDevice)
//   AFTERMATH_FAKE_CUDA_TOTAL    bytes of memory per device (default 16 GiB)
//   AFTERMATH_FAKE_CUDA_FREE     bytes free at start (default: TOTAL)
//
// One budget shared by every device; allocations past it return the real
// out-of-memory codes.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

#include "fixtures/device/cuda_alloc_api.h"

namespace {

namespace api = aftermath::cudafail;

constexpr int kErrorInvalidValue = 1;
constexpr int kErrorNoDevice = 100;
constexpr int kErrorInvalidDevice = 101;

std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  return std::strtoull(v, nullptr, 10);
}

struct Budget {
  std::mutex mu;
  bool init = false;
  std::uint64_t total = 0, used = 0, next = 0x7e0000000000ull;
  int devices = 1;
  std::map<std::uint64_t, std::uint64_t> live;

  void setup() {  // callers hold mu
    if (init) return;
    init = true;
    devices = static_cast<int>(env_u64("AFTERMATH_FAKE_CUDA_DEVICES", 1));
    total = env_u64("AFTERMATH_FAKE_CUDA_TOTAL", std::uint64_t{16} << 30);
    std::uint64_t free = env_u64("AFTERMATH_FAKE_CUDA_FREE", total);
    used = free > total ? 0 : total - free;
  }
  // 0 and the address, or the out-of-memory code.
  int take(std::uint64_t n, std::uint64_t* addr, int oom) {
    std::lock_guard<std::mutex> l(mu);
    setup();
    if (n > total - used) return oom;
    used += n;
    *addr = next;
    next += (n + 0xfff) & ~std::uint64_t{0xfff};
    next += 0x1000;
    live[*addr] = n;
    return 0;
  }
  int give(std::uint64_t addr) {
    std::lock_guard<std::mutex> l(mu);
    setup();
    if (!addr) return 0;
    auto it = live.find(addr);
    if (it == live.end()) return kErrorInvalidValue;
    used -= it->second;
    live.erase(it);
    return 0;
  }
};

Budget& budget() {
  static Budget b;
  return b;
}

std::atomic<unsigned long> g_reached{0};

int rt_alloc(void** p, std::size_t n) {
  g_reached.fetch_add(1);
  std::uint64_t a = 0;
  int rc = budget().take(n, &a, api::kCudaErrorMemoryAllocation);
  if (p) *p = rc ? nullptr : reinterpret_cast<void*>(a);
  return rc;
}

int cu_alloc(std::uint64_t* p, std::size_t n) {
  g_reached.fetch_add(1);
  std::uint64_t a = 0;
  int rc = budget().take(n, &a, api::kCuErrorOutOfMemory);
  if (p) *p = rc ? 0 : a;
  return rc;
}

}  // namespace

#define FAKE_EXPORT __attribute__((visibility("default")))

extern "C" {

// How many allocation calls reached this library in this process.
FAKE_EXPORT unsigned long aftermath_fake_cuda_reached() { return g_reached.load(); }

FAKE_EXPORT int cudaGetDeviceCount(int* count) {
  std::lock_guard<std::mutex> l(budget().mu);
  budget().setup();
  *count = budget().devices;
  return budget().devices > 0 ? 0 : kErrorNoDevice;
}

FAKE_EXPORT int cudaSetDevice(int d) {
  std::lock_guard<std::mutex> l(budget().mu);
  budget().setup();
  return d >= 0 && d < budget().devices ? 0 : kErrorInvalidDevice;
}

FAKE_EXPORT int cudaMemGetInfo(std::size_t* free, std::size_t* total) {
  std::lock_guard<std::mutex> l(budget().mu);
  budget().setup();
  *free = budget().total - budget().used;
  *total = budget().total;
  return 0;
}

FAKE_EXPORT int cudaMalloc(void** p, std::size_t n) { return rt_alloc(p, n); }
FAKE_EXPORT int cudaMallocAsync(void** p, std::size_t n, CUstream_st*) { return rt_alloc(p, n); }
FAKE_EXPORT int cudaMallocAsync_ptsz(void** p, std::size_t n, CUstream_st*) {
  return rt_alloc(p, n);
}
FAKE_EXPORT int cudaMallocManaged(void** p, std::size_t n, unsigned int) { return rt_alloc(p, n); }
FAKE_EXPORT int cudaMallocHost(void** p, std::size_t n) { return rt_alloc(p, n); }
FAKE_EXPORT int cudaHostAlloc(void** p, std::size_t n, unsigned int) { return rt_alloc(p, n); }
FAKE_EXPORT int cudaFree(void* p) { return budget().give(reinterpret_cast<std::uint64_t>(p)); }
FAKE_EXPORT int cudaFreeHost(void* p) { return budget().give(reinterpret_cast<std::uint64_t>(p)); }

FAKE_EXPORT int cuMemAlloc_v2(api::CuDevicePtr* p, std::size_t n) {
  std::uint64_t a = 0;
  int rc = cu_alloc(&a, n);
  if (p) *p = a;
  return rc;
}
FAKE_EXPORT int cuMemAlloc(api::CuDevicePtrV1* p, unsigned int n) {
  std::uint64_t a = 0;
  int rc = cu_alloc(&a, n);
  if (p) *p = static_cast<api::CuDevicePtrV1>(a);  // the v1 ABI truncates; tests never free these
  return rc;
}
FAKE_EXPORT int cuMemFree_v2(api::CuDevicePtr p) { return budget().give(p); }

FAKE_EXPORT const char* cudaGetErrorName(int e) {
  switch (e) {
    case 0:
      return "cudaSuccess";
    case 1:
      return "cudaErrorInvalidValue";
    case 2:
      return "cudaErrorMemoryAllocation";
    case 3:
      return "cudaErrorInitializationError";
    case 35:
      return "cudaErrorInsufficientDriver";
    case 100:
      return "cudaErrorNoDevice";
    case 101:
      return "cudaErrorInvalidDevice";
    default:
      return "cudaErrorUnknown";
  }
}
FAKE_EXPORT const char* cudaGetErrorString(int e) { return cudaGetErrorName(e); }

}  // extern "C"
