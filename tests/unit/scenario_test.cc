#include "harness/scenario/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/check/check_params.h"
#include "harness/check/registry.h"
#include "harness/check/scenario_load.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/parse_helpers.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;

#ifdef AFTERMATH_TEST_DATA
const std::string kDataDir = std::string(AFTERMATH_TEST_DATA) + "/scenarios";
#else
// The stand-alone build runs from the repository root with a relative __FILE__.
const std::string kDataDir =
    (fs::path(__FILE__).parent_path().parent_path() / "data" / "scenarios").string();
#endif

using aftermath::testing::TempDir;

const JobExitParams& JE(const CheckConfig& c) { return check_params<JobExitParams>(c); }

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// No file-system lookups: structural tests stay independent of the machine.
ParseContext NoCheck() {
  ParseContext ctx;
  ctx.file = "t.yaml";
  ctx.scenario_dir = "/base";
  ctx.check_command = false;
  return ctx;
}

// A valid scenario; `extra` is appended starting at line 5.
std::string Base(const std::string& extra = "") {
  return "name: t\n"
         "description: d\n"
         "job:\n"
         "  command: /bin/true\n" +
         extra;
}

auto Diag(const std::string& field, int line, int column) {
  return AllOf(Field("field", &Diagnostic::field, field), Field("line", &Diagnostic::line, line),
               Field("column", &Diagnostic::column, column));
}

auto Diag(const std::string& field, int line, int column, const std::string& message_part) {
  return AllOf(Diag(field, line, column),
               Field("message", &Diagnostic::message, HasSubstr(message_part)));
}

std::string Dump(const ParseResult& r) {
  std::string out;
  for (const Diagnostic& d : diagnostics_of(r)) out += "  " + d.to_string() + "\n";
  return out;
}

// Parses text that must be valid.
Scenario ParseOk(const std::string& text, const ParseContext& ctx = NoCheck()) {
  ParseResult r = parse_scenario(text, ctx);
  EXPECT_THAT(diagnostics_of(r), IsEmpty()) << Dump(r);
  EXPECT_TRUE(r.ok());
  return r.value_or(Scenario{});
}

// Parses text that must be invalid; returns its diagnostics.
std::vector<Diagnostic> ParseBad(const std::string& text, const ParseContext& ctx = NoCheck()) {
  ParseResult r = parse_scenario(text, ctx);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(diagnostics_of(r), Not(IsEmpty()));
  return diagnostics_of(r);
}

// --- check lists and Diagnostic ----------------------------------------------

TEST(ScenarioChecks, KnownChecksInReportOrder) {
  EXPECT_THAT(known_checks(),
              ElementsAre("all_exited", "no_orphans", "no_zombies", "shm_clean", "tmp_clean",
                          "job_exit", "no_hang", "data_partition", "collectives_matched",
                          "memory_growth", "device_memory_released", "no_device_holders",
                          "device_alloc_probe", "tests_clean", "died_with_agent"));
  EXPECT_THAT(default_checks(),
              ElementsAre("all_exited", "no_orphans", "no_zombies", "shm_clean", "tmp_clean",
                          "job_exit", "no_hang", "device_memory_released", "no_device_holders",
                          "device_alloc_probe", "tests_clean"));
}

TEST(Diagnostic, ToStringFull) {
  Diagnostic d{"s.yaml", 3, 7, "job.command", "missing required field"};
  EXPECT_EQ(d.to_string(), "s.yaml:3:7: job.command: missing required field");
}

TEST(Diagnostic, ToStringWithoutLineOrField) {
  EXPECT_EQ((Diagnostic{"s.yaml", 0, 0, "name", "bad"}).to_string(), "s.yaml: name: bad");
  EXPECT_EQ((Diagnostic{"s.yaml", 2, 1, "", "syntax"}).to_string(), "s.yaml:2:1: syntax");
  EXPECT_EQ((Diagnostic{"s.yaml", 0, 0, "", "cannot read"}).to_string(), "s.yaml: cannot read");
}

TEST(Diagnostic, DiagnosticsCarryTheFileName) {
  auto diags = ParseBad("name: t\n");
  for (const Diagnostic& d : diags) EXPECT_EQ(d.file, "t.yaml");
  EXPECT_EQ(diags[0].to_string(), "t.yaml:1:1: description: missing required field");
}

// --- valid scenarios ----------------------------------------------------------

// A tab in the indentation is named at its line, not left to yaml-cpp's
// "illegal map value".
TEST(ParseScenario, ATabIndentIsNamedWithItsLine) {
  auto d = ParseBad("name: t\njob:\n\tcommand: /bin/true\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].line, 3);
  EXPECT_THAT(d[0].message, HasSubstr("a tab indents this line; YAML indents with spaces only"));
  // A tab inside a value is not indentation, and spaces-only files are untouched.
  auto other = ParseBad("name: t\njob: [\n");
  EXPECT_THAT(other[0].message, Not(HasSubstr("tab")));
}

TEST(ParseScenario, FullScenarioEveryField) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  fs::create_directory(dir.path() + "/work");
  ParseContext ctx;
  ctx.file = dir.path() + "/full.yaml";
  ctx.vars["BIN"] = "/opt/bin";
  const std::string text = R"yaml(name: orphan-outlives-parent
description: A child outlives its parent.
tags: [e2e, orphan]
requires: [root, pidns, python-torch]
job:
  command: [sh, -c, "exit 3"]
  args: [--lifetime, 5s, "${BIN}/x", 7]
  env: {KEY: value, N: 12, DIR: "${SCENARIO_DIR}"}
  cwd: work
timeouts:
  job: 20s
  settle: 0s
  teardown: 1500ms
grace: 500ms
sample_interval: 5ms
seed: 42
checks:
  no_orphans: {grace: 300ms}
  shm_clean: false
  no_hang: true
  job_exit: {code: 3, output_regex: "^done \\d+$"}
expect:
  fail: [no_orphans, all_exited]
  reason: "reproduces pytorch#5736"
)yaml";
  Scenario s = ParseOk(text, ctx);

  EXPECT_EQ(s.name, "orphan-outlives-parent");
  EXPECT_EQ(s.description, "A child outlives its parent.");
  EXPECT_EQ(s.file, ctx.file);
  EXPECT_EQ(s.text, text);
  EXPECT_THAT(s.tags, ElementsAre("e2e", "orphan"));
  EXPECT_THAT(s.requires_, ElementsAre("root", "pidns", "python-torch"));

  ASSERT_THAT(s.job.argv, SizeIs(7));
  EXPECT_TRUE(fs::path(s.job.argv[0]).is_absolute()) << s.job.argv[0];
  EXPECT_EQ(fs::path(s.job.argv[0]).filename(), "sh");
  EXPECT_THAT(std::vector<std::string>(s.job.argv.begin() + 1, s.job.argv.end()),
              ElementsAre("-c", "exit 3", "--lifetime", "5s", "/opt/bin/x", "7"));
  EXPECT_THAT(s.job.env, ElementsAre(std::pair<const std::string, std::string>("DIR", dir.path()),
                                     std::pair<const std::string, std::string>("KEY", "value"),
                                     std::pair<const std::string, std::string>("N", "12")));
  EXPECT_EQ(s.job.cwd, dir.path() + "/work");

  EXPECT_EQ(s.timeouts.job, 20 * kSecond);
  EXPECT_EQ(s.timeouts.settle, 0);
  EXPECT_EQ(s.timeouts.teardown, 1'500'000'000);
  EXPECT_EQ(s.grace, 500'000'000);
  EXPECT_EQ(s.sample_interval, 5'000'000);
  ASSERT_TRUE(s.seed.has_value());
  EXPECT_EQ(*s.seed, 42u);

  ASSERT_THAT(s.checks, SizeIs(known_checks().size()));
  EXPECT_FALSE(s.checks["data_partition"].enabled);  // opt-in
  EXPECT_FALSE(s.checks["collectives_matched"].enabled);
  for (const std::string& name : known_checks()) ASSERT_EQ(s.checks.count(name), 1u) << name;
  EXPECT_TRUE(s.checks["all_exited"].enabled);
  EXPECT_FALSE(s.checks["all_exited"].grace.has_value());
  EXPECT_TRUE(s.checks["no_orphans"].enabled);
  EXPECT_EQ(s.checks["no_orphans"].grace, 300 * kMilli);
  EXPECT_TRUE(s.checks["no_zombies"].enabled);
  EXPECT_FALSE(s.checks["shm_clean"].enabled);
  EXPECT_TRUE(s.checks["no_hang"].enabled);
  const CheckConfig& je = s.checks["job_exit"];
  EXPECT_TRUE(je.enabled);
  EXPECT_EQ(JE(je).code, 3);
  EXPECT_FALSE(JE(je).signal.has_value());
  EXPECT_EQ(JE(je).output_regex, "^done \\d+$");

  EXPECT_FALSE(s.expect.expect_pass);
  EXPECT_THAT(s.expect.failing, ElementsAre("all_exited", "no_orphans"));
  EXPECT_EQ(s.expect.reason, "reproduces pytorch#5736");
}

