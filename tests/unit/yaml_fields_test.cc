// The generic field readers: every problem becomes one diagnostic naming
// file:line:column and the dotted field.
#include "harness/scenario/yaml_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aftermath {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> strings(std::vector<Diagnostic> ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.to_string());
  return out;
}

TEST(FieldReader, DurationsNeedAUnit) {
  YAML::Node root = YAML::Load("a: 500ms\nb: 5\nc: -1s\nd: 5d\ne: 0s\n");
  FieldReader r("x.yaml");
  Keys keys = {"a", "b", "c", "d", "e"};
  auto es = r.entries(root, "t", &keys);
  EXPECT_EQ(r.duration(*FieldReader::find(es, "a")), 500 * kMilli);
  EXPECT_FALSE(r.duration(*FieldReader::find(es, "b")));
  EXPECT_FALSE(r.duration(*FieldReader::find(es, "c")));
  EXPECT_FALSE(r.duration(*FieldReader::find(es, "d")));
  EXPECT_FALSE(r.bounded_duration(*FieldReader::find(es, "e"), true));
  EXPECT_THAT(
      strings(r.take_sorted()),
      ElementsAre("x.yaml:2:4: t.b: bare number '5' needs a unit, e.g. 5s",
                  "x.yaml:3:4: t.c: duration '-1s' must not be negative",
                  "x.yaml:4:4: t.d: invalid duration '5d' (a number with a unit: ns, us, ms, "
                  "s, m, h; e.g. 500ms)",
                  "x.yaml:5:4: t.e: must be > 0"));
}

TEST(FieldReader, UnknownAndDuplicateKeys) {
  YAML::Node root = YAML::Load("a: 1\nz: 2\na: 3\n");
  FieldReader r("x.yaml");
  Keys keys = {"a"};
  auto es = r.entries(root, "", &keys);
  EXPECT_EQ(es.size(), 1u);
  EXPECT_THAT(strings(r.take()), ElementsAre("x.yaml:2:1: z: unknown key 'z' (accepted: a)",
                                             "x.yaml:3:1: a: duplicate key 'a' (first at line 1)"));
}

TEST(FieldReader, ExpandsVariables) {
  YAML::Node root = YAML::Load("cmd: ${BIN}/x ${NOPE_AFTERMATH_UNSET}\n");
  FieldReader r("x.yaml", {{"BIN", "/opt"}});
  auto es = r.entries(root, "job", nullptr);
  EXPECT_FALSE(r.expanded_string(es[0]));
  EXPECT_THAT(strings(r.take()),
              ElementsAre("x.yaml:1:6: job.cmd: unknown variable ${NOPE_AFTERMATH_UNSET} (not a "
                          "harness variable nor in the environment)"));
  FieldReader ok("x.yaml", {{"BIN", "/opt"}});
  YAML::Node good = YAML::Load("cmd: ${BIN}/x\n");
  EXPECT_EQ(ok.expanded_string(ok.entries(good, "", nullptr)[0]), "/opt/x");
}

TEST(FieldReader, GraceByRole) {
  YAML::Node root = YAML::Load("grace: {default: 1s, helper: 3s, wizard: 1s}\n");
  FieldReader r("x.yaml");
  auto es = r.entries(root, "", nullptr);
  std::optional<Nanos> all;
  std::map<Role, Nanos> by_role;
  r.grace(es[0], &all, &by_role);
  EXPECT_EQ(all, 1 * kSecond);
  EXPECT_EQ(by_role.at(Role::Helper), 3 * kSecond);
  EXPECT_THAT(
      strings(r.take()),
      ElementsAre(::testing::HasSubstr("x.yaml:1:34: grace.wizard: unknown role 'wizard'")));
}

}  // namespace
}  // namespace aftermath
