// Unit tests for harness/core/types: durations, outcomes, signals and the
// string forms of the closed enums.
#include "harness/core/types.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

#include "harness/core/timeline.h"

namespace aftermath {
namespace {

// ---------------------------------------------------------------- durations

TEST(ParseDuration, EveryUnit) {
  EXPECT_EQ(parse_duration("7ns"), Nanos{7});
  EXPECT_EQ(parse_duration("250us"), 250 * Nanos{1000});
  EXPECT_EQ(parse_duration("500ms"), 500 * kMilli);
  EXPECT_EQ(parse_duration("20s"), 20 * kSecond);
  EXPECT_EQ(parse_duration("2m"), 120 * kSecond);
  EXPECT_EQ(parse_duration("2min"), 120 * kSecond);
  EXPECT_EQ(parse_duration("1h"), 3600 * kSecond);
  EXPECT_EQ(parse_duration("0s"), Nanos{0});
}

TEST(ParseDuration, Decimals) {
  EXPECT_EQ(parse_duration("1.5s"), 1500 * kMilli);
  EXPECT_EQ(parse_duration("0.1s"), 100 * kMilli);
  EXPECT_EQ(parse_duration("1.5ms"), 1500 * Nanos{1000});
  EXPECT_EQ(parse_duration(".5s"), 500 * kMilli);
  EXPECT_EQ(parse_duration("2.s"), 2 * kSecond);
  EXPECT_EQ(parse_duration("0.25m"), 15 * kSecond);
  EXPECT_EQ(parse_duration("1.5h"), 5400 * kSecond);
}

TEST(ParseDuration, SurroundingWhitespaceIsIgnored) {
  EXPECT_EQ(parse_duration("  20s"), 20 * kSecond);
  EXPECT_EQ(parse_duration("20s \n"), 20 * kSecond);
}

TEST(ParseDuration, RejectsBareNumbers) {
  EXPECT_EQ(parse_duration("5"), std::nullopt);
  EXPECT_EQ(parse_duration("1.5"), std::nullopt);
  EXPECT_EQ(parse_duration("0"), std::nullopt);
}

TEST(ParseDuration, RejectsGarbage) {
  for (const char* bad : {"", " ", "s", "ms", "abc", "twenty seconds", "5 s", "5sec", "5S", "5ms5",
                          "1.2.3s", ".s", "1e3s", "5 ms", "10d", "0x10s", "s5"}) {
    EXPECT_EQ(parse_duration(bad), std::nullopt) << "\"" << bad << "\"";
  }
}

TEST(ParseDuration, RejectsNegativeAndSigned) {
  EXPECT_EQ(parse_duration("-1s"), std::nullopt);
  EXPECT_EQ(parse_duration("-500ms"), std::nullopt);
  EXPECT_EQ(parse_duration("+1s"), std::nullopt);
}

TEST(ParseDuration, RejectsValuesThatOverflowNanos) {
  EXPECT_EQ(parse_duration("1000000000h"), std::nullopt);
  EXPECT_EQ(parse_duration("99999999999999999999999s"), std::nullopt);
}

TEST(FormatDuration, PicksTheLargestShortUnit) {
  EXPECT_EQ(format_duration(0), "0ns");
  EXPECT_EQ(format_duration(999), "999ns");
  EXPECT_EQ(format_duration(1000), "1us");
  EXPECT_EQ(format_duration(250 * 1000), "250us");
  EXPECT_EQ(format_duration(1500 * 1000), "1.5ms");
  EXPECT_EQ(format_duration(20 * kMilli), "20ms");
  EXPECT_EQ(format_duration(kSecond), "1s");
  EXPECT_EQ(format_duration(1500 * kMilli), "1.5s");
  EXPECT_EQ(format_duration(20 * kSecond), "20s");
  EXPECT_EQ(format_duration(90 * kSecond), "90s");  // not a whole number of minutes
  EXPECT_EQ(format_duration(60 * kSecond), "1m");
  EXPECT_EQ(format_duration(120 * kSecond), "2m");
}

TEST(FormatDuration, Negative) {
  EXPECT_EQ(format_duration(-2 * kSecond), "-2s");
  EXPECT_EQ(format_duration(-20 * kMilli), "-20ms");
}

TEST(FormatDuration, RoundTripsThroughParse) {
  for (Nanos d : {Nanos{0}, Nanos{7}, Nanos{1000}, 250 * Nanos{1000}, 1500 * Nanos{1000},
                  20 * kMilli, kSecond, 1500 * kMilli, 90 * kSecond, 120 * kSecond}) {
    auto text = format_duration(d);
    EXPECT_EQ(parse_duration(text), d) << text;
  }
}

TEST(ToMs, ConvertsNanos) {
  EXPECT_DOUBLE_EQ(to_ms(1500 * kMilli), 1500.0);
  EXPECT_DOUBLE_EQ(to_ms(500'000), 0.5);
  EXPECT_DOUBLE_EQ(to_ms(0), 0.0);
}

TEST(MonotonicNow, DoesNotGoBackwards) {
  Nanos a = monotonic_now();
  Nanos b = monotonic_now();
  EXPECT_GT(a, 0);
  EXPECT_GE(b, a);
}

// ---------------------------------------------------------------- outcomes

TEST(OutcomeTest, FromWaitStatusExited) {
  // A normal exit: the code sits in bits 8..15, the low 7 bits are 0.
  auto o = Outcome::from_wait_status(0x0300);
  EXPECT_TRUE(o.is_exited());
  EXPECT_FALSE(o.is_killed());
  EXPECT_EQ(o.kind(), Outcome::Kind::Exited);
  EXPECT_EQ(o.exit_code(), 3);
  EXPECT_FALSE(o.core_dumped());
  EXPECT_EQ(o, Outcome::exited(3));

  EXPECT_EQ(Outcome::from_wait_status(0), Outcome::exited(0));
  EXPECT_EQ(Outcome::from_wait_status(0xff00), Outcome::exited(255));
}

TEST(OutcomeTest, FromWaitStatusKilled) {
  // Killed: the signal in the low 7 bits.
  auto o = Outcome::from_wait_status(9);
  EXPECT_TRUE(o.is_killed());
  EXPECT_FALSE(o.is_exited());
  EXPECT_EQ(o.kind(), Outcome::Kind::Killed);
  EXPECT_EQ(o.signal(), SIGKILL);
  EXPECT_FALSE(o.core_dumped());
  EXPECT_EQ(o, Outcome::killed(SIGKILL));

  EXPECT_EQ(Outcome::from_wait_status(SIGTERM), Outcome::killed(SIGTERM));
}

TEST(OutcomeTest, FromWaitStatusCoreDump) {
  // 0x80 is the core-dump flag.
  auto o = Outcome::from_wait_status(0x80 | SIGSEGV);
  ASSERT_TRUE(o.is_killed());
  EXPECT_EQ(o.signal(), SIGSEGV);
  EXPECT_TRUE(o.core_dumped());
  EXPECT_EQ(o, Outcome::killed(SIGSEGV, true));
  EXPECT_NE(o, Outcome::killed(SIGSEGV, false));
}

TEST(OutcomeTest, FromRealChildren) {
  pid_t exiter = fork();
  ASSERT_GE(exiter, 0);
  if (exiter == 0) _exit(3);
  int status = 0;
  ASSERT_EQ(waitpid(exiter, &status, 0), exiter);
  EXPECT_EQ(Outcome::from_wait_status(status), Outcome::exited(3));

  pid_t victim = fork();
  ASSERT_GE(victim, 0);
  if (victim == 0) {
    ::kill(getpid(), SIGKILL);
    _exit(0);  // not reached
  }
  ASSERT_EQ(waitpid(victim, &status, 0), victim);
  EXPECT_EQ(Outcome::from_wait_status(status), Outcome::killed(SIGKILL));
}

TEST(OutcomeTest, AccessorsThrowInTheWrongState) {
  EXPECT_THROW(Outcome::exited(0).signal(), std::logic_error);
  EXPECT_THROW(Outcome::killed(SIGKILL).exit_code(), std::logic_error);
  EXPECT_NO_THROW(Outcome::exited(0).exit_code());
  EXPECT_NO_THROW(Outcome::killed(SIGKILL).signal());
}

TEST(OutcomeTest, Equality) {
  EXPECT_EQ(Outcome::exited(1), Outcome::exited(1));
  EXPECT_NE(Outcome::exited(1), Outcome::exited(2));
  EXPECT_NE(Outcome::exited(9), Outcome::killed(9));
  EXPECT_NE(Outcome::killed(9), Outcome::killed(15));
}

TEST(OutcomeTest, ToString) {
  EXPECT_EQ(Outcome::exited(0).to_string(), "exited(0)");
  EXPECT_EQ(Outcome::exited(3).to_string(), "exited(3)");
  EXPECT_EQ(Outcome::killed(SIGKILL).to_string(), "killed(SIGKILL)");
  EXPECT_EQ(Outcome::killed(SIGSEGV, true).to_string(), "killed(SIGSEGV, core)");
  EXPECT_EQ(Outcome::killed(42).to_string(), "killed(SIG42)");
}

// ---------------------------------------------------------------- signals

TEST(Signals, SignalName) {
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGSEGV), "SIGSEGV");
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(42), "SIG42");
  EXPECT_EQ(signal_name(0), "SIG0");
}

TEST(Signals, ParseSignalForms) {
  EXPECT_EQ(parse_signal("SIGKILL"), SIGKILL);
  EXPECT_EQ(parse_signal("KILL"), SIGKILL);
  EXPECT_EQ(parse_signal("9"), SIGKILL);
  EXPECT_EQ(parse_signal("sigterm"), SIGTERM);
  EXPECT_EQ(parse_signal("term"), SIGTERM);
  EXPECT_EQ(parse_signal("SigSegv"), SIGSEGV);
  EXPECT_EQ(parse_signal("15"), SIGTERM);
  EXPECT_EQ(parse_signal("64"), 64);
}

TEST(Signals, ParseSignalRejects) {
  for (const char* bad :
       {"", "SIG", "FOO", "SIGFOO", "0", "65", "-9", "9x", " 9", "SIG 9", "SIGKILLX"}) {
    EXPECT_EQ(parse_signal(bad), std::nullopt) << "\"" << bad << "\"";
  }
}

TEST(Signals, NameAndParseRoundTrip) {
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGABRT, SIGKILL, SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE,
                  SIGALRM, SIGTERM, SIGCHLD, SIGCONT, SIGSTOP}) {
    EXPECT_EQ(parse_signal(signal_name(sig)), sig) << signal_name(sig);
  }
}

