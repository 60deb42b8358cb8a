#include "harness/observe/environment_facts.h"

#include <gnu/libc-version.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <regex>

namespace aftermath {

std::map<std::string, std::string> environment_facts() {
  std::map<std::string, std::string> env;
  utsname u{};
  if (uname(&u) == 0) {
    env["kernel"] = std::string(u.sysname) + " " + u.release;
    env["machine"] = u.machine;
  }
  env["glibc"] = gnu_get_libc_version();
#if defined(__clang__)
  env["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = "gcc " __VERSION__;
#endif
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) env["ulimit_n"] = std::to_string(rl.rlim_cur);
  struct statvfs vfs{};
  if (statvfs("/dev/shm", &vfs) == 0) {
    env["dev_shm_size_bytes"] = std::to_string(std::uint64_t(vfs.f_blocks) * vfs.f_frsize);
    env["dev_shm_used_bytes"] =
        std::to_string(std::uint64_t(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize);
  }
  env["nproc"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  env["uid"] = std::to_string(getuid());
  // Versions of what jobs run on, read from files: LibTorch, CUDA runtime,
  // NCCL, the driver. PyTorch is the run's interpreter's (cli/run_cmd.cc).
  auto first_match = [](const std::string& path, const std::regex& re) -> std::string {
    std::ifstream f(path);
    std::string line;
    std::smatch m;
    while (std::getline(f, line))
      if (std::regex_search(line, m, re)) return m[1].str();
    return {};
  };
  auto libtorch = first_match("/usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfigVersion.cmake",
                              std::regex(R"(PACKAGE_VERSION \"([^\"]+)\")"));
  if (!libtorch.empty()) env["libtorch"] = libtorch;
  auto cudart = first_match("/usr/local/cuda/include/cuda_runtime_api.h",
                            std::regex(R"(define CUDART_VERSION\s+(\d+))"));
  if (!cudart.empty()) {
    int v = std::atoi(cudart.c_str());
    env["cuda_toolkit"] = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  auto nccl_major =
      first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_MAJOR (\d+))"));
  auto nccl_minor =
      first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_MINOR (\d+))"));
  auto nccl_patch =
      first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_PATCH (\d+))"));
  if (!nccl_major.empty()) env["nccl"] = nccl_major + "." + nccl_minor + "." + nccl_patch;
  auto driver =
      first_match("/proc/driver/nvidia/version", std::regex(R"(Kernel Module\s+([0-9.]+))"));
  env["nvidia_driver"] = driver.empty() ? "none" : driver;
  return env;
}

}  // namespace aftermath
