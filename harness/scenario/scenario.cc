// The scenario file's top level: which sections exist, the small ones read
// here (name, description, tags, requires, timeouts, grace, sample_interval,
// seed, checks, expect), the big ones handed to their own parsers
// (job_parse.cc, fault_parse.cc) and each check's parameters to the check
// layer through the CheckCatalog.
#include "harness/scenario/scenario.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

#include "harness/scenario/check_catalog.h"
#include "harness/scenario/fault_parse.h"
#include "harness/scenario/job_parse.h"
#include "harness/scenario/requirements.h"
#include "harness/scenario/yaml_fields.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;

const Keys kTopKeys = {
    "name", "description", "tags",   "requires", "job",   "timeouts", "grace", "sample_interval",
    "seed", "checks",      "expect", "faults",   "nodes", "torch"};
const Keys kTorchVariantKeys = {"checks", "expect"};
// More nodes than a scenario on one test machine can mean; a real allocation
// may be bigger, but a scenario names each node it faults.
constexpr int kMaxNodes = 1024;
const Keys kTimeoutKeys = {"job", "settle", "teardown"};
const Keys kExpectKeys = {"fail", "may_fail", "reason"};

using Entries = std::vector<Entry>;

const Entry* find(const Entries& es, std::string_view name) { return FieldReader::find(es, name); }

Keys as_keys(const std::vector<std::string>& names) { return Keys(names.begin(), names.end()); }

void parse_name(FieldReader& r, const Entry& e, std::string* out) {
  std::optional<std::string> v = r.string_value(e);
  if (!v) return;
  if (!valid_scenario_name(*v)) {
    r.error(e.where(), e.path,
            "invalid name '" + *v + "' (" + std::string(kScenarioNameRule) + ")");
  }
  *out = *v;
}

void parse_timeouts(FieldReader& r, const Entry& te, Timeouts* t) {
  if (!te.value.IsMap()) {
    r.wrong_type(te, "a map");
    return;
  }
  Entries es = r.entries(te.value, te.path, &kTimeoutKeys);
  if (const Entry* e = find(es, "job")) {
    if (auto d = r.bounded_duration(*e, true)) t->job = *d;
  }
  if (const Entry* e = find(es, "settle")) {
    if (auto d = r.bounded_duration(*e, false)) t->settle = *d;
  }
  if (const Entry* e = find(es, "teardown")) {
    if (auto d = r.bounded_duration(*e, true)) t->teardown = *d;
  }
}

// `nodes: N` (1..kMaxNodes). A multi-node scenario's job may use
// kNodeVars; where the caller has no values for them they stay as written,
// for each node's agent to resolve.
void parse_nodes(FieldReader& r, const Entry& e, int* nodes) {
  const std::string s = e.value.IsScalar() ? e.value.Scalar() : "";
  if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(s) < 1 || std::stoi(s) > kMaxNodes) {
    r.error(e.where(), e.path,
            "expected a node count from 1 to " + std::to_string(kMaxNodes) + ", got " +
                describe(e.value));
    return;
  }
  *nodes = std::stoi(s);
  if (*nodes > 1)
    for (const char* v : kNodeVars) r.vars().emplace(v, std::string("${") + v + "}");
}

void parse_seed(FieldReader& r, const Entry& e, std::optional<std::uint64_t>* seed) {
  if (!e.value.IsScalar()) {
    r.wrong_type(e, "a non-negative integer");
    return;
  }
  const std::string& s = e.value.Scalar();
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
    r.error(e.where(), e.path, "expected a non-negative integer, got '" + s + "'");
    return;
  }
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    r.error(e.where(), e.path, "seed '" + s + "' does not fit in 64 bits");
    return;
  }
  *seed = static_cast<std::uint64_t>(v);
}

// `checks:`: each known check as true, false or a map of its parameters.
void parse_checks(FieldReader& r, const Entry& ce, const CheckCatalog& catalog,
                  std::map<std::string, CheckConfig>* checks) {
  if (!ce.value.IsMap()) {
    r.wrong_type(ce, "a map of check: true | false | {params}");
    return;
  }
  const Keys known = as_keys(catalog.names());
  for (const Entry& e : r.entries(ce.value, ce.path, &known, "check")) {
    CheckConfig& cfg = (*checks)[e.name];
    if (e.value.IsMap()) {
      cfg.enabled = true;
      Entries es = r.entries(e.value, e.path, &catalog.keys(e.name));
      if (const Entry* g = find(es, "grace")) r.grace(*g, &cfg.grace, &cfg.role_grace);
      catalog.parse_params(r, e, es, &cfg);
    } else if (auto on = r.boolean(e, "true, false or a map of parameters")) {
      cfg.enabled = *on;
    }
  }
}

