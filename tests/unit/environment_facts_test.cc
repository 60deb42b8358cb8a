// The machine facts a run's report carries, checked against this machine.
#include "harness/observe/environment_facts.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace aftermath {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

TEST(EnvironmentFacts, DescribeThisMachine) {
  auto env = environment_facts();
  utsname u{};
  ASSERT_EQ(::uname(&u), 0);
  EXPECT_EQ(env.at("kernel"), std::string(u.sysname) + " " + u.release);
  EXPECT_EQ(env.at("machine"), u.machine);
  EXPECT_EQ(env.at("uid"), std::to_string(::getuid()));
  EXPECT_EQ(env.at("nproc"), std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_TRUE(all_digits(env.at("ulimit_n")) || env.at("ulimit_n") == "18446744073709551615");
  EXPECT_FALSE(env.at("glibc").empty());
  EXPECT_FALSE(env.at("compiler").empty());
  // Always present: "none" says there is no driver, not that it was not looked for.
  EXPECT_FALSE(env.at("nvidia_driver").empty());
}

TEST(EnvironmentFacts, SharedMemorySizeAndUsage) {
  auto env = environment_facts();
  if (!env.count("dev_shm_size_bytes")) GTEST_SKIP() << "no /dev/shm here";
  ASSERT_TRUE(all_digits(env.at("dev_shm_size_bytes")));
  ASSERT_TRUE(all_digits(env.at("dev_shm_used_bytes")));
  EXPECT_LE(std::stoull(env.at("dev_shm_used_bytes")), std::stoull(env.at("dev_shm_size_bytes")));
}

// A PyTorch version implies the CUDA it was built for ("none" for a CPU build).
TEST(EnvironmentFacts, PytorchComesWithItsCuda) {
  auto env = environment_facts();
  EXPECT_EQ(env.count("pytorch"), env.count("pytorch_cuda"));
  if (env.count("pytorch_cuda")) {
    EXPECT_FALSE(env.at("pytorch_cuda").empty());
  }
}

}  // namespace
}  // namespace aftermath
