// Facts about this machine for a run's report (result.json "environment"):
// what a reader needs to compare two runs made on different machines.
#pragma once

#include <map>
#include <string>

namespace aftermath {

// kernel, machine, glibc, compiler, ulimit_n, /dev/shm size and usage
// (dev_shm_size_bytes, dev_shm_used_bytes), nproc, uid; and the versions of
// what jobs run on, read from files rather than by importing anything:
// libtorch, cuda_toolkit, nccl when installed, nvidia_driver always ("none"
// without a driver). PyTorch is the run's interpreter's (python_probe.h).
// A fact that cannot be read is left out (nvidia_driver excepted).
std::map<std::string, std::string> environment_facts();

}  // namespace aftermath