void parse_expect(FieldReader& r, const Entry& ee, const CheckCatalog& catalog,
                  const std::map<std::string, CheckConfig>& checks, Expectation* ex) {
  if (ee.value.IsScalar()) {
    if (ee.value.Scalar() != "pass") {
      r.error(ee.where(), ee.path,
              "expected 'pass' or a map {fail: [checks...], may_fail: [checks...], reason: text}, "
              "got " +
                  describe(ee.value));
    }
    return;
  }
  if (!ee.value.IsMap()) {
    r.wrong_type(ee, "'pass' or a map {fail: [checks...], may_fail: [checks...], reason: text}");
    return;
  }
  Entries es = r.entries(ee.value, ee.path, &kExpectKeys);
  const Keys known = as_keys(catalog.names());
  // The checks of one list: known, enabled, and in no list yet.
  auto read_list = [&](const Entry& list, std::set<std::string>* into) {
    if (list.value.IsSequence() && list.value.size() == 0) {
      r.error(list.where(), list.path, "must list at least one check");
    }
    for (auto& [name, it] : r.string_list(list)) {
      if (!contains(known, name)) {
        r.error(it.where(), it.path,
                "unknown check '" + name + "' (known checks: " + join(known) + ")");
      } else if (auto c = checks.find(name); c != checks.end() && !c->second.enabled) {
        r.error(it.where(), it.path,
                "check '" + name + "' is disabled in checks, so it cannot be expected to fail");
      } else if (ex->failing.count(name) || ex->may_fail.count(name)) {
        r.error(it.where(), it.path, "check '" + name + "' is listed twice");
      } else {
        into->insert(name);
      }
    }
  };
  const Entry* fail = find(es, "fail");
  if (fail) {
    ex->expect_pass = false;
    read_list(*fail, &ex->failing);
  }
  if (const Entry* may = find(es, "may_fail")) read_list(*may, &ex->may_fail);
  if (!fail && !find(es, "may_fail")) r.missing(ee.value, child(ee.path, "fail"));
  if (const Entry* reason = find(es, "reason")) {
    if (std::optional<std::string> s = r.string_value(*reason)) ex->reason = *s;
  }
}

// `torch: {RANGE: {checks: ..., expect: ...}, ...}`: each range's checks
// start from the base's; its expectation is its own (the base's when it
// states none).
void parse_torch_variants(FieldReader& r, const Entry& te, const CheckCatalog& catalog,
                          const Scenario& base, std::vector<TorchVariant>* out) {
  if (!te.value.IsMap() || te.value.size() == 0) {
    r.wrong_type(te,
                 "a map of version ranges ('>=2.2', '<2.0', '1.13') to {checks: ..., expect: ...}");
    return;
  }
  for (const Entry& e : r.entries(te.value, te.path, nullptr)) {
    auto range = TorchRange::parse(e.name);
    if (!range) {
      r.error(e.key.Mark(), e.path, range.error().what);
      continue;
    }
    if (!e.value.IsMap()) {
      r.wrong_type(e, "a map {checks: ..., expect: ...}");
      continue;
    }
    TorchVariant v{*range, base.checks, base.expect};
    Entries es = r.entries(e.value, e.path, &kTorchVariantKeys);
    if (e.value.size() == 0)
      r.error(e.where(), e.path, "says nothing: give checks:, expect: or both");
    if (const Entry* c = find(es, "checks")) parse_checks(r, *c, catalog, &v.checks);
    if (const Entry* x = find(es, "expect")) {
      v.expect = Expectation{};
      parse_expect(r, *x, catalog, v.checks, &v.expect);
    }
    out->push_back(std::move(v));
  }
}

// Where a tab first indents a line (YAML indents with spaces only, and
// yaml-cpp's own message, "illegal map value", does not say so); nullopt
// when no line is indented with one.
std::optional<YAML::Mark> first_tab_indent(std::string_view text) {
  YAML::Mark m;
  m.line = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
    size_t lead = line.find_first_not_of(" \t");
    std::string_view indent = line.substr(0, lead == std::string_view::npos ? line.size() : lead);
    if (size_t tab = indent.find('\t');
        tab != std::string_view::npos && lead != std::string_view::npos) {
      m.column = static_cast<int>(tab);
      m.pos = static_cast<int>(start + tab);
      return m;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
    ++m.line;
  }
  return std::nullopt;
}

