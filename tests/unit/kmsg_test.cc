// The kernel log reader's parsing and the OOM killer's line for a pid, on
// records as /dev/kmsg gives them. (Reading the real /dev/kmsg is covered by
// the end-to-end cgroup OOM test, which makes the kernel write such a line.)
#include "harness/observe/kmsg.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

TEST(Kmsg, ParsesARecordAndDropsItsContinuationLines) {
  auto r = parse_kmsg_record(
      "3,2171,21065060251,-;Memory cgroup out of memory: Killed process 11711 (aftermath-train) "
      "total-vm:1108644kB, anon-rss:74720kB\n SUBSYSTEM=memory\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->level, 3);
  EXPECT_EQ(r->seq, 2171u);
  EXPECT_EQ(r->usec, 21065060251u);
  EXPECT_EQ(
      r->message,
      "Memory cgroup out of memory: Killed process 11711 (aftermath-train) total-vm:1108644kB, "
      "anon-rss:74720kB");
  // The facility is above the level: 6 | (0 << 3) is info, 30 is daemon.info.
  EXPECT_EQ(parse_kmsg_record("30,7,100,c;x")->level, 6);
  // Newer kernels add fields after the flags.
  EXPECT_EQ(parse_kmsg_record("6,8,200,-,caller=T1;hello\n")->message, "hello");
}

TEST(Kmsg, MalformedRecordsAreNone) {
  EXPECT_FALSE(parse_kmsg_record(""));
  EXPECT_FALSE(parse_kmsg_record("no header here"));
  EXPECT_FALSE(parse_kmsg_record("6,x,100,-;m"));
  EXPECT_FALSE(parse_kmsg_record("6,1;m"));
}

TEST(Kmsg, TheOomKillersLineForExactlyThatPid) {
  std::vector<KmsgRecord> rs;
  for (const char* m :
       {"oom-kill:constraint=CONSTRAINT_MEMCG,task=aftermath-train,pid=4242,uid=0",
        "Memory cgroup out of memory: Killed process 42421 (other) total-vm:1kB",
        "Memory cgroup out of memory: Killed process 4242 (aftermath-train) total-vm:2kB",
        "something else"}) {
    KmsgRecord r;
    r.message = m;
    rs.push_back(r);
  }
  EXPECT_EQ(oom_kill_message(rs, 4242),
            "Memory cgroup out of memory: Killed process 4242 (aftermath-train) total-vm:2kB");
  EXPECT_EQ(oom_kill_message(rs, 424), std::nullopt);  // not a prefix of 4242 or 42421
  EXPECT_EQ(oom_kill_message({}, 4242), std::nullopt);
}

TEST(Kmsg, AnUnopenableLogSaysWhyAndDrainsNothing) {
  KmsgTail t;
  std::string why = t.open("/nonexistent/kmsg");
  EXPECT_NE(why.find("cannot open /nonexistent/kmsg"), std::string::npos) << why;
  EXPECT_FALSE(t.is_open());
  EXPECT_TRUE(t.drain().empty());
}

}  // namespace
}  // namespace aftermath
