// Tests for the JUnit XML writer (reports/junit): the golden file, and the
// output walked with a small checking parser (writer_fixture.h holds the
// hand-made run and says how to regenerate the golden).
#include "reports/junit.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/types.h"
#include "reports/json.h"
#include "reports/result_read.h"
#include "tests/unit/repeat_fixture.h"
#include "tests/unit/writer_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using namespace testing_writers;

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

std::string normalise_xml(std::string xml) {
  xml = std::regex_replace(xml, std::regex(R"re( time="[^"]*")re"), R"( time="*")");
  xml = std::regex_replace(xml, std::regex(R"re( timestamp="[^"]*")re"), R"( timestamp="*")");
  xml = std::regex_replace(
      xml, std::regex(R"re(<property name="(repro|out_dir|timing\.[^"]*)" value="[^"]*"/>)re"),
      R"(<property name="$1" value="*"/>)");
  return xml;
}

// ---------------------------------------------------------------------------
// JUnit XML

TEST(ReportsJunitGolden, MatchesGoldenFile) {
  compare_or_update("junit.xml", normalise_xml(render_junit(sample_run())));
}

TEST(ReportsJunit, IsWellFormed) {
  const std::string xml = render_junit(sample_run());
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
  const XmlNode root = parse_xml(render_junit(sample_run()));
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
  const XmlNode root = parse_xml(render_junit(sample_run()));
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
  const RunResult run = sample_run();  // once: its start time is the clock's
  const XmlNode root = parse_xml(render_junit(run));
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
  EXPECT_EQ(xfail.attr("timestamp"), run.scenarios[0].started_at);
  EXPECT_EQ(case_named(xfail, "exit_code").attr("time"), "0.000");
  // 2.30025 + 6.0015 s: values picked to stay clear of a rounding tie.
  EXPECT_EQ(root.attr("time"), "8.302");
}

TEST(ReportsJunit, StderrIsEscapedAndControlBytesStripped) {
  const std::string xml = render_junit(sample_run());
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
  const XmlNode root = parse_xml(render_junit(run));
  const XmlNode& suite = suite_named(root, "orphan_reaper");
  const XmlNode* f = case_named(suite, "no_orphans").first("failure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attr("type"), "xpass");
  EXPECT_EQ(f->attr("message"), "expected failure did not reproduce");
  EXPECT_EQ(suite.attr("failures"), "1");
  // The failure above carries the red verdict: no extra "verdict" testcase.
  EXPECT_THROW(case_named(suite, "verdict"), std::runtime_error);
}

// A check the scenario says may fail (a known race of the job's) is no CI
// failure when it fails: the verdict is not red for it either.
TEST(ReportsJunit, ACheckThatMayFailIsNoFailureWhenItFails) {
  RunResult run = sample_run();
  ScenarioResult& s = run.scenarios[0];
  s.checks[0].status = CheckStatus::Fail;
  s.checks[0].expected_to_fail = false;
  s.checks[0].may_fail = true;
  s.checks[0].reason = "1 orphan";
  s.verdict = Verdict::Pass;
  const XmlNode root = parse_xml(render_junit(run));
  const XmlNode& suite = suite_named(root, "orphan_reaper");
  const XmlNode& c = case_named(suite, "no_orphans");
  EXPECT_EQ(c.first("failure"), nullptr);
  const XmlNode* out = c.first("system-out");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->text, "failed, as the scenario says it may: 1 orphan");
  EXPECT_EQ(suite.attr("failures"), "0");
}

TEST(ReportsJunit, RedVerdictWithoutARedCheckStillFails) {
  RunResult run = sample_run();
  ScenarioResult& s = run.scenarios[0];
  s.checks = {s.checks[1]};  // only the passing check is left
  s.verdict = Verdict::Fail;
  s.verdict_reason = "expected check no_orphans never ran";
  const XmlNode root = parse_xml(render_junit(run));
  const XmlNode& suite = suite_named(root, "orphan_reaper");
  const XmlNode* f = case_named(suite, "verdict").first("failure");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->attr("message"), "expected check no_orphans never ran");
  EXPECT_EQ(suite.attr("tests"), "2");
  EXPECT_EQ(suite.attr("failures"), "1");
}

TEST(ReportsJunit, EmptyRunIsValid) {
  const XmlNode root = parse_xml(render_junit(RunResult{}));
  EXPECT_EQ(root.attr("tests"), "0");
  EXPECT_TRUE(root.children.empty());
}

// The one JUnit path renders a result.json document: what the run writes
// and what `aftermath report` renders again from its result.json on disk
// must be the same file, byte for byte, whatever the run held (timings with
// fractions, a 64-bit seed, failed and skipped faults, a broken run's stderr,
// repeats with their statistics).
TEST(ReportsJunitFromJson, TheSavedResultRendersTheSameJunit) {
  RunResult faults = sample_run();
  faults.scenarios[0].seed = 18446744073709551557ull;
  faults.scenarios[0].timings_ms["job_ms"] = 1.0 / 3.0;
  FaultRecord skipped;
  skipped.index = 0;
  skipped.action = FaultAction::HostOom;
  skipped.target = "rank:1";
  skipped.status = FaultStatus::Skipped;
  skipped.reason = "no delegated cgroup";
  FaultRecord failed = skipped;
  failed.index = 1;
  failed.status = FaultStatus::Failed;
  failed.reason = "target gone";
  faults.scenarios[0].timeline.facts.faults = {skipped, failed};
  RunResult not_launched = sample_run();
  not_launched.scenarios[1].checks.clear();
  not_launched.scenarios[1].error.clear();
  not_launched.scenarios[1].verdict = Verdict::Skipped;
  not_launched.scenarios[1].verdict_reason = "requires: gpu (no NVIDIA driver)";
  for (const RunResult& run :
       {sample_run(), testing_repeats::repeated_run(), faults, not_launched}) {
    const std::string xml = render_junit(run);
    auto saved = read_result(json::parse(write_json(run)));
    ASSERT_TRUE(saved.ok()) << saved.error().what;
    EXPECT_EQ(render_junit(*saved), xml);
    parse_xml(xml);
  }
  // The planted cases are there, so the comparison above covered them.
  EXPECT_NE(render_junit(faults).find("<property name=\"seed\" value=\"18446744073709551557\"/>"),
            std::string::npos);
  EXPECT_NE(render_junit(faults).find("type=\"fault_failed\""), std::string::npos);
  EXPECT_NE(render_junit(not_launched).find("name=\"requirements\""), std::string::npos);
}

// A document from a newer or broken build is refused by the reader, naming
// the field, before anything renders: what this version cannot read is never
// shown, green or otherwise.
TEST(ReportsJunitFromJson, ADocumentThisVersionCannotReadIsRefusedNotRendered) {
  json doc = json::parse(R"({"schema_version": 1, "scenarios": [
      {"name": "future", "verdict": "flaked", "verdict_reason": "new verdict",
       "checks": [{"name": "new_check", "status": "inconclusive", "reason": "?"}]}]})");
  auto run = read_result(doc);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().what, "scenarios[0].verdict has an unknown value \"flaked\"");
  doc["scenarios"][0]["verdict"] = "pass";
  run = read_result(doc);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().what,
            "scenarios[0].checks[0].status has an unknown value \"inconclusive\"");
  parse_xml(render_junit(RunResult{}));
}

