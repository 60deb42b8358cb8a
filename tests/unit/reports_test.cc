// Tests for the result.json and JUnit XML writers.
//
// Golden files: tests/data/golden/result.json and tests/data/golden/junit.xml
// hold the normalised output for the hand-made run below (pids, times, paths
// and timestamps replaced by "*", so only the shape and the stable content is
// pinned). After an intended change of either format, regenerate them with
//
//   AFTERMATH_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='Reports*Golden*'
//
// and review the diff: it is the format change that consumers will see.

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"
#include "reports/json.h"
#include "reports/junit.h"

#ifndef AFTERMATH_TEST_DATA
#error "AFTERMATH_TEST_DATA must be defined as the absolute path of tests/data"
#endif

namespace aftermath {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------
// A realistic run, built by hand.

constexpr Nanos ms(double v) { return static_cast<Nanos>(v * 1e6); }

// Real wall-clock time, so the golden comparison proves timestamps are
// normalised rather than accidentally stable.
std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ProcessHistory proc(int pid, int ppid, int depth, std::string comm, std::string cmdline, Role role,
                    Nanos started) {
  ProcessHistory p;
  p.pid = pid;
  p.first_ppid = ppid;
  p.last_ppid = ppid;
  p.depth = depth;
  p.comm = std::move(comm);
  p.cmdline = std::move(cmdline);
  p.role = role;
  p.started = started;
  return p;
}

// An expected failure that reproduced: the job leaves an orphaned worker and
// the scenario says "fail: no_orphans".
ScenarioResult orphan_scenario(const std::string& root) {
  ScenarioResult s;
  s.name = "orphan_reaper";
  s.file = "scenarios/orphan_reaper.yaml";
  s.description = "A launcher that exits before its worker: the worker is re-parented.";
  s.tags = {"orphans", "smoke"};
  s.scenario_text = "name: orphan_reaper\nexpect: \"fail: no_orphans\"\n";
  s.scenario_hash = "9f86d081884c7d65";
  s.seed = 42;
  s.expect = "fail: no_orphans";
  s.verdict = Verdict::XFail;
  s.verdict_reason = "expected failure reproduced: no_orphans";
  s.out_dir = root + "/orphan_reaper";
  s.stdout_path = s.out_dir + "/stdout.txt";
  s.stderr_path = s.out_dir + "/stderr.txt";
  s.repro = "aftermath run scenarios/orphan_reaper.yaml --seed 42 --out " + s.out_dir;
  s.started_at = now_iso8601();
  s.timings_origin = "top process exit";
  s.timings_ms = {{"job_ms", 1500.25},
                  {"to_all_exited_ms", std::nullopt},
                  {"to_shm_baseline_ms", 0.0},
                  {"total_ms", 2300.25}};

  CheckResult orphans;
  orphans.name = "no_orphans";
  orphans.status = CheckStatus::Fail;
  orphans.reason = "1 process outlived its parent: worker (pid 2003)";
  orphans.measured = {{"orphans", {{{"pid", 2003}, {"comm", "worker"}, {"orphaned_ms", 812.5}}}}};
  orphans.expected_to_fail = true;
  CheckResult exit_code;
  exit_code.name = "exit_code";
  exit_code.status = CheckStatus::Pass;
  exit_code.reason = "top process exited(0)";
  exit_code.measured = {{"outcome", "exited(0)"}};
  CheckResult gpu;
  gpu.name = "gpu_released";
  gpu.status = CheckStatus::Skipped;
  gpu.reason = "no GPU devices were probed";
  s.checks = {orphans, exit_code, gpu};

  Timeline& tl = s.timeline;
  tl.facts.top_pid = 2001;
  tl.facts.top_outcome = Outcome::exited(0);
  tl.facts.stdout_text = "launched 1 worker\n";
  tl.facts.stderr_text = "";
  tl.facts.containment = "pid-namespace";
  tl.add(obs::phase(0, "launch"));
  tl.add(obs::proc_start(ms(1.5), 2001, 2000, "launcher", "./launcher --workers 1", Role::Launcher,
                         0, 1000));
  tl.add(obs::phase(ms(2), "running"));
  tl.add(
      obs::proc_start(ms(10.25), 2003, 2001, "worker", "./worker --rank 0", Role::Worker, 1, 1001));
  tl.add(obs::proc_exit(ms(800), 2001, Outcome::exited(0)));
  tl.add(obs::proc_parent(ms(812.5), 2003, 1));
  tl.add(obs::proc_gone(ms(805), 2001));
  tl.add(obs::phase(ms(1500.25), "job_exited"));
  tl.add(obs::sample(ms(1600), 1, 0));
  tl.add(obs::note(ms(2300), "worker still alive at teardown"));
  tl.add(obs::phase(ms(2300.5), "done"));

  ProcessHistory launcher =
      proc(2001, 2000, 0, "launcher", "./launcher --workers 1", Role::Launcher, ms(1.5));
  launcher.exited_at = ms(800);
  launcher.gone_at = ms(805);
  launcher.outcome = Outcome::exited(0);
  launcher.is_top = true;
  ProcessHistory worker =
      proc(2003, 2001, 1, "worker", "./worker --rank 0", Role::Worker, ms(10.25));
  worker.last_ppid = 1;
  worker.orphaned_at = ms(812.5);
  s.processes = {launcher, worker};
  return s;
}

// A plain failure: a leaked /dev/shm entry, a check that could not run, and a
// run that broke (the supervisor lost the job), with a crash on stderr that
// carries a control byte and XML metacharacters.
ScenarioResult shm_scenario(const std::string& root) {
  ScenarioResult s;
  s.name = "shm_leak";
  s.file = "scenarios/shm_leak.yaml";
  s.description = "Ranks killed mid-run must not leave /dev/shm segments behind.";
  s.tags = {"shm"};
  s.scenario_text = "name: shm_leak\nexpect: pass\n";
  s.scenario_hash = "2c26b46b68ffc68f";
  s.seed = 7;
  s.expect = "pass";
  s.verdict = Verdict::Fail;
  s.verdict_reason = "shm_clean failed";
  s.error = "lost track of the job: waitid: ECHILD";
  s.out_dir = root + "/shm_leak";
  s.stdout_path = s.out_dir + "/stdout.txt";
  s.stderr_path = s.out_dir + "/stderr.txt";
  s.repro = "aftermath run scenarios/shm_leak.yaml --seed 7 --out " + s.out_dir;
  s.started_at = now_iso8601();
  s.timings_origin = "deadline";
  s.timings_ms = {{"job_ms", 5000.0}, {"to_shm_baseline_ms", std::nullopt}, {"total_ms", 6001.5}};

  CheckResult shm;
  shm.name = "shm_clean";
  shm.status = CheckStatus::Fail;
  shm.reason = "1 /dev/shm entry left behind: psm_leak (4096 bytes)";
  shm.measured = {{"leaked", {{{"name", "psm_leak"}, {"bytes", 4096}}}}, {"reclaimed", true}};
  CheckResult cleanup;
  cleanup.name = "cleanup_time";
  cleanup.status = CheckStatus::Error;
  cleanup.reason = "timeline ended before \"job_exited\" <phase>";
  s.checks = {shm, cleanup};

  Timeline& tl = s.timeline;
  tl.facts.top_pid = 3001;
  tl.facts.top_outcome = Outcome::killed(9);
  tl.facts.deadline_hit = true;
  tl.facts.stdout_text = "rank 0 ready\n";
  tl.facts.stderr_text = "rank 1: fatal\x01 error <&> \"quoted\" 'single'\nAborted\n";
  tl.facts.containment = "subreaper";
  tl.facts.containment_note = "unprivileged user namespaces are disabled";
  tl.add(obs::shm_add(0, "sem.baseline", 32, true));
  tl.add(obs::phase(0, "launch"));
  tl.add(obs::proc_start(ms(1), 3001, 3000, "mpirun", "mpirun -n 2 ./rank", Role::Launcher, 0, 50));
  tl.add(obs::proc_start(ms(3.5), 3002, 3001, "rank", "./rank", Role::Rank, 1, 51));
  tl.add(obs::shm_add(ms(4), "psm_leak", 1024));
  tl.add(obs::shm_resize(ms(4.5), "psm_leak", 4096));
  tl.add(obs::shm_add(ms(5), "sem.tmp", 32));
  tl.add(obs::proc_state(ms(900), 3002, 'Z'));
  tl.add(obs::phase(ms(5000), "deadline"));
  tl.add(obs::signal(ms(5000), 3001, 9, "deadline"));
  tl.add(obs::proc_exit(ms(5001), 3001, Outcome::killed(9)));
  tl.add(obs::proc_exit(ms(5002), 3002, std::nullopt));
  tl.add(obs::proc_gone(ms(5003), 3002));
  tl.add(obs::shm_remove(ms(5004), "sem.tmp"));
  tl.add(obs::sample(ms(5500), 0, 4096));
  tl.add(obs::shm_reclaim(ms(6000), "psm_leak", 4096));
  tl.add(obs::tmp_left(ms(6000.5), "/tmp/pymp-k2x9ab", 0, 1000, "pymp"));
  tl.add(obs::tmp_reclaim(ms(6000.5), "/tmp/pymp-k2x9ab", 0));
  tl.add(obs::phase(ms(6001.5), "done"));

  ProcessHistory top = proc(3001, 3000, 0, "mpirun", "mpirun -n 2 ./rank", Role::Launcher, ms(1));
  top.exited_at = ms(5001);
  top.outcome = Outcome::killed(9);
  top.is_top = true;
  ProcessHistory rank = proc(3002, 3001, 1, "rank", "./rank", Role::Rank, ms(3.5));
  rank.zombie_since = ms(900);
  rank.exited_at = ms(5002);
  rank.gone_at = ms(5003);
  s.processes = {top, rank};
  return s;
}

RunResult sample_run() {
  const std::string root = ::testing::TempDir() + "aftermath-reports-test";
  RunResult run;
  run.tool_version = "0.1.0";
  run.command_line = "aftermath run scenarios/ --out " + root;
  run.environment = {{"kernel", "6.1.0"}, {"glibc", "2.36"}, {"compiler", "g++ 12.2"}};
  run.scenarios = {orphan_scenario(root), shm_scenario(root)};
  return run;
}

// ---------------------------------------------------------------------------
// A tiny XML parser: enough of XML 1.0 to prove the writer's output is
// well-formed (balanced tags, quoted attributes, known entities, legal
// characters, one root) and to walk it. Throws std::runtime_error on anything
// a conforming parser would reject.

struct XmlNode {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<XmlNode> children;
  std::string text;  // character data directly inside this element, entities decoded