TEST(ParseScenario, DefaultsWhenOptionalFieldsAreAbsent) {
  Scenario s = ParseOk(Base());
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.description, "d");
  EXPECT_THAT(s.tags, IsEmpty());
  EXPECT_THAT(s.requires_, IsEmpty());
  EXPECT_THAT(s.job.argv, ElementsAre("/bin/true"));
  EXPECT_THAT(s.job.env, IsEmpty());
  EXPECT_EQ(s.job.cwd, "");
  EXPECT_EQ(s.timeouts.job, 60 * kSecond);
  EXPECT_EQ(s.timeouts.settle, 10 * kSecond);  // PyTorch's own cleanup takes ~7 s
  EXPECT_TRUE(s.role_grace.empty());           // no_orphans gives helpers helper_grace() itself
  EXPECT_EQ(s.timeouts.teardown, 2 * kSecond);
  EXPECT_EQ(s.grace, 1 * kSecond);
  EXPECT_EQ(s.sample_interval, 20 * kMilli);
  EXPECT_FALSE(s.seed.has_value());
  ASSERT_THAT(s.checks, SizeIs(known_checks().size()));
  for (const auto& [name, cfg] : s.checks) {
    bool by_default = std::count(default_checks().begin(), default_checks().end(), name) > 0;
    EXPECT_EQ(cfg.enabled, by_default) << name;
    EXPECT_FALSE(cfg.grace.has_value()) << name;
    EXPECT_FALSE(JE(cfg).code.has_value()) << name;
    EXPECT_FALSE(JE(cfg).signal.has_value()) << name;
    EXPECT_FALSE(JE(cfg).output_regex.has_value()) << name;
  }
  EXPECT_TRUE(s.expect.expect_pass);
  EXPECT_THAT(s.expect.failing, IsEmpty());
  EXPECT_EQ(s.expect.reason, "");
}

TEST(ParseScenario, PartialTimeoutsKeepOtherDefaults) {
  Scenario s = ParseOk(Base("timeouts: {settle: 250ms}\n"));
  EXPECT_EQ(s.timeouts.job, 60 * kSecond);
  EXPECT_EQ(s.timeouts.settle, 250 * kMilli);
  EXPECT_EQ(s.timeouts.teardown, 2 * kSecond);
}

TEST(ParseScenario, ExpectPassExplicit) {
  Scenario s = ParseOk(Base("expect: pass\n"));
  EXPECT_TRUE(s.expect.expect_pass);
  EXPECT_THAT(s.expect.failing, IsEmpty());
}

TEST(ParseScenario, StringCommandPlusArgs) {
  Scenario s = ParseOk(Base("  args: [a, 'b c', 3]\n"));
  EXPECT_THAT(s.job.argv, ElementsAre("/bin/true", "a", "b c", "3"));
}

TEST(ParseScenario, ChecksEnabledWithEmptyParamsOrTrue) {
  Scenario s = ParseOk(Base("checks:\n  all_exited: {}\n  no_zombies: true\n  no_hang: false\n"));
  EXPECT_TRUE(s.checks["all_exited"].enabled);
  EXPECT_TRUE(s.checks["no_zombies"].enabled);
  EXPECT_FALSE(s.checks["no_hang"].enabled);
}

TEST(ParseScenario, JobExitSignalByNameShortNameAndNumber) {
  EXPECT_EQ(JE(ParseOk(Base("checks: {job_exit: {signal: SIGKILL}}\n")).checks["job_exit"]).signal,
            9);
  EXPECT_EQ(JE(ParseOk(Base("checks: {job_exit: {signal: TERM}}\n")).checks["job_exit"]).signal,
            15);
  EXPECT_EQ(JE(ParseOk(Base("checks: {job_exit: {signal: 6}}\n")).checks["job_exit"]).signal, 6);
  Scenario s = ParseOk(Base("checks: {job_exit: {signal: SIGSEGV, grace: 0s}}\n"));
  EXPECT_FALSE(JE(s.checks["job_exit"]).code.has_value());
  EXPECT_EQ(s.checks["job_exit"].grace, 0);
}

TEST(ParseScenario, JobExitCodeBounds) {
  EXPECT_EQ(JE(ParseOk(Base("checks: {job_exit: {code: 0}}\n")).checks["job_exit"]).code, 0);
  EXPECT_EQ(JE(ParseOk(Base("checks: {job_exit: {code: 255}}\n")).checks["job_exit"]).code, 255);
  EXPECT_THAT(ParseBad(Base("checks: {job_exit: {code: 256}}\n")),
              ElementsAre(Diag("checks.job_exit.code", 5, 27, "0..255")));
  EXPECT_THAT(ParseBad(Base("checks: {job_exit: {code: -1}}\n")),
              ElementsAre(Diag("checks.job_exit.code", 5, 27, "0..255")));
  EXPECT_THAT(ParseBad(Base("checks: {job_exit: {code: zero}}\n")),
              ElementsAre(Diag("checks.job_exit.code", 5, 27, "integer")));
}

TEST(ParseScenario, MemoryGrowthParamsAreValidatedAndKept) {
  Scenario s =
      ParseOk(Base("checks: {memory_growth: {max_kb_per_step: 128.5, field: rss_kb, skip_steps: 2, "
                   "min_points: 5, role: worker, grace: 1s}}\n"));
  const CheckConfig& c = s.checks["memory_growth"];
  EXPECT_TRUE(c.enabled);
  const auto& p = check_params<MemoryGrowthParams>(c);
  EXPECT_EQ(p.max_kb_per_step, 128.5);
  EXPECT_EQ(p.field, "rss_kb");
  EXPECT_EQ(p.skip_steps, 2);
  EXPECT_EQ(p.min_points, 5);
  EXPECT_EQ(p.role, Role::Worker);
  EXPECT_EQ(c.grace, 1 * kSecond);
  // Opt-in: off unless named.
  EXPECT_FALSE(ParseOk(Base()).checks["memory_growth"].enabled);
  // Each bad value is one diagnostic at its own key.
  EXPECT_THAT(ParseBad(Base("checks: {memory_growth: {max_kb_per_step: -3}}\n")),
              ElementsAre(Diag("checks.memory_growth.max_kb_per_step", 5, 43, "positive number")));
  EXPECT_THAT(ParseBad(Base("checks: {memory_growth: {role: gpu}}\n")),
              ElementsAre(Diag("checks.memory_growth.role", 5, 32, "launcher, rank, worker")));
  EXPECT_THAT(ParseBad(Base("checks: {memory_growth: {min_points: 1}}\n")),
              ElementsAre(Diag("checks.memory_growth.min_points", 5, 38, ">= 2")));
  EXPECT_THAT(ParseBad(Base("checks: {memory_growth: {slope: 3}}\n")),
              ElementsAre(Diag("checks.memory_growth.slope", 5, 26, "unknown key 'slope'")));
}