// Bug: the numeric branch uses atoi(), which does not detect overflow; glibc's
// atoi is (int)strtol(), so 2^32 + 9 wraps to 9 and is accepted as SIGKILL.
TEST(Signals, ParseSignalRejectsOverflowingNumbers) {
  EXPECT_EQ(parse_signal("4294967305"), std::nullopt);  // 2^32 + 9
}

// ---------------------------------------------------------------- enums

TEST(EnumStrings, Role) {
  EXPECT_EQ(to_string(Role::Launcher), "launcher");
  EXPECT_EQ(to_string(Role::Rank), "rank");
  EXPECT_EQ(to_string(Role::Worker), "worker");
  EXPECT_EQ(to_string(Role::Helper), "helper");
  EXPECT_EQ(to_string(Role::Unknown), "unknown");
  for (Role r : {Role::Launcher, Role::Rank, Role::Worker, Role::Helper, Role::Unknown})
    EXPECT_EQ(parse_role(to_string(r)), r);
  EXPECT_EQ(parse_role("Launcher"), std::nullopt);
  EXPECT_EQ(parse_role(""), std::nullopt);
  EXPECT_EQ(parse_role("master"), std::nullopt);
}

TEST(EnumStrings, CheckStatus) {
  EXPECT_EQ(to_string(CheckStatus::Pass), "pass");
  EXPECT_EQ(to_string(CheckStatus::Fail), "fail");
  EXPECT_EQ(to_string(CheckStatus::Skipped), "skipped");
  EXPECT_EQ(to_string(CheckStatus::Error), "error");
}

