// aftermath-cudafail-point-job (tests only): a job that passes the point
// "device.alloc" (hit = i) before each of N device allocations, made through
// the dynamic linker (it links libaftermath-fakecudart.so, so a preloaded
// libaftermath-cudafail.so stands in front), and stops at the first failure:
//   aftermath-cudafail-point-job [N]   (default 3)
// stdout: "alloc i rc=R" per call; on a failure, stderr "device allocation i
// failed: out of memory (rc=R)" and exit 2; else exit 0.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "aftermath_points.h"

extern "C" int cudaMalloc(void**, std::size_t);

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 3;
  aftermath::points::announce("rank", 0);
  const char* preload = std::getenv("LD_PRELOAD");
  const char* arm = std::getenv("AFTERMATH_CUDA_FAIL_ARM");
  std::printf("LD_PRELOAD=%s AFTERMATH_CUDA_FAIL_ARM=%s pid=%d\n", preload ? preload : "",
              arm ? arm : "", static_cast<int>(getpid()));
  for (int i = 1; i <= n; ++i) {
    aftermath::points::point("device.alloc", {}, i);
    void* p = nullptr;
    int rc = cudaMalloc(&p, 1 << 20);
    std::printf("alloc %d rc=%d\n", i, rc);
    std::fflush(stdout);
    if (rc != 0) {
      std::fprintf(stderr, "device allocation %d failed: out of memory (rc=%d)\n", i, rc);
      return 2;
    }
  }
  return 0;
}