  std::vector<const XmlNode*> all(const std::string& n) const {
    std::vector<const XmlNode*> out;
    for (const auto& c : children)
      if (c.name == n) out.push_back(&c);
    return out;
  }
  const XmlNode* first(const std::string& n) const {
    auto v = all(n);
    return v.empty() ? nullptr : v.front();
  }
  std::string attr(const std::string& n) const {
    auto it = attrs.find(n);
    if (it == attrs.end()) throw std::runtime_error("<" + name + "> has no attribute " + n);
    return it->second;
  }
};

class XmlParser {
 public:
  explicit XmlParser(std::string_view doc) : s_(doc) {}

  XmlNode parse_document() {
    check_characters();
    if (s_.substr(0, 5) == "<?xml") {
      auto end = s_.find("?>");
      if (end == std::string_view::npos) fail("unterminated XML declaration");
      i_ = end + 2;
    }
    skip_misc();
    XmlNode root = parse_element();
    skip_misc();
    if (i_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("XML error at byte " + std::to_string(i_) + ": " + why);
  }

  // Every character must be a legal XML 1.0 Char, encoded as valid UTF-8.
  void check_characters() {
    for (std::size_t k = 0; k < s_.size();) {
      auto b = static_cast<unsigned char>(s_[k]);
      std::size_t n = b < 0x80             ? 1
                      : (b & 0xE0) == 0xC0 ? 2
                      : (b & 0xF0) == 0xE0 ? 3
                      : (b & 0xF8) == 0xF0 ? 4
                                           : 0;
      if (n == 0 || k + n > s_.size()) {
        i_ = k;
        fail("invalid UTF-8");
      }
      std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
      for (std::size_t j = 1; j < n; ++j) {
        auto c = static_cast<unsigned char>(s_[k + j]);
        if ((c & 0xC0) != 0x80) {
          i_ = k;
          fail("invalid UTF-8 continuation");
        }
        cp = (cp << 6) | (c & 0x3F);
      }
      bool ok = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (!ok) {
        i_ = k;
        fail("character not allowed in XML 1.0");
      }
      k += n;
    }
  }

  bool at(std::string_view p) const { return s_.substr(i_, p.size()) == p; }
  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (at("<!--")) {
        auto end = s_.find("-->", i_);
        if (end == std::string_view::npos) fail("unterminated comment");
        i_ = end + 3;
      } else {
        return;
      }
    }
  }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
           c == ':';
  }
  std::string parse_name() {
    std::size_t b = i_;
    if (i_ >= s_.size() || !(std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      fail("expected a name");
    while (i_ < s_.size() && name_char(s_[i_])) ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  // At '&': decodes one entity or character reference.
  std::string parse_reference() {
    auto end = s_.find(';', i_);
    if (end == std::string_view::npos) fail("unterminated reference");
    std::string ref(s_.substr(i_ + 1, end - i_ - 1));
    i_ = end + 1;
    static const std::map<std::string, std::string> kEntities = {
        {"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
    if (auto it = kEntities.find(ref); it != kEntities.end()) return it->second;
    if (ref.size() > 1 && ref[0] == '#') {
      long cp = ref[1] == 'x' ? std::strtol(ref.c_str() + 2, nullptr, 16)
                              : std::strtol(ref.c_str() + 1, nullptr, 10);
      if (cp == 0x9 || cp == 0xA || cp == 0xD) return std::string(1, static_cast<char>(cp));
      if (cp >= 0x20 && cp < 0x80) return std::string(1, static_cast<char>(cp));
      fail("character reference outside the range this checker decodes: " + ref);
    }
    fail("unknown entity &" + ref + ";");
  }
  std::string parse_attr_value() {
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\'')) fail("unquoted attribute value");
    char q = s_[i_++];
    std::string v;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '<') fail("'<' in an attribute value");
      if (s_[i_] == '&') {
        v += parse_reference();
      } else {
        v += s_[i_++];
      }
    }
    if (i_ >= s_.size()) fail("unterminated attribute value");
    ++i_;
    return v;
  }
  XmlNode parse_element() {
    if (!at("<")) fail("expected '<'");
    ++i_;
    XmlNode node;
    node.name = parse_name();
    for (;;) {
      std::size_t before = i_;
      skip_ws();
      if (at("/>")) {
        i_ += 2;
        return node;
      }
      if (at(">")) {
        ++i_;
        break;
      }
      if (i_ == before) fail("expected whitespace before an attribute");
      std::string an = parse_name();
      skip_ws();
      if (!at("=")) fail("expected '='");
      ++i_;
      skip_ws();
      if (!node.attrs.emplace(an, parse_attr_value()).second) fail("duplicate attribute " + an);
    }
    for (;;) {
      if (i_ >= s_.size()) fail("unterminated element <" + node.name + ">");
      if (at("</")) {
        i_ += 2;
        if (parse_name() != node.name) fail("mismatched end tag for <" + node.name + ">");
        skip_ws();
        if (!at(">")) fail("expected '>'");
        ++i_;
        return node;
      }
      if (at("<!--")) {
        skip_misc();
      } else if (at("<![CDATA[")) {
        auto end = s_.find("]]>", i_);
        if (end == std::string_view::npos) fail("unterminated CDATA");
        node.text += s_.substr(i_ + 9, end - i_ - 9);
        i_ = end + 3;
      } else if (at("<")) {
        node.children.push_back(parse_element());
      } else if (at("&")) {
        node.text += parse_reference();
      } else {
        if (at("]]>")) fail("']]>' in character data");
        node.text += s_[i_++];
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

XmlNode parse_xml(const std::string& doc) { return XmlParser(doc).parse_document(); }

const XmlNode& suite_named(const XmlNode& root, const std::string& name) {
  for (const auto* s : root.all("testsuite"))
    if (s->attr("name") == name) return *s;
  throw std::runtime_error("no testsuite " + name);
}

const XmlNode& case_named(const XmlNode& suite, const std::string& name) {
  for (const auto* c : suite.all("testcase"))
    if (c->attr("name") == name) return *c;
  throw std::runtime_error("no testcase " + name);
}

// ---------------------------------------------------------------------------
// Golden files.

std::string golden_path(const std::string& name) {
  return std::string(AFTERMATH_TEST_DATA) + "/golden/" + name;
}

bool updating_golden() {
  const char* v = std::getenv("AFTERMATH_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void compare_or_update(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (updating_golden()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  const std::string expected = read_file(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; run with AFTERMATH_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, expected) << "differs from " << path
                              << " (intended? rerun with AFTERMATH_UPDATE_GOLDEN=1)";
}

bool volatile_key(const std::string& key) {
  static const std::set<std::string> kKeys = {"pid",     "ppid",        "last_ppid",   "started_at",
                                              "out_dir", "stdout_path", "stderr_path", "time",
                                              "repro",   "command_line"};
  return kKeys.count(key) > 0 || (key.size() >= 3 && key.compare(key.size() - 3, 3, "_ms") == 0);
}

// Replaces pids, times and paths with "*". Nulls stay null: whether a time
// was reached at all is part of the format under test.
void normalise_json(json& j) {
  if (j.is_array()) {
    for (auto& e : j) normalise_json(e);
  } else if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (value.is_structured()) {
        normalise_json(value);
      } else if (!value.is_null() && volatile_key(key)) {
        value = "*";
      }
    }
  }
}

std::string normalise_xml(std::string xml) {
  xml = std::regex_replace(xml, std::regex(R"re( time="[^"]*")re"), R"( time="*")");
  xml = std::regex_replace(xml, std::regex(R"re( timestamp="[^"]*")re"), R"( timestamp="*")");
  xml = std::regex_replace(
      xml, std::regex(R"re(<property name="(repro|out_dir|timing\.[^"]*)" value="[^"]*"/>)re"),
      R"(<property name="$1" value="*"/>)");
  return xml;
}

// ---------------------------------------------------------------------------
// result.json

TEST(ReportsJsonGolden, MatchesGoldenFile) {
  json j = json::parse(write_json(sample_run()));
  normalise_json(j);
  compare_or_update("result.json", j.dump(2) + "\n");
}

TEST(ReportsJson, RoundTripsThroughParse) {
  const RunResult run = sample_run();
  const std::string text = write_json(run);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  json parsed;
  ASSERT_NO_THROW(parsed = json::parse(text));
  EXPECT_EQ(parsed, to_json(run));
}

TEST(ReportsJson, TopLevelShapeAndSummary) {
  const json j = to_json(sample_run());
  EXPECT_EQ(j["schema"], "aftermath/result");
  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(j["tool_version"], "0.1.0");
  EXPECT_EQ(j["environment"]["kernel"], "6.1.0");
  EXPECT_EQ(
      j["summary"],
      json({{"scenarios", 2},
            {"pass", 0},
            {"fail", 1},
            {"xfail", 1},
            {"xpass", 0},
            {"error", 0},
            {"skipped", 0}}));
  ASSERT_EQ(j["scenarios"].size(), 2u);
}

TEST(ReportsJson, ClosedTypesAreWrittenByName) {
  const json j = to_json(sample_run());
  const std::set<std::string> verdicts = {"pass", "fail", "xfail", "xpass", "error", "skipped"};
  const std::set<std::string> statuses = {"pass", "fail", "skipped", "error"};
  const std::set<std::string> roles = {"launcher", "rank", "worker", "helper", "unknown"};
  for (const auto& s : j["scenarios"]) {
    EXPECT_TRUE(verdicts.count(s["verdict"].get<std::string>())) << s["verdict"];
    for (const auto& c : s["checks"])
      EXPECT_TRUE(statuses.count(c["status"].get<std::string>())) << c["status"];
    for (const auto& p : s["processes"])
      EXPECT_TRUE(roles.count(p["role"].get<std::string>())) << p["role"];
  }
  const json& xfail = j["scenarios"][0];
  const json& fail = j["scenarios"][1];
  EXPECT_EQ(xfail["verdict"], "xfail");
  EXPECT_EQ(fail["verdict"], "fail");
  EXPECT_EQ(xfail["checks"][0]["status"], "fail");
  EXPECT_EQ(xfail["checks"][0]["expected_to_fail"], true);
  EXPECT_EQ(xfail["checks"][2]["status"], "skipped");
  EXPECT_EQ(fail["checks"][1]["status"], "error");

  EXPECT_EQ(xfail["top"]["outcome"],
            json({{"kind", "exited"}, {"code", 0}, {"text", "exited(0)"}}));
  EXPECT_EQ(fail["top"]["outcome"], json({{"kind", "killed"},
                                          {"signal", "SIGKILL"},
                                          {"signo", 9},
                                          {"core_dumped", false},
                                          {"text", "killed(SIGKILL)"}}));
  EXPECT_EQ(to_json(Outcome::killed(11, true))["text"], "killed(SIGSEGV, core)");
}

TEST(ReportsJson, ScenarioFields) {
  const json j = to_json(sample_run());
  const json& xfail = j["scenarios"][0];
  const json& fail = j["scenarios"][1];
  // "error" is present only when the run itself failed.
  EXPECT_FALSE(xfail.contains("error"));
  EXPECT_EQ(fail["error"], "lost track of the job: waitid: ECHILD");
  EXPECT_EQ(xfail["scenario"]["hash"], "9f86d081884c7d65");
  EXPECT_EQ(xfail["seed"], 42);
  EXPECT_EQ(fail["containment"],
            json({{"mode", "subreaper"},
                  {"note", "unprivileged user namespaces are disabled"},
                  {"shm", ""}}));
  EXPECT_EQ(fail["top"]["pid"], 3001);
  EXPECT_EQ(fail["top"]["deadline_hit"], true);
  EXPECT_EQ(fail["faults"], json::array());
  EXPECT_EQ(xfail["checks"][0]["measured"]["orphans"][0]["comm"], "worker");

  // Unreached timings are null, not absent and not zero.
  EXPECT_TRUE(xfail["timings_ms"]["to_all_exited_ms"].is_null());
  EXPECT_EQ(xfail["timings_ms"]["to_shm_baseline_ms"], 0.0);
  EXPECT_EQ(xfail["timings_ms"]["total_ms"], 2300.25);

  const json& worker = xfail["processes"][1];
  EXPECT_EQ(worker["ppid"], 2001);
  EXPECT_EQ(worker["last_ppid"], 1);
  EXPECT_EQ(worker["orphaned_ms"], 812.5);
  EXPECT_TRUE(worker["exited_ms"].is_null());
  EXPECT_TRUE(worker["outcome"].is_null());
  EXPECT_EQ(worker["top"], false);
  EXPECT_EQ(xfail["processes"][0]["top"], true);
  EXPECT_EQ(fail["processes"][1]["zombie_since_ms"], 900.0);
}

TEST(ReportsJson, TimelineEntriesCarryOnlyTheirKindsFields) {
  const json j = to_json(sample_run());
  std::map<std::string, json> first_of_kind;
  for (const auto& s : j["scenarios"])
    for (const auto& e : s["timeline"]) first_of_kind.emplace(e["kind"].get<std::string>(), e);
  const std::map<std::string, std::set<std::string>> expected_keys = {
      {"phase", {"name"}},
      {"proc_start", {"pid", "ppid", "comm", "cmdline", "role", "depth", "start_ticks"}},
      {"proc_parent", {"pid", "ppid"}},
      {"proc_state", {"pid", "state"}},
      {"proc_exit", {"pid", "outcome"}},
      {"proc_gone", {"pid"}},
      {"shm_add", {"name", "bytes", "baseline"}},
      {"shm_resize", {"name", "bytes"}},
      {"shm_remove", {"name"}},
      {"shm_reclaim", {"name", "bytes"}},
      {"tmp_left", {"path", "bytes", "owner", "residue", "held_outside_by"}},
      {"tmp_reclaim", {"path", "bytes"}},
      {"signal", {"pid", "signal", "signo", "why"}},
      {"sample", {"procs", "shm_bytes"}},
      {"note", {"text"}},
  };
  for (const auto& [kind, keys] : expected_keys) {
    ASSERT_TRUE(first_of_kind.count(kind)) << "sample run lacks a " << kind << " entry";
    std::set<std::string> got;
    for (const auto& [k, v] : first_of_kind[kind].items()) got.insert(k);
    std::set<std::string> want = keys;
    want.insert({"t_ms", "kind"});
    EXPECT_EQ(got, want) << kind;
  }
  EXPECT_EQ(first_of_kind["proc_state"]["state"], "Z");
  EXPECT_EQ(first_of_kind["signal"]["signal"], "SIGKILL");
  EXPECT_EQ(first_of_kind["signal"]["why"], "deadline");
  EXPECT_EQ(first_of_kind["proc_start"]["comm"], "launcher");
  EXPECT_EQ(first_of_kind["proc_start"]["role"], "launcher");
  EXPECT_EQ(first_of_kind["proc_start"]["t_ms"], 1.5);
  EXPECT_EQ(first_of_kind["sample"]["procs"], 1);
  EXPECT_EQ(first_of_kind["shm_add"]["baseline"], true);

  const json& killed_exit = j["scenarios"][1]["timeline"][10];
  ASSERT_EQ(killed_exit["kind"], "proc_exit");
  EXPECT_EQ(killed_exit["outcome"]["signal"], "SIGKILL");
  EXPECT_TRUE(j["scenarios"][1]["timeline"][11]["outcome"].is_null());
}

TEST(ReportsJson, StderrTailIsBoundedAndBadBytesDoNotThrow) {
  RunResult run = sample_run();
  // 3-byte characters, so a 2000-byte cut lands inside one.
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "\xE2\x82\xAC";  // U+20AC
  run.scenarios[1].timeline.facts.stderr_text = "\xff\xfe junk " + big;
  const json j = to_json(run);
  const std::string tail = j["scenarios"][1]["top"]["stderr_tail"];
  EXPECT_LE(tail.size(), kStderrTailBytes);
  EXPECT_GE(tail.size(), kStderrTailBytes - 3);
  EXPECT_NE(static_cast<unsigned char>(tail[0]) & 0xC0, 0x80) << "cut inside a character";

  run.scenarios[1].timeline.facts.stderr_text = "bad \xff\xfe bytes\x01";
  std::string text;
  ASSERT_NO_THROW(text = write_json(run));
  EXPECT_NO_THROW(json::parse(text));
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << "control byte escaped, not dropped";
}

TEST(ReportsJson, Utf8Tail) {
  EXPECT_EQ(utf8_tail("short", 10), "short");
  EXPECT_EQ(utf8_tail("abcdef", 3), "def");
  EXPECT_EQ(utf8_tail("a\xC3\xA9", 1), "");  // never half of "é"
  EXPECT_EQ(utf8_tail("a\xC3\xA9", 2), "\xC3\xA9");
}

// ---------------------------------------------------------------------------
// JUnit XML

TEST(ReportsJunitGolden, MatchesGoldenFile) {
  compare_or_update("junit.xml", normalise_xml(write_junit(sample_run())));
}

TEST(ReportsJunit, IsWellFormed) {
  const std::string xml = write_junit(sample_run());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  XmlNode root;
  ASSERT_NO_THROW(root = parse_xml(xml));
  EXPECT_EQ(root.name, "testsuites");
  EXPECT_EQ(root.attr("name"), "aftermath");
  EXPECT_EQ(root.all("testsuite").size(), 2u);
}

TEST(ReportsJunit, TheCheckerRejectsMalformedXml) {
  EXPECT_THROW(parse_xml("<a><b></a></b>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a x=\"1\" x=\"2\"/>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a>&bogus;</a>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a>x & y</a>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a>\x01</a>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a>\xff</a>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a v=\"<\"/>"), std::runtime_error);
  EXPECT_THROW(parse_xml("<a/><b/>"), std::runtime_error);
  EXPECT_NO_THROW(parse_xml("<?xml version=\"1.0\"?>\n<a v='&lt;&#10;'>t&amp;<b/></a>\n"));
}

TEST(ReportsJunit, CountsAgreeWithChildren) {
  const XmlNode root = parse_xml(write_junit(sample_run()));
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto* suite : root.all("testsuite")) {
    int t = 0, f = 0, e = 0, s = 0;
    for (const auto* tc : suite->all("testcase")) {
      ++t;
      f += static_cast<int>(tc->all("failure").size());
      e += static_cast<int>(tc->all("error").size());
      s += static_cast<int>(tc->all("skipped").size());
      EXPECT_LE(tc->all("failure").size() + tc->all("error").size() + tc->all("skipped").size(),
                1u);
      EXPECT_EQ(tc->attr("classname"), "aftermath." + suite->attr("name"));
    }
    EXPECT_EQ(suite->attr("tests"), std::to_string(t)) << suite->attr("name");
    EXPECT_EQ(suite->attr("failures"), std::to_string(f)) << suite->attr("name");
    EXPECT_EQ(suite->attr("errors"), std::to_string(e)) << suite->attr("name");
    EXPECT_EQ(suite->attr("skipped"), std::to_string(s)) << suite->attr("name");
    tests += t, failures += f, errors += e, skipped += s;
  }
  EXPECT_EQ(root.attr("tests"), std::to_string(tests));
  EXPECT_EQ(root.attr("failures"), std::to_string(failures));
  EXPECT_EQ(root.attr("errors"), std::to_string(errors));
  EXPECT_EQ(root.attr("skipped"), std::to_string(skipped));
  // The sample run: 3 + 3 testcases; one failure (shm_clean), two errors
  // (cleanup_time, run), one skipped (gpu_released).
  EXPECT_EQ(tests, 6);
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(errors, 2);
  EXPECT_EQ(skipped, 1);
}

TEST(ReportsJunit, ChecksMapToTestcases) {
  const XmlNode root = parse_xml(write_junit(sample_run()));
  const XmlNode& xfail = suite_named(root, "orphan_reaper");
  const XmlNode& fail = suite_named(root, "shm_leak");

  // The reproduced expected failure is green, with a note for humans.
  const XmlNode& orphans = case_named(xfail, "no_orphans");
  EXPECT_EQ(orphans.first("failure"), nullptr);
  ASSERT_NE(orphans.first("system-out"), nullptr);
  EXPECT_EQ(orphans.first("system-out")->text,
            "expected failure reproduced: 1 process outlived its parent: worker (pid 2003)");
  ASSERT_NE(orphans.first("properties"), nullptr);
  const XmlNode* p = orphans.first("properties")->first("property");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->attr("name"), "expected_failure");
  EXPECT_EQ(p->attr("value"), "reproduced");

  EXPECT_TRUE(case_named(xfail, "exit_code").children.empty());
  const XmlNode* skip = case_named(xfail, "gpu_released").first("skipped");
  ASSERT_NE(skip, nullptr);
  EXPECT_EQ(skip->attr("message"), "no GPU devices were probed");

  const XmlNode* failure = case_named(fail, "shm_clean").first("failure");
  ASSERT_NE(failure, nullptr);
  EXPECT_EQ(failure->attr("type"), "fail");
  EXPECT_EQ(failure->attr("message"), "1 /dev/shm entry left behind: psm_leak (4096 bytes)");
  EXPECT_EQ(json::parse(failure->text), sample_run().scenarios[1].checks[0].measured);

  const XmlNode* error = case_named(fail, "cleanup_time").first("error");
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->attr("message"), "timeline ended before \"job_exited\" <phase>");

  const XmlNode& run = case_named(fail, "run");
  ASSERT_NE(run.first("error"), nullptr);
  EXPECT_EQ(run.first("error")->attr("message"), "lost track of the job: waitid: ECHILD");
}

TEST(ReportsJunit, SuitePropertiesAndTimes) {
  const XmlNode root = parse_xml(write_junit(sample_run()));
  const XmlNode& xfail = suite_named(root, "orphan_reaper");
  std::map<std::string, std::string> props;
  for (const auto* p : xfail.first("properties")->all("property"))
    props[p->attr("name")] = p->attr("value");
  EXPECT_EQ(props["verdict"], "xfail");
  EXPECT_EQ(props["expect"], "fail: no_orphans");
  EXPECT_EQ(props["seed"], "42");
  EXPECT_EQ(props["file"], "scenarios/orphan_reaper.yaml");
  EXPECT_NE(props["repro"].find("--seed 42"), std::string::npos);
  EXPECT_EQ(props["timing.job_ms"], "1500.250");
  EXPECT_EQ(props["timing.total_ms"], "2300.250");
  EXPECT_EQ(props.count("timing.to_all_exited_ms"), 0u) << "null timings are omitted";
  EXPECT_EQ(xfail.attr("time"), "2.300");
  EXPECT_EQ(xfail.attr("timestamp"), sample_run().scenarios[0].started_at);
  EXPECT_EQ(case_named(xfail, "exit_code").attr("time"), "0.000");
  // 2.30025 + 6.0015 s: values picked to stay clear of a rounding tie.
  EXPECT_EQ(root.attr("time"), "8.302");
}

TEST(ReportsJunit, StderrIsEscapedAndControlBytesStripped) {
  const std::string xml = write_junit(sample_run());
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_NE(xml.find("fatal error &lt;&amp;&gt; \"quoted\" 'single'"), std::string::npos);
  const XmlNode root = parse_xml(xml);
  const XmlNode* err = case_named(suite_named(root, "shm_leak"), "run").first("system-err");
  ASSERT_NE(err, nullptr);
  EXPECT_EQ(err->text, "rank 1: fatal error <&> \"quoted\" 'single'\nAborted\n");
}

TEST(ReportsJunit, ExpectedFailureThatDidNotReproduceFails) {
  RunResult run = sample_run();
  ScenarioResult& s = run.scenarios[0];
  s.checks[0].status = CheckStatus::Pass;
  s.checks[0].reason = "no orphans";
  s.verdict = Verdict::XPass;
  const XmlNode root = parse_xml(write_junit(run));
  const XmlNode& suite = suite_named(root, "orphan_reaper");
  const XmlNode* f = case_named(suite, "no_orphans").first("failure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attr("type"), "xpass");
  EXPECT_EQ(f->attr("message"), "expected failure did not reproduce");
  EXPECT_EQ(suite.attr("failures"), "1");
  // The failure above carries the red verdict: no extra "verdict" testcase.
  EXPECT_THROW(case_named(suite, "verdict"), std::runtime_error);
}

TEST(ReportsJunit, RedVerdictWithoutARedCheckStillFails) {
  RunResult run = sample_run();
  ScenarioResult& s = run.scenarios[0];
  s.checks = {s.checks[1]};  // only the passing check is left
  s.verdict = Verdict::Fail;
  s.verdict_reason = "expected check no_orphans never ran";
  const XmlNode root = parse_xml(write_junit(run));
  const XmlNode& suite = suite_named(root, "orphan_reaper");
  const XmlNode* f = case_named(suite, "verdict").first("failure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attr("message"), "expected check no_orphans never ran");
  EXPECT_EQ(suite.attr("tests"), "2");
  EXPECT_EQ(suite.attr("failures"), "1");
}

TEST(ReportsJunit, EmptyRunIsValid) {
  const XmlNode root = parse_xml(write_junit(RunResult{}));
  EXPECT_EQ(root.attr("tests"), "0");
  EXPECT_TRUE(root.children.empty());
  EXPECT_NO_THROW(json::parse(write_json(RunResult{})));
}

}  // namespace
}  // namespace aftermath