TEST(ParseScenario, DeviceMemoryParams) {
  Scenario s =
      ParseOk(Base("checks: {device_memory_released: {tolerance: 256MiB, deadline: 3s}}\n"));
  const CheckConfig& c = s.checks["device_memory_released"];
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(check_params<DeviceMemoryParams>(c).tolerance_bytes, 256ll << 20);
  EXPECT_EQ(check_params<DeviceMemoryParams>(c).deadline, 3 * kSecond);
  // On by default, with no params.
  EXPECT_TRUE(ParseOk(Base()).checks["device_memory_released"].enabled);
  EXPECT_THAT(ParseBad(Base("checks: {device_memory_released: {tolerance: lots}}\n")),
              ElementsAre(Diag("checks.device_memory_released.tolerance", 5, 46, "64MiB")));
  EXPECT_THAT(ParseBad(Base("checks: {device_memory_released: {deadline: 0s}}\n")),
              ElementsAre(Diag("checks.device_memory_released.deadline", 5, 45, "> 0")));
}

TEST(ParseScenario, SeedBounds) {
  EXPECT_EQ(ParseOk(Base("seed: 0\n")).seed, 0u);
  EXPECT_EQ(ParseOk(Base("seed: 18446744073709551615\n")).seed, 18446744073709551615u);
  EXPECT_THAT(ParseBad(Base("seed: -1\n")), ElementsAre(Diag("seed", 5, 7, "non-negative")));
  EXPECT_THAT(ParseBad(Base("seed: 1.5\n")), ElementsAre(Diag("seed", 5, 7, "non-negative")));
  EXPECT_THAT(ParseBad(Base("seed: 18446744073709551616\n")), ElementsAre(Diag("seed", 5, 7)));
  EXPECT_THAT(ParseBad(Base("seed: [1]\n")), ElementsAre(Diag("seed", 5, 7)));
}

TEST(ParseScenario, NameCharacterSet) {
  EXPECT_EQ(ParseOk("name: 0a.b_c-d\ndescription: d\njob: {command: x}\n").name, "0a.b_c-d");
  for (const char* bad : {"Upper", "-lead", ".lead", "has space", "sl/ash", "''"}) {
    EXPECT_THAT(ParseBad(std::string("name: ") + bad + "\ndescription: d\njob: {command: x}\n"),
                ElementsAre(Diag("name", 1, 7, "invalid name")))
        << bad;
  }
}

TEST(ParseScenario, EnvValuesAreStrings) {
  Scenario s = ParseOk(Base("  env:\n    A: 1\n    B: true\n    C: ''\n    D: 1.5\n"));
  EXPECT_EQ(s.job.env["A"], "1");
  EXPECT_EQ(s.job.env["B"], "true");
  EXPECT_EQ(s.job.env["C"], "");
  EXPECT_EQ(s.job.env["D"], "1.5");
}

TEST(ParseScenario, CwdIsMadeAbsoluteAgainstScenarioDir) {
  EXPECT_EQ(ParseOk(Base("  cwd: sub/../dir\n")).job.cwd, "/base/dir");
  EXPECT_EQ(ParseOk(Base("  cwd: /abs/path/\n")).job.cwd, "/abs/path");
  EXPECT_EQ(ParseOk(Base("  cwd: .\n")).job.cwd, "/base");
}

// A scenario file's job starts with every signal at its default unless the
// file asks for what aftermath's caller left ignored.
TEST(ParseScenario, JobSignalsAreDefaultUnlessInherited) {
  EXPECT_FALSE(ParseOk(Base()).job.inherit_ignored_signals);
  EXPECT_FALSE(ParseOk(Base("  signals: default\n")).job.inherit_ignored_signals);
  EXPECT_TRUE(ParseOk(Base("  signals: inherited\n")).job.inherit_ignored_signals);
  EXPECT_THAT(ParseBad(Base("  signals: ignored\n")),
              ElementsAre(Diag("job.signals", 5, 12, "unknown value 'ignored'")));
  EXPECT_THAT(ParseBad(Base("  signals: [SIGINT]\n")),
              ElementsAre(Diag("job.signals", 5, 12, "a string")));
}