TEST(EnumStrings, Verdict) {
  EXPECT_EQ(to_string(Verdict::Pass), "pass");
  EXPECT_EQ(to_string(Verdict::Fail), "fail");
  EXPECT_EQ(to_string(Verdict::XFail), "xfail");
  EXPECT_EQ(to_string(Verdict::XPass), "xpass");
  EXPECT_EQ(to_string(Verdict::Error), "error");
}

TEST(EnumStrings, TestOutcomeIsPytestsWordAndBack) {
  for (auto o : {TestOutcome::NotEnded, TestOutcome::Passed, TestOutcome::Failed,
                 TestOutcome::Skipped, TestOutcome::Error})
    EXPECT_EQ(parse_test_outcome(to_string(o)), o) << to_string(o);
  EXPECT_EQ(to_string(TestOutcome::NotEnded), "");
  EXPECT_EQ(to_string(TestOutcome::Error), "error");
  EXPECT_FALSE(parse_test_outcome("xfailed"));
  EXPECT_FALSE(parse_test_outcome("Passed"));
}

TEST(ExpectedChecks, TextAndBack) {
  const ExpectedChecks pass;
  const ExpectedChecks bug{.pass = false, .fail = {"all_exited", "no_orphans"}, .may_fail = {}};
  const ExpectedChecks race{.pass = true, .fail = {}, .may_fail = {"shm_clean"}};
  const ExpectedChecks both{.pass = false, .fail = {"tmp_clean"}, .may_fail = {"a", "b"}};
  EXPECT_EQ(to_string(pass), "pass");
  EXPECT_EQ(to_string(bug), "fail: all_exited no_orphans");
  EXPECT_EQ(to_string(race), "pass; may fail: shm_clean");
  EXPECT_EQ(to_string(both), "fail: tmp_clean; may fail: a b");
  for (const ExpectedChecks& e : {pass, bug, race, both})
    EXPECT_EQ(parse_expected_checks(to_string(e)), e) << to_string(e);
  // Names split on commas as well.
  EXPECT_EQ(parse_expected_checks("fail: all_exited, no_orphans"), bug);
}

TEST(ExpectedChecks, AnyOtherTextIsRefused) {
  for (const char* text : {"", "Pass", "fail", "fail:", "fail:  ", "xfail: a", "pass;",
                           "pass; may fail:", "pass; fail: a", "fail: a; may_fail: b",
                           "fail: a; may fail: b; may fail: c", "fail: a fail: b"})
    EXPECT_EQ(parse_expected_checks(text), std::nullopt) << text;
}

TEST(EnumStrings, TimingsOrigin) {
  EXPECT_EQ(to_string(TimingsOrigin::None), "");
  EXPECT_EQ(to_string(TimingsOrigin::FirstFault), "first fault");
  EXPECT_EQ(to_string(TimingsOrigin::TopExit), "top process exit");
  EXPECT_EQ(to_string(TimingsOrigin::Deadline), "deadline");
}

}  // namespace
}  // namespace aftermath
