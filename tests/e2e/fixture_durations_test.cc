// The testcase programs read their durations in the harness's one grammar
// (harness/core/duration.h): a bad one is an error that names it, never a
// silent default.
#include <gtest/gtest.h>

#include "e2e_util.h"

namespace {

int run_tc(const std::vector<std::string>& argv, const e2e::TempDir& dir, std::string* err) {
  e2e::Child c = e2e::spawn(argv, dir.path() + "/out", dir.path() + "/err");
  EXPECT_GT(c.pid, 0);
  int status = e2e::wait_for(c, std::chrono::seconds(20));
  *err = e2e::slurp(dir.path() + "/err");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FixtureDurations, UnitsAreMandatoryAndUnknownUnitsRefused) {
  e2e::TempDir dir;
  std::string err;
  EXPECT_EQ(run_tc({e2e::bin("tc_clean"), "--work", "5"}, dir, &err), 2);
  EXPECT_NE(err.find("invalid duration '5'"), std::string::npos) << err;
  EXPECT_EQ(run_tc({e2e::bin("tc_clean"), "--work", "50sec"}, dir, &err), 2);
  EXPECT_NE(err.find("invalid duration '50sec'"), std::string::npos) << err;
  EXPECT_EQ(run_tc({e2e::bin("tc_clean"), "--work", "20ms"}, dir, &err), 0) << err;
}

}  // namespace