// The document's one map, or nothing (reported).
std::optional<YAML::Node> root_map(FieldReader& r, std::string_view text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    if (auto tab = first_tab_indent(text)) {
      r.error(*tab, "", "a tab indents this line; YAML indents with spaces only (" + e.msg + ")");
    } else {
      r.error(e.mark, "", e.msg);
    }
    return std::nullopt;
  }
  if (docs.empty() || docs[0].IsNull()) {
    r.error(YAML::Mark::null_mark(), "",
            "empty scenario: expected a map with name, description and job");
    return std::nullopt;
  }
  for (size_t i = 1; i < docs.size(); ++i) {
    if (!docs[i].IsNull()) {
      r.error(docs[i].Mark(), "", "only one YAML document is allowed per scenario file");
      break;
    }
  }
  if (!docs[0].IsMap()) {
    r.error(docs[0].Mark(), "", "the top level must be a map, got " + describe(docs[0]));
    return std::nullopt;
  }
  return docs[0];
}

void parse_descriptive(FieldReader& r, const YAML::Node& root, const Entries& top, Scenario* s) {
  if (const Entry* e = find(top, "name")) {
    parse_name(r, *e, &s->name);
  } else {
    r.missing(root, "name");
  }
  if (const Entry* e = find(top, "description")) {
    if (auto v = r.string_value(*e)) {
      if (v->empty()) r.error(e->where(), e->path, "must not be empty");
      s->description = *v;
    }
  } else {
    r.missing(root, "description");
  }
  if (const Entry* e = find(top, "tags")) {
    for (auto& [tag, it] : r.string_list(*e)) {
      if (tag.empty()) r.error(it.where(), it.path, "must not be empty");
      s->tags.push_back(tag);
    }
  }
  if (const Entry* e = find(top, "requires")) {
    const Keys known = as_keys(known_requirements());
    for (auto& [req, it] : r.string_list(*e)) {
      if (!contains(known, req)) {
        r.error(it.where(), it.path,
                "unknown requirement '" + req + "' (known: " + join(known) + ")");
      }
      s->requires_.push_back(req);
    }
  }
}

void parse_into(FieldReader& r, std::string_view text, const ParseContext& ctx,
                const std::string& base_dir, const CheckCatalog& catalog, Scenario* s) {
  s->file = ctx.file;
  s->text = std::string(text);
  // Every known check gets an entry: the defaults enabled, the opt-in ones not.
  for (const std::string& name : catalog.names()) s->checks[name].enabled = false;
  for (const std::string& name : catalog.defaults()) s->checks[name].enabled = true;

  std::optional<YAML::Node> root = root_map(r, text);
  if (!root) return;
  Entries top = r.entries(*root, "", &kTopKeys);
  parse_descriptive(r, *root, top, s);
  // Before the job: its command may use the node variables.
  if (const Entry* e = find(top, "nodes")) parse_nodes(r, *e, &s->nodes);
  if (s->nodes > 1)
    for (const std::string& name : catalog.multinode_defaults()) s->checks[name].enabled = true;
  if (const Entry* e = find(top, "job")) {
    parse_job(r, *e, base_dir, ctx.check_command, &s->job);
  } else {
    r.missing(*root, "job");
  }
  if (const Entry* e = find(top, "timeouts")) parse_timeouts(r, *e, &s->timeouts);
  if (const Entry* e = find(top, "grace")) {
    std::optional<Nanos> all;
    r.grace(*e, &all, &s->role_grace);
    if (all) s->grace = *all;
  }
  if (const Entry* e = find(top, "sample_interval")) {
    if (auto d = r.duration(*e)) {
      if (*d < 1 * kMilli || *d > 10 * kSecond)
        r.error(e->where(), e->path, "must be between 1ms and 10s");
      s->sample_interval = *d;
    }
  }
  if (const Entry* e = find(top, "seed")) parse_seed(r, *e, &s->seed);
  if (const Entry* e = find(top, "checks")) parse_checks(r, *e, catalog, &s->checks);
  // After checks: expect.fail may only name enabled checks.
  if (const Entry* e = find(top, "expect")) parse_expect(r, *e, catalog, s->checks, &s->expect);
  if (const Entry* e = find(top, "faults")) parse_faults(r, *e, s->nodes, &s->faults);
  if (const Entry* e = find(top, "torch"))
    parse_torch_variants(r, *e, catalog, *s, &s->torch_variants);
}