TEST(ParseScenario, ParsesAllDurationUnits) {
  EXPECT_EQ(ParseOk(Base("grace: 250us\n")).grace, 250'000);
  EXPECT_EQ(ParseOk(Base("grace: 1.5s\n")).grace, 1'500'000'000);
  EXPECT_EQ(ParseOk(Base("grace: 2m\n")).grace, 120 * kSecond);
  EXPECT_EQ(ParseOk(Base("grace: 0s\n")).grace, 0);
  EXPECT_EQ(ParseOk(Base("timeouts: {job: 1h}\n")).timeouts.job, 3600 * kSecond);
  EXPECT_EQ(ParseOk(Base("sample_interval: 1ms\n")).sample_interval, kMilli);
  EXPECT_EQ(ParseOk(Base("sample_interval: 10s\n")).sample_interval, 10 * kSecond);
}

// --- required fields and structure ---------------------------------------------

TEST(ParseScenario, MissingRequiredFieldsPointAtTheMap) {
  EXPECT_THAT(ParseBad("tags: [a]\n"),
              ElementsAre(Diag("name", 1, 1, "missing required field"),
                          Diag("description", 1, 1, "missing required field"),
                          Diag("job", 1, 1, "missing required field")));
  // The job map starts at its first key.
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob:\n  args: [a]\n"),
              ElementsAre(Diag("job.command", 4, 3, "missing required field")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {}\n"),
              ElementsAre(Diag("job.command", 3, 6, "missing required field")));
  EXPECT_THAT(ParseBad(Base("expect: {reason: x}\n")),
              ElementsAre(Diag("expect.fail", 5, 9, "missing required field")));
}

TEST(ParseScenario, MissingFieldMessageFormat) {
  auto diags = ParseBad("name: t\njob: {command: x}\n");
  ASSERT_THAT(diags, SizeIs(1));
  EXPECT_EQ(diags[0].to_string(), "t.yaml:1:1: description: missing required field");
}

TEST(ParseScenario, EmptyFile) {
  for (const char* text : {"", "\n\n", "# only a comment\n", "---\n"}) {
    auto diags = ParseBad(text);
    EXPECT_THAT(diags, SizeIs(1)) << text;
    EXPECT_THAT(diags[0].message, HasSubstr("empty")) << text;
  }
}

TEST(ParseScenario, TopLevelNotAMap) {
  EXPECT_THAT(ParseBad("- a\n- b\n"), ElementsAre(Diag("", 1, 1, "must be a map")));
  EXPECT_THAT(ParseBad("just text\n"), ElementsAre(Diag("", 1, 1, "must be a map")));
}

TEST(ParseScenario, YamlSyntaxErrorIsOneDiagnosticWithParserPosition) {
  auto diags = ParseBad("name: t\ndescription: d\njob:\n  command: [a, b\nseed: 1\n");
  ASSERT_THAT(diags, SizeIs(1));
  EXPECT_EQ(diags[0].field, "");
  EXPECT_EQ(diags[0].line, 5);
  EXPECT_GT(diags[0].column, 0);

  // An indentation error: the parser's own 0-based mark (line 1, column 1) made 1-based.
  EXPECT_THAT(ParseBad("a: b\n c: d\n"), ElementsAre(Diag("", 2, 3, "illegal map value")));
  EXPECT_THAT(ParseBad(Base("seed: *nowhere\n")), ElementsAre(Diag("", 5, 7, "anchor")));
}

TEST(ParseScenario, SecondDocumentRejected) {
  EXPECT_THAT(ParseBad(Base("---\nname: other\n")),
              ElementsAre(Diag("", 6, 1, "one YAML document")));
  // A trailing document separator is harmless.
  ParseOk(Base("---\n"));
}

TEST(ParseScenario, DuplicateKey) {
  EXPECT_THAT(ParseBad(Base("seed: 1\nseed: 2\n")),
              ElementsAre(Diag("seed", 6, 1, "duplicate key 'seed' (first at line 5)")));
}

TEST(ParseScenario, NonStringKey) {
  EXPECT_THAT(ParseBad(Base("? [a, b]\n: 1\n")),
              ElementsAre(Diag("", 5, 3, "keys must be strings")));
}

// --- unknown keys at every level -------------------------------------------------

TEST(ParseScenario, UnknownTopLevelKey) {
  auto diags = ParseBad(Base("colour: red\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("colour", 5, 1, "unknown key 'colour'")));
  EXPECT_THAT(diags[0].message,
              HasSubstr("accepted: name, description, tags, requires, job, "
                        "timeouts, grace, sample_interval, seed, checks, expect"));
}

TEST(ParseScenario, UnknownJobKey) {
  auto diags = ParseBad(Base("  comand: x\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("job.comand", 5, 3, "unknown key 'comand'")));
  EXPECT_THAT(diags[0].message, HasSubstr("accepted: command, args, env, cwd, signals"));
}

TEST(ParseScenario, UnknownTimeoutsKey) {
  auto diags = ParseBad(Base("timeouts:\n  job: 1s\n  hang: 2s\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("timeouts.hang", 7, 3, "unknown key 'hang'")));
  EXPECT_THAT(diags[0].message, HasSubstr("accepted: job, settle, teardown"));
}

TEST(ParseScenario, UnknownCheckParam) {
  auto diags = ParseBad(Base("checks:\n  no_orphans: {grace: 1s, code: 3}\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("checks.no_orphans.code", 6, 27, "unknown key 'code'")));
  EXPECT_THAT(diags[0].message, HasSubstr("accepted: grace)"));

  diags = ParseBad(Base("checks:\n  job_exit:\n    exit_code: 3\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("checks.job_exit.exit_code", 7, 5, "unknown key")));
  EXPECT_THAT(diags[0].message, HasSubstr("accepted: grace, code, signal, output_regex"));
}

TEST(ParseScenario, UnknownExpectKey) {
  auto diags = ParseBad(Base("expect:\n  fail: [no_hang]\n  because: x\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("expect.because", 7, 3, "accepted: fail, may_fail, reason")));
}

TEST(ParseScenario, UnknownCheckName) {
  auto diags = ParseBad(Base("checks:\n  no_leaks: true\n"));
  EXPECT_THAT(diags, ElementsAre(Diag("checks.no_leaks", 6, 3, "unknown check 'no_leaks'")));
  EXPECT_THAT(diags[0].message, HasSubstr("all_exited, no_orphans, no_zombies, shm_clean, "
                                          "tmp_clean, job_exit, no_hang"));
}

// --- wrong types -----------------------------------------------------------------

TEST(ParseScenario, WrongTypes) {
  EXPECT_THAT(ParseBad("name: t\ndescription: {a: b}\njob: {command: x}\n"),
              ElementsAre(Diag("description", 2, 14, "expected a string, got a map")));
  EXPECT_THAT(ParseBad("name: [t]\ndescription: d\njob: {command: x}\n"),
              ElementsAre(Diag("name", 1, 7, "expected a string, got a list")));
  EXPECT_THAT(ParseBad(Base("tags: e2e\n")),
              ElementsAre(Diag("tags", 5, 7, "expected a list, got 'e2e'")));
  EXPECT_THAT(ParseBad(Base("tags: [a, {b: c}]\n")),
              ElementsAre(Diag("tags[1]", 5, 11, "expected a string")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: run-it\n"),
              ElementsAre(Diag("job", 3, 6, "expected a map")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob:\n  command: {a: b}\n"),
              ElementsAre(Diag("job.command", 4, 12, "a string or a list")));
  EXPECT_THAT(ParseBad(Base("  args: --fast\n")), ElementsAre(Diag("job.args", 5, 9, "a list")));
  EXPECT_THAT(ParseBad(Base("  args: [a, [b]]\n")),
              ElementsAre(Diag("job.args[1]", 5, 13, "a string")));
  EXPECT_THAT(ParseBad(Base("  env: [A=1]\n")), ElementsAre(Diag("job.env", 5, 8, "a map")));
  EXPECT_THAT(ParseBad(Base("  env: {A: [1]}\n")), ElementsAre(Diag("job.env.A", 5, 12, "string")));
  EXPECT_THAT(ParseBad(Base("  cwd: [a]\n")), ElementsAre(Diag("job.cwd", 5, 8, "a string")));
  EXPECT_THAT(ParseBad(Base("timeouts: 5s\n")), ElementsAre(Diag("timeouts", 5, 11, "a map")));
  EXPECT_THAT(ParseBad(Base("checks: [no_hang]\n")), ElementsAre(Diag("checks", 5, 9, "a map")));
  EXPECT_THAT(ParseBad(Base("checks: {no_hang: maybe}\n")),
              ElementsAre(Diag("checks.no_hang", 5, 19, "true, false or a map")));
  EXPECT_THAT(ParseBad(Base("checks: {no_hang: [1]}\n")),
              ElementsAre(Diag("checks.no_hang", 5, 19, "true, false or a map")));
  EXPECT_THAT(ParseBad(Base("expect: [no_hang]\n")), ElementsAre(Diag("expect", 5, 9, "'pass'")));
  EXPECT_THAT(ParseBad(Base("expect: {fail: no_hang}\n")),
              ElementsAre(Diag("expect.fail", 5, 16, "a list")));
  EXPECT_THAT(ParseBad(Base("expect: {fail: [no_hang], reason: [x]}\n")),
              ElementsAre(Diag("expect.reason", 5, 35, "a string")));
  EXPECT_THAT(ParseBad(Base("requires: root\n")), ElementsAre(Diag("requires", 5, 11, "a list")));
}

TEST(ParseScenario, NullValueReportedAtItsKey) {
  // An empty value's own position is the next token; the key is the useful place.
  EXPECT_THAT(ParseBad("name: t\ndescription:\njob: {command: x}\n"),
              ElementsAre(Diag("description", 2, 1, "expected a string, got nothing")));
  EXPECT_THAT(ParseBad(Base("  env:\n    A:\n")),
              ElementsAre(Diag("job.env.A", 6, 5, "write \"\" for an empty one")));
  EXPECT_THAT(ParseBad(Base("grace:\n")), ElementsAre(Diag("grace", 5, 1, "duration")));
}

TEST(ParseScenario, UnknownRequirement) {
  EXPECT_THAT(ParseBad(Base("requires: [root, quantum]\n")),
              ElementsAre(Diag("requires[1]", 5, 18, "unknown requirement 'quantum'")));
}

TEST(ParseScenario, EmptyCommand) {
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: ''}\n"),
              ElementsAre(Diag("job.command", 3, 16, "must not be empty")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: []}\n"),
              ElementsAre(Diag("job.command", 3, 16, "must not be empty")));
}

TEST(ParseScenario, InvalidEnvName) {
  EXPECT_THAT(ParseBad(Base("  env: {'A=B': x}\n")),
              ElementsAre(Diag("job.env.A=B", 5, 9, "invalid environment variable name")));
}

// --- durations -------------------------------------------------------------------

TEST(ParseScenario, BareNumberDurationNeedsAUnit) {
  EXPECT_THAT(ParseBad(Base("grace: 5\n")),
              ElementsAre(Diag("grace", 5, 8, "needs a unit, e.g. 5s")));
  EXPECT_THAT(ParseBad(Base("timeouts:\n  job: 20\n")),
              ElementsAre(Diag("timeouts.job", 6, 8, "needs a unit, e.g. 5s")));
  EXPECT_THAT(ParseBad(Base("sample_interval: 0.5\n")),
              ElementsAre(Diag("sample_interval", 5, 18, "needs a unit")));
  EXPECT_THAT(ParseBad(Base("checks: {no_zombies: {grace: 3}}\n")),
              ElementsAre(Diag("checks.no_zombies.grace", 5, 30, "needs a unit")));
}

TEST(ParseScenario, InvalidDurations) {
  EXPECT_THAT(ParseBad(Base("grace: soon\n")),
              ElementsAre(Diag("grace", 5, 8, "invalid duration")));
  EXPECT_THAT(ParseBad(Base("grace: 5 parsecs\n")),
              ElementsAre(Diag("grace", 5, 8, "invalid duration")));
  EXPECT_THAT(ParseBad(Base("grace: -1s\n")), ElementsAre(Diag("grace", 5, 8, "negative")));
  EXPECT_THAT(ParseBad(Base("grace: {a: 1}\n")),
              ElementsAre(Diag("grace.a", 5, 9, "unknown role 'a'")));
  EXPECT_THAT(ParseBad(Base("grace: {helper: 1}\n")),
              ElementsAre(Diag("grace.helper", 5, 17, "bare number '1' needs a unit")));
  EXPECT_THAT(ParseBad(Base("grace: [1s]\n")), ElementsAre(Diag("grace", 5, 8, "a duration")));
}

TEST(ParseScenario, GraceByRole) {
  auto sc = ParseOk(Base("grace: {default: 2s, helper: 3s, worker: 500ms}\n"));
  EXPECT_EQ(sc.grace, 2 * kSecond);
  EXPECT_EQ(sc.role_grace.at(Role::Helper), 3 * kSecond);
  EXPECT_EQ(sc.role_grace.at(Role::Worker), 500 * kMilli);
  auto chk = ParseOk(
      Base("checks:\n  no_orphans: {grace: {helper: 7s}}\n  no_zombies: {launcher_poll: 2s}\n"
           "  no_hang: {stall: 4s}\n"));
  EXPECT_EQ(chk.checks.at("no_orphans").role_grace.at(Role::Helper), 7 * kSecond);
  EXPECT_EQ(check_params<NoZombiesParams>(chk).launcher_poll, 2 * kSecond);
  EXPECT_EQ(check_params<NoHangParams>(chk).stall, 4 * kSecond);
  EXPECT_THAT(ParseBad(Base("checks:\n  no_hang: {stall: 0s}\n")),
              ElementsAre(Diag("checks.no_hang.stall", 6, 20, "must be > 0")));
  EXPECT_THAT(
      ParseBad(
          Base("faults:\n  - {action: SIGKILL, target: all, at: {after: 1s}, optional: maybe}\n")),
      ElementsAre(Diag("faults[0].optional", 6, 63, "true or false")));
}

TEST(ParseGraceText, DurationOrRoles) {
  auto one = parse_grace_text("500ms");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->all, 500 * kMilli);
  auto roles = parse_grace_text("{default: 1s, helper: 3s}");
  ASSERT_TRUE(roles);
  EXPECT_EQ(roles->all, kSecond);
  EXPECT_EQ(roles->by_role.at(Role::Helper), 3 * kSecond);
  auto bad = parse_grace_text("{helpr: 3s}");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().what.find("unknown role 'helpr'"), std::string::npos);
  EXPECT_FALSE(parse_grace_text("{helper: 3}"));
  EXPECT_FALSE(parse_grace_text("soon"));
}

TEST(ParseScenario, DurationRanges) {
  EXPECT_THAT(ParseBad(Base("timeouts: {job: 0s}\n")),
              ElementsAre(Diag("timeouts.job", 5, 17, "must be > 0")));
  EXPECT_THAT(ParseBad(Base("timeouts: {teardown: 0ms}\n")),
              ElementsAre(Diag("timeouts.teardown", 5, 22, "must be > 0")));
  EXPECT_THAT(ParseBad(Base("sample_interval: 999us\n")),
              ElementsAre(Diag("sample_interval", 5, 18, "between 1ms and 10s")));
  EXPECT_THAT(ParseBad(Base("sample_interval: 11s\n")),
              ElementsAre(Diag("sample_interval", 5, 18, "between 1ms and 10s")));
}

// --- variables -------------------------------------------------------------------

TEST(ParseScenario, VariablesFromContextEnvironmentAndScenarioDir) {
  ScopedEnv env("AFTERMATH_SCENARIO_TEST_VAR", "from-env");
  ParseContext ctx = NoCheck();
  ctx.vars["AFTERMATH_BIN"] = "/build/bin";
  Scenario s = ParseOk(R"yaml(name: t
description: d
job:
  command: ${AFTERMATH_BIN}/tc_orphan
  args: ["${AFTERMATH_SCENARIO_TEST_VAR}", "x${SCENARIO_DIR}y", "$HOME", "cost: $5"]
  env: {V: "${AFTERMATH_BIN}:${AFTERMATH_BIN}"}
  cwd: ${SCENARIO_DIR}/data
)yaml",
                       ctx);
  // Without check_command the command is kept as expanded, unresolved.
  EXPECT_THAT(s.job.argv,
              ElementsAre("/build/bin/tc_orphan", "from-env", "x/basey", "$HOME", "cost: $5"));
  EXPECT_EQ(s.job.env["V"], "/build/bin:/build/bin");
  EXPECT_EQ(s.job.cwd, "/base/data");
}

TEST(ParseScenario, ContextVarsWinOverEnvironmentAndScenarioDir) {
  ScopedEnv env("AFTERMATH_SCENARIO_TEST_VAR", "from-env");
  ParseContext ctx = NoCheck();
  ctx.vars["AFTERMATH_SCENARIO_TEST_VAR"] = "from-ctx";
  ctx.vars["SCENARIO_DIR"] = "/elsewhere";
  Scenario s =
      ParseOk(Base("  args: ['${AFTERMATH_SCENARIO_TEST_VAR}', '${SCENARIO_DIR}']\n"), ctx);
  EXPECT_THAT(s.job.argv, ElementsAre("/bin/true", "from-ctx", "/elsewhere"));
}

TEST(ParseScenario, UnknownVariable) {
  ScopedEnv env("AFTERMATH_NO_SUCH_VAR", nullptr);
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob:\n  command: ${AFTERMATH_NO_SUCH_VAR}/x\n"),
              ElementsAre(Diag("job.command", 4, 12, "unknown variable ${AFTERMATH_NO_SUCH_VAR}")));
  EXPECT_THAT(ParseBad(Base("  args: [ok, '${AFTERMATH_NO_SUCH_VAR}']\n")),
              ElementsAre(Diag("job.args[1]", 5, 14, "AFTERMATH_NO_SUCH_VAR")));
  EXPECT_THAT(ParseBad(Base("  env: {K: '${AFTERMATH_NO_SUCH_VAR}'}\n")),
              ElementsAre(Diag("job.env.K", 5, 12, "AFTERMATH_NO_SUCH_VAR")));
  EXPECT_THAT(ParseBad(Base("  cwd: ${AFTERMATH_NO_SUCH_VAR}\n")),
              ElementsAre(Diag("job.cwd", 5, 8, "AFTERMATH_NO_SUCH_VAR")));
}

TEST(ParseScenario, EachUnknownVariableIsReported) {
  ScopedEnv a("AFTERMATH_NO_SUCH_A", nullptr);
  ScopedEnv b("AFTERMATH_NO_SUCH_B", nullptr);
  EXPECT_THAT(ParseBad(Base("  args: ['${AFTERMATH_NO_SUCH_A}-${AFTERMATH_NO_SUCH_B}']\n")),
              ElementsAre(Diag("job.args[0]", 5, 10, "AFTERMATH_NO_SUCH_A"),
                          Diag("job.args[0]", 5, 10, "AFTERMATH_NO_SUCH_B")));
}

TEST(ParseScenario, MalformedVariableReference) {
  EXPECT_THAT(ParseBad(Base("  args: ['${OOPS']\n")),
              ElementsAre(Diag("job.args[0]", 5, 10, "unterminated")));
  EXPECT_THAT(ParseBad(Base("  args: ['${}']\n")),
              ElementsAre(Diag("job.args[0]", 5, 10, "empty variable name")));
}

// --- command resolution ------------------------------------------------------------

TEST(ResolveCommand, PathLookupGivesAnAbsolutePath) {
  ParseContext ctx = NoCheck();
  ctx.check_command = true;
  Scenario s = ParseOk("name: t\ndescription: d\njob: {command: true}\n", ctx);
  ASSERT_THAT(s.job.argv, SizeIs(1));
  EXPECT_TRUE(fs::path(s.job.argv[0]).is_absolute()) << s.job.argv[0];
  EXPECT_EQ(fs::path(s.job.argv[0]).filename(), "true");
  EXPECT_EQ(::access(s.job.argv[0].c_str(), X_OK), 0);
}

TEST(ResolveCommand, PathLookupUsesThePathVariable) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.write("bin/my-tool", "#!/bin/sh\nexit 0\n", 0755);
  dir.write("bin2/my-tool", "#!/bin/sh\nexit 0\n", 0755);
  dir.write("first/my-tool", "not executable\n", 0644);
  ScopedEnv path("PATH",
                 (dir.path() + "/first:" + dir.path() + "/bin:" + dir.path() + "/bin2").c_str());
  ParseContext ctx = NoCheck();
  ctx.check_command = true;
  Scenario s = ParseOk("name: t\ndescription: d\njob: {command: [my-tool, x]}\n", ctx);
  EXPECT_THAT(s.job.argv, ElementsAre(dir.path() + "/bin/my-tool", "x"));
}

TEST(ResolveCommand, NotFoundInPath) {
  ParseContext ctx = NoCheck();
  ctx.check_command = true;
  EXPECT_THAT(
      ParseBad("name: t\ndescription: d\njob:\n  command: aftermath-no-such-program-xyz\n", ctx),
      ElementsAre(
          Diag("job.command", 4, 12, "command 'aftermath-no-such-program-xyz' not found in PATH")));
  // A list command reports its first element.
  EXPECT_THAT(
      ParseBad("name: t\ndescription: d\njob:\n  command: [aftermath-no-such-xyz, a]\n", ctx),
      ElementsAre(Diag("job.command[0]", 4, 13, "not found in PATH")));
}

TEST(ResolveCommand, StringCommandWithSpacesGetsAHint) {
  ParseContext ctx = NoCheck();
  ctx.check_command = true;
  auto diags = ParseBad("name: t\ndescription: d\njob: {command: 'sleep 5'}\n", ctx);
  ASSERT_THAT(diags, SizeIs(1));
  EXPECT_THAT(diags[0].message, HasSubstr("job.args"));
}

TEST(ResolveCommand, RelativeCommandResolvedAgainstScenarioDir) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string script = dir.write("tools/run.sh", "#!/bin/sh\nexit 0\n", 0755);
  ParseContext ctx;
  ctx.file = dir.path() + "/scenario.yaml";  // scenario_dir defaults to its folder
  Scenario s = ParseOk("name: t\ndescription: d\njob: {command: tools/run.sh, args: [a]}\n", ctx);
  EXPECT_THAT(s.job.argv, ElementsAre(script, "a"));

  s = ParseOk("name: t\ndescription: d\njob: {command: ./tools/../tools/run.sh}\n", ctx);
  EXPECT_THAT(s.job.argv, ElementsAre(script));

  // An explicit scenario_dir wins over the file's folder.
  ParseContext other;
  other.file = "/nowhere/scenario.yaml";
  other.scenario_dir = dir.path() + "/tools";
  s = ParseOk("name: t\ndescription: d\njob: {command: ./run.sh}\n", other);
  EXPECT_THAT(s.job.argv, ElementsAre(script));
}

TEST(ResolveCommand, CommandFromScenarioDirVariable) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string script = dir.write("run.sh", "#!/bin/sh\nexit 0\n", 0700);
  ParseContext ctx;
  ctx.file = dir.path() + "/s.yaml";
  Scenario s = ParseOk("name: t\ndescription: d\njob: {command: '${SCENARIO_DIR}/run.sh'}\n", ctx);
  EXPECT_THAT(s.job.argv, ElementsAre(script));
}

TEST(ResolveCommand, MissingNotExecutableOrNotAFile) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.write("plain.txt", "data\n", 0644);
  fs::create_directory(dir.path() + "/adir");
  ParseContext ctx;
  ctx.file = dir.path() + "/s.yaml";
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: ./missing}\n", ctx),
              ElementsAre(Diag(
                  "job.command", 3, 16,
                  "command not found: " + dir.path() + "/missing: No such file or directory")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: ./plain.txt}\n", ctx),
              ElementsAre(Diag("job.command", 3, 16, "not executable")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: ./adir}\n", ctx),
              ElementsAre(Diag("job.command", 3, 16, "not a regular file")));
}

TEST(ResolveCommand, NotCheckedWithoutCheckCommand) {
  Scenario s =
      ParseOk("name: t\ndescription: d\njob: {command: [./no/such/thing, a], cwd: /no/such/dir}\n");
  EXPECT_THAT(s.job.argv, ElementsAre("./no/such/thing", "a"));
  EXPECT_EQ(s.job.cwd, "/no/such/dir");
}

TEST(ResolveCommand, CwdMustBeAnExistingDirectoryWhenChecked) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  dir.write("file", "x\n", 0644);
  fs::create_directory(dir.path() + "/sub");
  ParseContext ctx;
  ctx.file = dir.path() + "/s.yaml";
  EXPECT_EQ(ParseOk("name: t\ndescription: d\njob: {command: true, cwd: sub}\n", ctx).job.cwd,
            dir.path() + "/sub");
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: true, cwd: nope}\n", ctx),
              ElementsAre(Diag("job.cwd", 3, 27, "No such file or directory")));
  EXPECT_THAT(ParseBad("name: t\ndescription: d\njob: {command: true, cwd: file}\n", ctx),
              ElementsAre(Diag("job.cwd", 3, 27, "not a directory")));
}

TEST(ResolveCommand, ScenarioDirDefaultsToCurrentDirectory) {
  ParseContext ctx = NoCheck();
  ctx.file = "";
  ctx.scenario_dir = "";
  Scenario s = ParseOk(Base("  cwd: .\n  args: ['${SCENARIO_DIR}']\n"), ctx);
  std::string cwd = fs::current_path().string();
  EXPECT_EQ(s.job.cwd, cwd);
  EXPECT_THAT(s.job.argv, ElementsAre("/bin/true", cwd));
}

// --- job_exit ---------------------------------------------------------------------

TEST(ParseScenario, JobExitCodeAndSignalAreMutuallyExclusive) {
  EXPECT_THAT(ParseBad(Base("checks:\n  job_exit:\n    code: 1\n    signal: SIGKILL\n")),
              ElementsAre(Diag("checks.job_exit.signal", 8, 5, "mutually exclusive")));
}

TEST(ParseScenario, UnknownSignal) {
  EXPECT_THAT(ParseBad(Base("checks: {job_exit: {signal: SIGFOO}}\n")),
              ElementsAre(Diag("checks.job_exit.signal", 5, 29, "unknown signal 'SIGFOO'")));
  EXPECT_THAT(ParseBad(Base("checks: {job_exit: {signal: 65}}\n")),
              ElementsAre(Diag("checks.job_exit.signal", 5, 29, "unknown signal")));
}

TEST(ParseScenario, BadRegexRejected) {
  auto diags = ParseBad(Base("checks:\n  job_exit:\n    output_regex: 'a(b'\n"));
  EXPECT_THAT(diags,
              ElementsAre(Diag("checks.job_exit.output_regex", 7, 19, "invalid regex 'a(b'")));
}

// --- expect -----------------------------------------------------------------------

TEST(ParseScenario, ExpectFailUnknownCheck) {
  EXPECT_THAT(ParseBad(Base("expect:\n  fail: [no_orphans, no_leaks]\n")),
              ElementsAre(Diag("expect.fail[1]", 6, 22, "unknown check 'no_leaks'")));
}

TEST(ParseScenario, ExpectFailDisabledCheck) {
  // The order in the file does not matter: expect may come before checks.
  EXPECT_THAT(ParseBad(Base("expect:\n  fail: [shm_clean]\nchecks:\n  shm_clean: false\n")),
              ElementsAre(Diag("expect.fail[0]", 6, 10, "check 'shm_clean' is disabled")));
}

// Checks a known race fails in some runs only: alone (the scenario passes
// otherwise) or beside `fail`, never a check named in both.
TEST(ParseScenario, ExpectMayFail) {
  Scenario alone = ParseOk(Base("expect: {may_fail: [shm_clean], reason: a race}\n"));
  EXPECT_TRUE(alone.expect.expect_pass);
  EXPECT_THAT(alone.expect.may_fail, ElementsAre("shm_clean"));
  Scenario both = ParseOk(Base("expect: {fail: [tmp_clean], may_fail: [shm_clean, no_orphans]}\n"));
  EXPECT_FALSE(both.expect.expect_pass);
  EXPECT_THAT(both.expect.failing, ElementsAre("tmp_clean"));
  EXPECT_THAT(both.expect.may_fail, ElementsAre("no_orphans", "shm_clean"));
  EXPECT_THAT(ParseBad(Base("expect: {fail: [tmp_clean], may_fail: [tmp_clean]}\n")),
              ElementsAre(Diag("expect.may_fail[0]", 5, 40, "listed twice")));
  EXPECT_THAT(ParseBad(Base("expect: {may_fail: [no_leaks]}\n")),
              ElementsAre(Diag("expect.may_fail[0]", 5, 21, "unknown check 'no_leaks'")));
  EXPECT_THAT(ParseBad(Base("expect: {reason: x}\n")),
              ElementsAre(Diag("expect.fail", 5, 9, "missing required field")));
}

TEST(ParseScenario, ExpectFailMustBeNonEmptyAndDistinct) {
  EXPECT_THAT(ParseBad(Base("expect: {fail: []}\n")),
              ElementsAre(Diag("expect.fail", 5, 16, "at least one")));
  EXPECT_THAT(ParseBad(Base("expect: {fail: [no_hang, no_hang]}\n")),
              ElementsAre(Diag("expect.fail[1]", 5, 26, "listed twice")));
}

TEST(ParseScenario, ExpectScalarOtherThanPass) {
  EXPECT_THAT(ParseBad(Base("expect: fail\n")), ElementsAre(Diag("expect", 5, 9, "'pass'")));
}

// --- many errors at once ------------------------------------------------------------

TEST(ParseScenario, EveryErrorIsReportedInFileOrder) {
  ScopedEnv env("AFTERMATH_NO_SUCH_VAR", nullptr);
  const std::string text = R"yaml(name: Bad
description: d
tags: [ok, [nested]]
job:
  command: x
  args: ['${AFTERMATH_NO_SUCH_VAR}']
  shell: bash
timeouts:
  job: 5
  settle: -1s
grace: soon
checks:
  shm_clean: false
  job_exit: {code: 1, signal: 9, output_regex: '('}
expect:
  fail: [shm_clean, no_leaks]
  why: x
colour: red
)yaml";
  EXPECT_THAT(ParseBad(text),
              ElementsAre(Diag("name", 1, 7), Diag("tags[1]", 3, 12), Diag("job.args[0]", 6, 10),
                          Diag("job.shell", 7, 3), Diag("timeouts.job", 9, 8),
                          Diag("timeouts.settle", 10, 11), Diag("grace", 11, 8),
                          Diag("checks.job_exit.signal", 14, 23),
                          Diag("checks.job_exit.output_regex", 14, 48),
                          Diag("expect.fail[0]", 16, 10), Diag("expect.fail[1]", 16, 21),
                          Diag("expect.why", 17, 3), Diag("colour", 18, 1)));
}

