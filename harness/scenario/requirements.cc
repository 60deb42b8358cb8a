#include "harness/scenario/requirements.h"

namespace aftermath {

const std::vector<std::string>& known_requirements() {
  static const std::vector<std::string> k = {
      "root", "pidns", "gpu", "2-gpus", "cuda", "nccl", "torch", "python-torch", "memory-cgroup"};
  return k;
}

}  // namespace aftermath
