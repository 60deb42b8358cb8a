// The job's environment as it reported it ("torch_config" events).
#include "harness/core/job_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/core/timeline.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::IsEmpty;

TEST(JobEnvironment, IsWhatTheJobReported) {
  Timeline tl;
  EXPECT_THAT(job_environment_from(tl), IsEmpty());
  tl.add(obs::event(1, 10, "torch_config",
                    json{{"sharing_strategy", "file_system"},
                         {"start_method", "spawn"},
                         {"torch_version", "2.3.1"}}
                        .dump()));
  tl.add(obs::event(
      2, 11, "torch_config",
      json{{"sharing_strategy", "file_system"}, {"backend", "gloo"}, {"workers", 16}}.dump()));
  tl.add(obs::event(3, 12, "torch_config", json{{"start_method", "fork"}}.dump()));
  tl.add(
      obs::event(4, 12, "loader", json{{"start_method", "forkserver"}}.dump()));  // another event
  tl.add(obs::event(5, 12, "torch_config", "not json"));
  EXPECT_EQ(job_environment_from(tl),
            (std::map<std::string, std::string>{{"backend", "gloo"},
                                                {"sharing_strategy", "file_system"},
                                                {"start_method", "spawn, fork"},
                                                {"torch_version", "2.3.1"},
                                                {"workers", "16"}}));
}

// Strings as they are, numbers and booleans written out; what has no one-line
// form (objects, arrays, null) and empty strings say nothing.
TEST(JobEnvironment, OnlyScalarFieldsCount) {
  Timeline tl;
  tl.add(obs::event(1, 10, "torch_config",
                    json{{"cuda", true},
                         {"ratio", 0.5},
                         {"nested", {{"a", 1}}},
                         {"list", {1, 2}},
                         {"none", nullptr},
                         {"empty", ""}}
                        .dump()));
  tl.add(obs::event(2, 11, "torch_config", json::array({1, 2}).dump()));  // not an object
  EXPECT_EQ(job_environment_from(tl),
            (std::map<std::string, std::string>{{"cuda", "true"}, {"ratio", "0.5"}}));
}

}  // namespace
}  // namespace aftermath
