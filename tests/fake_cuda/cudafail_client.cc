// aftermath-cudafail-client (tests only): makes CUDA allocation calls through
// the dynamic linker -- it links libaftermath-fakecudart.so, so a preloaded
// libaftermath-cudafail.so stands in front of it -- and prints each result.
//
//   aftermath-cudafail-client API COUNT   COUNT calls of API, one line each:
//                                         "rc=R reached=N", then exits 0
//   aftermath-cudafail-client             one command per stdin line:
//     alloc API BYTES   -> "rc=R reached=N"
//     fork API COUNT    -> the child makes COUNT calls and prints
//                          "child rcs=R1,R2,... reached=N"; then the parent,
//                          once it has reaped the child, "parent reached=N"
//   EOF ends it. N is how many allocation calls reached the fake library.
//   API: cudaMalloc cudaMallocAsync cudaMallocAsync_ptsz cudaMallocManaged
//        cudaMallocHost cudaHostAlloc cuMemAlloc cuMemAlloc_v2
// It bounds its own life (SIGALRM after 60 s).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fixtures/device/cuda_alloc_api.h"

namespace api = aftermath::cudafail;

extern "C" {
int cudaMalloc(void**, std::size_t);
int cudaMallocAsync(void**, std::size_t, CUstream_st*);
int cudaMallocAsync_ptsz(void**, std::size_t, CUstream_st*);
int cudaMallocManaged(void**, std::size_t, unsigned int);
int cudaMallocHost(void**, std::size_t);
int cudaHostAlloc(void**, std::size_t, unsigned int);
int cuMemAlloc_v2(api::CuDevicePtr*, std::size_t);
int cuMemAlloc(api::CuDevicePtrV1*, unsigned int);
unsigned long aftermath_fake_cuda_reached();
}

namespace {

// The return code, or -1 for an unknown API name.
int call(const std::string& api_name, std::size_t bytes) {
  void* p = nullptr;
  if (api_name == "cudaMalloc") return cudaMalloc(&p, bytes);
  if (api_name == "cudaMallocAsync") return cudaMallocAsync(&p, bytes, nullptr);
  if (api_name == "cudaMallocAsync_ptsz") return cudaMallocAsync_ptsz(&p, bytes, nullptr);
  if (api_name == "cudaMallocManaged") return cudaMallocManaged(&p, bytes, 1);
  if (api_name == "cudaMallocHost") return cudaMallocHost(&p, bytes);
  if (api_name == "cudaHostAlloc") return cudaHostAlloc(&p, bytes, 0);
  if (api_name == "cuMemAlloc_v2") {
    api::CuDevicePtr d = 0;
    return cuMemAlloc_v2(&d, bytes);
  }
  if (api_name == "cuMemAlloc") {
    api::CuDevicePtrV1 d = 0;
    return cuMemAlloc(&d, static_cast<unsigned int>(bytes));
  }
  return -1;
}

void say(const std::string& s) {
  std::string line = s + "\n";
  (void)!::write(STDOUT_FILENO, line.data(), line.size());
}

}  // namespace

int main(int argc, char** argv) {
  ::alarm(60);
  if (argc == 3) {
    int count = std::atoi(argv[2]);
    for (int i = 0; i < count; ++i) {
      int rc = call(argv[1], 4096);
      say("rc=" + std::to_string(rc) + " reached=" + std::to_string(aftermath_fake_cuda_reached()));
    }
    return 0;
  }
  char buf[256];
  while (std::fgets(buf, sizeof buf, stdin)) {
    char verb[32] = {}, name[64] = {};
    unsigned long n = 0;
    if (std::sscanf(buf, "%31s %63s %lu", verb, name, &n) != 3) {
      say("bad command");
      continue;
    }
    if (!std::strcmp(verb, "alloc")) {
      int rc = call(name, n);
      say("rc=" + std::to_string(rc) + " reached=" + std::to_string(aftermath_fake_cuda_reached()));
    } else if (!std::strcmp(verb, "fork")) {
      pid_t pid = ::fork();
      if (pid == 0) {
        std::string rcs;
        for (unsigned long i = 0; i < n; ++i)
          rcs += (i ? "," : "") + std::to_string(call(name, 4096));
        say("child rcs=" + rcs + " reached=" + std::to_string(aftermath_fake_cuda_reached()));
        ::_exit(0);
      }
      int st = 0;
      if (pid > 0) ::waitpid(pid, &st, 0);
      say("parent reached=" + std::to_string(aftermath_fake_cuda_reached()));
    } else {
      say("bad command");
    }
  }
  return 0;
}