ParseResult parse_text(std::string_view text, const ParseContext& ctx,
                       const CheckCatalog& catalog) {
  std::string base = ctx.scenario_dir;
  if (base.empty()) {
    fs::path file(ctx.file);
    base = file.has_parent_path() ? file.parent_path().string() : ".";
  }
  std::string base_dir = absolute_normal(base);
  FieldReader r(ctx.file, ctx.vars);
  r.vars().emplace("SCENARIO_DIR", base_dir);  // no-op when the caller set it
  Scenario s;
  try {
    parse_into(r, text, ctx, base_dir, catalog, &s);
  } catch (const YAML::Exception& e) {
    // Thrown by yaml-cpp while walking nodes; every access is type-checked
    // first, so this is a safety net, not a code path.
    r.error(e.mark, "", e.msg);
  } catch (const std::exception& e) {
    r.error(YAML::Mark::null_mark(), "", std::string("internal error: ") + e.what());
  }
  Diagnostics d = r.take_sorted();
  if (!d.empty()) return d;
  return s;
}

Expected<std::string> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error("cannot read");
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      int err = errno;
      ::close(fd);
      return sys_error("cannot read", err);
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

ParseResult parse_scenario(std::string_view text, const ParseContext& ctx,
                           const CheckCatalog& checks) {
  try {
    return parse_text(text, ctx, checks);
  } catch (const std::exception& e) {
    // Only allocation failure can get here; still a diagnostic, never a throw.
    return Diagnostics{Diagnostic{ctx.file, 0, 0, "", std::string("internal error: ") + e.what()}};
  }
}

Expected<void, Diagnostics> parse_checks_text(std::string_view yaml, const std::string& label,
                                              const CheckCatalog& catalog,
                                              std::map<std::string, CheckConfig>* checks) {
  FieldReader r(label);
  std::map<std::string, CheckConfig> parsed = *checks;
  try {
    // `--check 'NAME: {params}'`: a map of checks, as under checks:, merged into *checks.
    YAML::Node root = YAML::Load(std::string(yaml));
    parse_checks(r, Entry{"", root, root, ""}, catalog, &parsed);
  } catch (const YAML::Exception& e) {
    r.error(e.mark, "", e.msg);
  }
  Diagnostics d = r.take();
  if (!d.empty()) return d;
  *checks = std::move(parsed);
  return {};
}

Expected<GraceSpec> parse_grace_text(std::string_view text) {
  GraceSpec g;
  if (auto d = parse_duration(text)) {
    g.all = *d;
    return g;
  }
  YAML::Node n;
  try {
    n = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error{"'" + std::string(text) + "' is neither a duration nor a map: " + e.msg};
  }
  if (!n.IsMap()) {
    return Error{
        "'" + std::string(text) +
        "' is not a duration (e.g. 500ms) nor a map of roles (e.g. '{default: 1s, helper: 3s}')"};
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    Role role = Role::Unknown;
    if (key != "default") {
      auto r = parse_role(key);
      if (!r || key != std::string(to_string(*r)))
        return Error{"unknown role '" + key +
                     "' (default, launcher, rank, worker, helper, unknown)"};
      role = *r;
    }
    auto d = it->second.IsScalar() ? parse_duration(it->second.Scalar()) : std::nullopt;
    if (!d || *d < 0) {
      return Error{key + ": '" + (it->second.IsScalar() ? it->second.Scalar() : std::string("?")) +
                   "' is not a duration (e.g. 500ms, 3s)"};
    }
    if (key == "default")
      g.all = *d;
    else
      g.by_role[role] = *d;
  }
  return g;
}

ParseResult load_scenario(const std::string& path, ParseContext ctx, const CheckCatalog& checks) {
  if (ctx.file.empty()) ctx.file = path;
  Expected<std::string> text = read_file(path);
  if (!text) {
    return Diagnostics{Diagnostic{ctx.file, 0, 0, "", text.error().what}};
  }
  return parse_scenario(*text, ctx, checks);
}

bool valid_scenario_name(std::string_view name) {
  auto first_ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  auto rest_ok = [&](char c) { return first_ok(c) || c == '.' || c == '_' || c == '-'; };
  return !name.empty() && first_ok(name[0]) && std::all_of(name.begin() + 1, name.end(), rest_ok);
}

}  // namespace aftermath

namespace aftermath {

Scenario for_torch(const Scenario& sc, const std::optional<TorchVersion>& torch) {
  Scenario out = sc;
  out.torch_range.clear();
  if (!torch) return out;
  for (const auto& v : sc.torch_variants) {
    if (!v.range.contains(*torch)) continue;
    out.checks = v.checks;
    out.expect = v.expect;
    out.torch_range = v.range.text();
    break;
  }
  return out;
}

}  // namespace aftermath