TEST(ParseScenario, NeverThrowsOnOddInput) {
  const char* inputs[] = {"{",
                          "[",
                          "]]]",
                          "name: [",
                          "\t- a",
                          "? [a]: b",
                          "&a [*a]",
                          "!!binary x",
                          "name: !!int x",
                          "job: *x",
                          "%YAML 9.9\n---\na: b",
                          "\xff\xfe",
                          "a: |\n  b\n",
                          "- - - -",
                          "name: t\njob: {command: [[a]]}\n",
                          "job: {command: [~]}\n",
                          "checks: {job_exit: {code: ~, signal: ~, output_regex: ~}}\n",
                          "expect: {fail: [~, {a: b}]}\n",
                          "seed: ~\n",
                          "requires: [~]\n"};
  for (const char* text : inputs) {
    std::optional<ParseResult> r;
    EXPECT_NO_THROW(r.emplace(parse_scenario(text, NoCheck()))) << text;
    ASSERT_TRUE(r) << text;
    EXPECT_FALSE(r->ok()) << text;
    EXPECT_THAT(diagnostics_of(*r), Not(IsEmpty())) << text;
  }
}

// --- load_scenario -------------------------------------------------------------------

TEST(LoadScenario, MissingFileIsOneDiagnostic) {
  ParseResult r = load_scenario("/nonexistent/aftermath/scenario.yaml", ParseContext{});
  EXPECT_FALSE(r.ok());
  ASSERT_THAT(diagnostics_of(r), SizeIs(1));
  EXPECT_EQ(diagnostics_of(r)[0].file, "/nonexistent/aftermath/scenario.yaml");
  EXPECT_EQ(diagnostics_of(r)[0].line, 0);
  EXPECT_EQ(diagnostics_of(r)[0].message, "cannot read: No such file or directory");
  EXPECT_EQ(diagnostics_of(r)[0].to_string(),
            "/nonexistent/aftermath/scenario.yaml: cannot read: No such file or directory");
}

