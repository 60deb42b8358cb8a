// A job's messages are untrusted: each field by type, defaults for the rest.
#include "harness/supervise/job_message.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

TEST(JobMessage, AnAnnouncement) {
  JobMessage m = parse_job_message(
      R"({"t":"announce","role":"worker","rank":1,"worker":3,"labels":{"host":"n0"}})");
  EXPECT_EQ(m.type, "announce");
  EXPECT_EQ(m.role, Role::Worker);
  EXPECT_EQ(m.rank, 1);
  EXPECT_EQ(m.worker, 3);
  EXPECT_EQ(m.labels.dump(), R"({"host":"n0"})");
}

TEST(JobMessage, APointAndAnEvent) {
  JobMessage p = parse_job_message(R"({"t":"point","name":"step","hit":12,"labels":{"rank":"0"}})");
  EXPECT_EQ(p.type, "point");
  EXPECT_EQ(p.name, "step");
  EXPECT_EQ(p.hit, 12);
  EXPECT_EQ(p.labels.dump(), R"({"rank":"0"})");
  JobMessage e = parse_job_message(R"({"t":"event","name":"torch_config","fields":{"a":1}})");
  EXPECT_EQ(e.name, "torch_config");
  EXPECT_EQ(e.fields, R"({"a":1})");
  EXPECT_EQ(parse_job_message(R"({"t":"event","name":"x"})").fields, "{}");
}

TEST(JobMessage, WrongTypesTakeDefaultsAndGarbageIsMalformed) {
  JobMessage m = parse_job_message(R"({"t":"announce","role":7,"rank":"one","worker":1.5})");
  EXPECT_EQ(m.type, "announce");
  EXPECT_EQ(m.role, Role::Unknown);
  EXPECT_EQ(m.rank, -1);
  EXPECT_EQ(m.worker, -1);
  EXPECT_EQ(m.labels.dump(), "{}");
  EXPECT_EQ(parse_job_message("not json").type, "");
  EXPECT_EQ(parse_job_message("[1,2]").type, "");
  EXPECT_EQ(parse_job_message(R"({"t":3})").type, "");
}

}  // namespace
}  // namespace aftermath