// A pytest suite run as the job: a second testsuite, one testcase per test
// named as pytest names it, a leak as the test's failure.
TEST(ReportsJunit, PytestTestsGetATestcaseEach) {
  RunResult run;
  ScenarioResult s;
  s.name = "pytest-suite";
  s.verdict = Verdict::Fail;
  auto test = [](std::string nodeid, std::string outcome, std::optional<Nanos> end) {
    TestResult t;
    t.nodeid = std::move(nodeid);
    t.worker = "gw1";
    t.pid = 42;
    t.started = 100 * kMilli;
    t.ended = end;
    t.outcome = parse_test_outcome(outcome).value();
    return t;
  };
  s.tests.push_back(test("tests/a/test_x.py::test_clean", "passed", 350 * kMilli));
  TestResult leaky = test("tests/a/test_x.py::TestK::test_y[a::b]", "passed", 200 * kMilli);
  leaky.leaks.push_back(
      TestLeak{LeakKind::Zombie, 77, "", 0, "unknown 77 (true) a zombie at the test's end"});
  leaky.leaks.push_back(
      TestLeak{LeakKind::Shm, 0, "torch_1_x_0", 64, "/dev/shm/torch_1_x_0 (64 B) left behind"});
  s.tests.push_back(leaky);
  s.tests.push_back(test("test_z.py::test_skip", "skipped", 150 * kMilli));
  s.tests.push_back(test("test_z.py::test_cut", "", std::nullopt));
  run.scenarios.push_back(s);
  const XmlNode root = parse_xml(render_junit(run));
  const XmlNode& suite = suite_named(root, "pytest-suite (pytest tests)");
  EXPECT_EQ(suite.attr("tests"), "4");
  EXPECT_EQ(suite.attr("failures"), "1");
  EXPECT_EQ(suite.attr("errors"), "1");
  EXPECT_EQ(suite.attr("skipped"), "1");
  const XmlNode& clean = case_named(suite, "test_clean");
  EXPECT_EQ(clean.attr("classname"), "tests.a.test_x");
  EXPECT_EQ(clean.attr("time"), "0.250");
  EXPECT_EQ(clean.first("failure"), nullptr);
  const XmlNode& y = case_named(suite, "test_y[a::b]");
  EXPECT_EQ(y.attr("classname"), "tests.a.test_x.TestK");
  ASSERT_NE(y.first("failure"), nullptr);
  EXPECT_EQ(y.first("failure")->attr("type"), "leak");
  EXPECT_EQ(y.first("failure")->attr("message"),
            "left behind: zombie: unknown 77 (true) a zombie at the test's end (and 1 more)");
  EXPECT_NE(y.first("failure")->text.find("shm: /dev/shm/torch_1_x_0"), std::string::npos);
  EXPECT_NE(case_named(suite, "test_skip").first("skipped"), nullptr);
  EXPECT_NE(case_named(suite, "test_cut").first("error"), nullptr);
  EXPECT_EQ(root.attr("tests"), "5");  // and the scenario's verdict testcase
  // Without tests, no such suite.
  run.scenarios[0].tests.clear();
  EXPECT_EQ(render_junit(run).find("(pytest tests)"), std::string::npos);
}

}  // namespace
}  // namespace aftermath