TEST(LoadScenario, DirectoryIsUnreadable) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  ParseResult r = load_scenario(dir.path(), ParseContext{});
  ASSERT_THAT(diagnostics_of(r), SizeIs(1));
  EXPECT_THAT(diagnostics_of(r)[0].message, StartsWith("cannot read: "));
}

TEST(LoadScenario, ReadsTheFileAndUsesItsFolder) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string script = dir.write("tc", "#!/bin/sh\nexit 0\n", 0755);
  const std::string text = "name: t\ndescription: d\njob: {command: ./tc}\n";
  std::string file = dir.write("s.yaml", text, 0644);
  ParseResult r = load_scenario(file, ParseContext{});
  ASSERT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r->file, file);
  EXPECT_EQ(r->text, text);
  EXPECT_THAT(r->job.argv, ElementsAre(script));

  // A caller-given file name is kept for diagnostics.
  ParseContext ctx;
  ctx.file = "shown.yaml";
  ctx.scenario_dir = dir.path();
  r = load_scenario(file, ctx);
  ASSERT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r->file, "shown.yaml");
}

TEST(LoadScenario, FullDataFile) {
  ParseContext ctx;
  ctx.check_command = false;
  ParseResult r = load_scenario(kDataDir + "/full.yaml", ctx);
  ASSERT_TRUE(r.ok()) << Dump(r);
  const Scenario& s = *r;
  std::string dir = fs::absolute(kDataDir).lexically_normal().string();
  EXPECT_EQ(s.name, "full-example_1.0");
  EXPECT_THAT(s.tags, ElementsAre("unit", "example"));
  EXPECT_THAT(s.requires_, ElementsAre("pidns"));
  EXPECT_THAT(s.job.argv, ElementsAre("sh", "-c", "exit 3", "--lifetime", "5s", dir + "/out"));
  EXPECT_EQ(s.job.env.at("MODE"), "fast");
  EXPECT_EQ(s.job.env.at("COUNT"), "4");
  EXPECT_EQ(s.job.cwd, dir);
  EXPECT_EQ(s.timeouts.job, 20 * kSecond);
  EXPECT_EQ(s.timeouts.settle, 0);
  EXPECT_EQ(s.timeouts.teardown, 1500 * kMilli);
  EXPECT_EQ(s.grace, 250 * kMilli);
  EXPECT_EQ(s.sample_interval, 5 * kMilli);
  EXPECT_EQ(s.seed, 42u);
  EXPECT_FALSE(s.checks.at("shm_clean").enabled);
  EXPECT_EQ(s.checks.at("no_orphans").grace, 300 * kMilli);
  EXPECT_EQ(JE(s.checks.at("job_exit")).code, 3);
  EXPECT_EQ(JE(s.checks.at("job_exit")).output_regex, "done \\d+");
  EXPECT_FALSE(s.expect.expect_pass);
  EXPECT_THAT(s.expect.failing, ElementsAre("job_exit", "no_orphans"));
  EXPECT_EQ(s.expect.reason, "reproduces an example bug");
}

TEST(LoadScenario, ManyErrorsDataFile) {
  ParseContext ctx;
  ctx.check_command = false;
  std::string file = kDataDir + "/many_errors.yaml";
  ParseResult r = load_scenario(file, ctx);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(diagnostics_of(r),
              ElementsAre(Diag("description", 2, 1, "missing required field"), Diag("name", 2, 7),
                          Diag("tags", 3, 7), Diag("job.command", 5, 12), Diag("job.colour", 6, 3),
                          Diag("timeouts.job", 8, 8, "needs a unit"), Diag("grace", 9, 8),
                          Diag("checks.no_such_check", 11, 3), Diag("expect.fail[1]", 13, 21)))
      << Dump(r);
  for (const Diagnostic& d : diagnostics_of(r)) EXPECT_EQ(d.file, file);
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// `torch:` states what differs by PyTorch release; the first range holding
// the job's torch applies, each check named there replacing the base's.
TEST(ScenarioTorch, TheFirstRangeHoldingTheJobsTorchGivesChecksAndExpectation) {
  Scenario s =
      ParseOk(Base("checks:\n"
                   "  job_exit: {code: 1, output_regex: 'Bus error'}\n"
                   "expect: {fail: [no_orphans], reason: old}\n"
                   "torch:\n"
                   "  '>=2.10':\n"
                   "    checks: {job_exit: {code: 1, output_regex: 'unable to allocate'}}\n"
                   "    expect: pass\n"
                   "  '>=2.2':\n"
                   "    expect: {fail: [tmp_clean], reason: killpg}\n"));
  ASSERT_EQ(s.torch_variants.size(), 2u);
  auto on = [&](const char* v) { return for_torch(s, parse_torch_version(v)); };
  Scenario old = on("1.13.0a0");
  EXPECT_EQ(old.torch_range, "");
  EXPECT_FALSE(old.expect.expect_pass);
  EXPECT_EQ(JE(old.checks.at("job_exit")).output_regex, "Bus error");
  Scenario mid = on("2.6.0");
  EXPECT_EQ(mid.torch_range, ">=2.2");
  EXPECT_THAT(mid.expect.failing, ElementsAre("tmp_clean"));
  EXPECT_EQ(JE(mid.checks.at("job_exit")).output_regex, "Bus error");  // the base's, not replaced
  Scenario now = on("2.13.0+cpu");
  EXPECT_EQ(now.torch_range, ">=2.10");
  EXPECT_TRUE(now.expect.expect_pass);
  EXPECT_EQ(JE(now.checks.at("job_exit")).output_regex, "unable to allocate");
  // No torch known: the base.
  EXPECT_EQ(for_torch(s, std::nullopt).torch_range, "");
}

TEST(ScenarioTorch, BadRangesAndEntriesAreReportedWithTheirPlace) {
  ParseResult r = parse_scenario(Base("torch:\n"
                                      "  '>=2.x': {expect: pass}\n"
                                      "  '<2.0': {expect: {fail: [no_such_check]}}\n"
                                      "  '2.1': {}\n"
                                      "  '2.2': {timeouts: {job: 1s}}\n"),
                                 NoCheck());
  EXPECT_THAT(diagnostics_of(r),
              ElementsAre(Diag("torch.>=2.x", 6, 3, "'2.x' is not a version"),
                          Diag("torch.<2.0.expect.fail[0]", 7, 28, "unknown check 'no_such_check'"),
                          Diag("torch.2.1", 8, 10, "says nothing"),
                          Diag("torch.2.2.timeouts", 9, 11, "unknown key 'timeouts'")))
      << Dump(r);
  ParseResult list = parse_scenario(Base("torch: [a]\n"), NoCheck());
  EXPECT_THAT(diagnostics_of(list), ElementsAre(Diag("torch", 5, 8, "a map of version ranges")))
      << Dump(list);
}

TEST(ScenarioTorch, PythonIsAVariableOfTheRun) {
  TempDir dir("aftermath-scenario-python");
  std::string py = dir.path() + "/python3";
  {
    std::ofstream(py) << "#!/bin/sh\n";
  }
  ::chmod(py.c_str(), 0755);
  ParseContext ctx;
  ctx.file = dir.path() + "/t.yaml";
  ctx.vars = {{"PYTHON", py}};
  Scenario s =
      ParseOk("name: t\ndescription: d\njob:\n  command: ${PYTHON}\n  args: ['-c', 'pass']\n", ctx);
  ASSERT_FALSE(s.job.argv.empty());
  EXPECT_EQ(s.job.argv[0], py);
}

}  // namespace
}  // namespace aftermath
