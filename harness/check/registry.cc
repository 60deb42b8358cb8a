#include "harness/check/registry.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "harness/check/check_params.h"
#include "harness/core/device.h"

namespace aftermath {

namespace {

using Entries = std::vector<Entry>;
using ParseFn = void (*)(FieldReader&, const Entry&, const Entries&, CheckConfig*);

const Entry* find(const Entries& es, std::string_view name) { return FieldReader::find(es, name); }

void parse_no_zombies(FieldReader& r, const Entry&, const Entries& es, CheckConfig* cfg) {
  if (const Entry* e = find(es, "launcher_poll")) {
    if (auto d = r.bounded_duration(*e, false)) {
      NoZombiesParams p;
      p.launcher_poll = *d;
      cfg->params = p;
    }
  }
}

void parse_no_hang(FieldReader& r, const Entry&, const Entries& es, CheckConfig* cfg) {
  // Over what an earlier map said (a --check on top of the scenario's own).
  NoHangParams p = check_params<NoHangParams>(*cfg);
  if (const Entry* e = find(es, "stall"))
    if (auto d = r.bounded_duration(*e, true)) p.stall = *d;
  if (const Entry* e = find(es, "diagnose"))
    if (auto d = r.bounded_duration(*e, true)) p.diagnose = *d;
  if (const Entry* e = find(es, "after_failure"))
    if (auto b = r.boolean(*e, "true or false")) p.after_failure = *b;
  if (p.stall || p.diagnose || p.after_failure) cfg->params = p;
}

void parse_exit_code(FieldReader& r, const Entry& code, JobExitParams* p) {
  const std::string s = code.value.IsScalar() ? code.value.Scalar() : "";
  bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  bool negative =
      s.size() > 1 && s[0] == '-' && s.find_first_not_of("0123456789", 1) == std::string::npos;
  if (!code.value.IsScalar() || (!digits && !negative)) {
    r.wrong_type(code, "an exit code (an integer 0..255)");
  } else if (negative || s.size() > 3 || std::stoi(s) > 255) {
    r.error(code.where(), code.path, "exit code " + s + " is out of range 0..255");
  } else {
    p->code = std::stoi(s);
  }
}

void parse_job_exit(FieldReader& r, const Entry&, const Entries& es, CheckConfig* cfg) {
  // Over what an earlier map said (a --check on top of the scenario's own).
  JobExitParams p = check_params<JobExitParams>(*cfg);
  const Entry* code = find(es, "code");
  if (code != nullptr) parse_exit_code(r, *code, &p);
  if (const Entry* sig = find(es, "signal")) {
    if (code != nullptr) {
      // A killed process has no exit code, so both can never match.
      r.error(sig->key.Mark(), sig->path, "code and signal are mutually exclusive");
    } else if (!sig->value.IsScalar()) {
      r.wrong_type(*sig, "a signal name like SIGKILL or a number 1..64");
    } else if (std::optional<int> n = parse_signal(sig->value.Scalar())) {
      p.signal = *n;
    } else {
      r.error(sig->where(), sig->path,
              "unknown signal '" + sig->value.Scalar() +
                  "' (a name like SIGKILL or KILL, or a number 1..64)");
    }
  }
  if (const Entry* re = find(es, "output_regex")) {
    if (std::optional<std::string> s = r.string_value(*re)) {
      try {
        std::regex compiled(*s, std::regex::ECMAScript);
        p.output_regex = *s;
      } catch (const std::regex_error& err) {
        r.error(re->where(), re->path, "invalid regex '" + *s + "': " + err.what());
      }
    }
  }
  cfg->params = std::move(p);
}

// A YAML scalar read the way YAML types it: an integer, else a number, else text.
struct Scalar {
  std::optional<long long> integer;
  std::optional<double> number;  // set for integers too
  std::string text;
};

Scalar classify(const YAML::Node& v) {
  Scalar s;
  s.text = v.Scalar();
  long long i = 0;
  double d = 0;
  if (s.text.find_first_not_of("+-0123456789") == std::string::npos &&
      YAML::convert<long long>::decode(v, i)) {
    s.integer = i;
    s.number = static_cast<double>(i);
  } else if (YAML::convert<double>::decode(v, d) &&
             s.text.find_first_of("0123456789") != std::string::npos) {
    s.number = d;
  }
  return s;
}

// One memory_growth key's value into *p; the reason when it is bad.
std::optional<std::string> memory_growth_value(const std::string& key, const Scalar& v,
                                               MemoryGrowthParams* p) {
  if (key == "max_kb_per_step") {
    if (!v.number || !(*v.number > 0)) return "must be a positive number";
    p->max_kb_per_step = *v.number;
  } else if (key == "field") {
    if (v.number || v.text.empty()) return "must be an event field name";
    p->field = v.text;
  } else if (key == "skip_steps") {
    if (!v.integer || *v.integer < 0) return "must be an integer >= 0";
    p->skip_steps = *v.integer;
  } else if (key == "min_points") {
    if (!v.integer || *v.integer < 2) return "must be an integer >= 2";
    p->min_points = static_cast<int>(*v.integer);
  } else if (key == "role") {
    auto role = v.number ? std::nullopt : parse_role(v.text);
    if (!role) return "must be launcher, rank, worker or helper";
    p->role = role;
  }
  return std::nullopt;
}

void parse_memory_growth(FieldReader& r, const Entry&, const Entries& es, CheckConfig* cfg) {
  std::vector<const Entry*> keys;
  for (const Entry& e : es) {
    if (e.name == "grace") continue;
    if (!e.value.IsScalar()) {
      r.wrong_type(e, "a number or a name");
      return;
    }
    keys.push_back(&e);
  }
  // Judged in key order, the first bad one reported (as the scenario format
  // has always done).
  std::sort(keys.begin(), keys.end(),
            [](const Entry* a, const Entry* b) { return a->name < b->name; });
  MemoryGrowthParams p;
  for (const Entry* e : keys) {
    if (auto why = memory_growth_value(e->name, classify(e->value), &p)) {
      r.error(e->where(), e->path, *why);
      return;
    }
  }
  cfg->params = std::move(p);
}

void parse_device_memory(FieldReader& r, const Entry&, const Entries& es, CheckConfig* cfg) {
  DeviceMemoryParams p;
  if (const Entry* e = find(es, "tolerance")) {
    std::optional<std::int64_t> b =
        e->value.IsScalar() ? parse_bytes(e->value.Scalar()) : std::nullopt;
    if (!b || *b < 0) {
      r.error(e->where(), e->path,
              "expected a size like 64MiB, 1GiB or 500MB, got " + describe(e->value));
      return;
    }
    p.tolerance_bytes = *b;
  }
  if (const Entry* e = find(es, "deadline")) {
    auto d = r.bounded_duration(*e, true);
    if (!d) return;
    p.deadline = *d;
  }
  cfg->params = std::move(p);
}

// Whether a scenario that does not name a check runs it: never, always, or
// when it runs on more than one node.
enum class By { Name, Default, MultiNode };

struct CheckSpec {
  std::string name;
  By by_default;
  Keys keys;      // grace first
  ParseFn parse;  // null: grace only
};

// Report order.
const std::vector<CheckSpec>& specs() {
  static const std::vector<CheckSpec> k = {
      {"all_exited", By::Default, {"grace"}, nullptr},
      {"no_orphans", By::Default, {"grace"}, nullptr},
      {NoZombiesParams::kCheck, By::Default, {"grace", "launcher_poll"}, parse_no_zombies},
      {"shm_clean", By::Default, {"grace"}, nullptr},
      {"tmp_clean", By::Default, {"grace"}, nullptr},
      {JobExitParams::kCheck,
       By::Default,
       {"grace", "code", "signal", "output_regex"},
       parse_job_exit},
      {NoHangParams::kCheck,
       By::Default,
       {"grace", "stall", "diagnose", "after_failure"},
       parse_no_hang},
      // Opt-in: they need a job that reports its samples, collectives or memory.
      {"data_partition", By::Name, {"grace"}, nullptr},
      {"collectives_matched", By::Name, {"grace"}, nullptr},
      {MemoryGrowthParams::kCheck,
       By::Name,
       {"grace", "max_kb_per_step", "field", "skip_steps", "min_points", "role"},
       parse_memory_growth},
      // On everywhere; they skip (with the reason) where there is no GPU.
      {DeviceMemoryParams::kCheck,
       By::Default,
       {"grace", "tolerance", "deadline"},
       parse_device_memory},
      {"no_device_holders", By::Default, {"grace"}, nullptr},
      {"device_alloc_probe", By::Default, {"grace"}, nullptr},
      // Judged only when the job is a pytest suite that reports its tests
      // (fixtures/points/aftermath_pytest.py); absent from other runs' results.
      {"tests_clean", By::Default, {"grace"}, nullptr},
      // Judged by a multi-node run's coordinator (on there unless set false).
      {kDiedWithAgent, By::MultiNode, {"grace"}, nullptr},
  };
  return k;
}

class Registry final : public CheckCatalog {
 public:
  Registry() {
    for (const CheckSpec& s : specs()) {
      names_.push_back(s.name);
      if (s.by_default == By::Default) defaults_.push_back(s.name);
      if (s.by_default == By::MultiNode) multinode_defaults_.push_back(s.name);
    }
  }
  const std::vector<std::string>& names() const override { return names_; }
  const std::vector<std::string>& defaults() const override { return defaults_; }
  const std::vector<std::string>& multinode_defaults() const override {
    return multinode_defaults_;
  }
  const Keys& keys(const std::string& check) const override { return spec(check).keys; }
  void parse_params(FieldReader& r, const Entry& at, const std::vector<Entry>& es,
                    CheckConfig* cfg) const override {
    if (ParseFn parse = spec(at.name).parse) parse(r, at, es, cfg);
  }

 private:
  static const CheckSpec& spec(const std::string& check) {
    for (const CheckSpec& s : specs())
      if (s.name == check) return s;
    throw std::invalid_argument("unknown check '" + check + "'");
  }

  std::vector<std::string> names_;
  std::vector<std::string> defaults_;
  std::vector<std::string> multinode_defaults_;
};

}  // namespace

const CheckCatalog& check_registry() {
  static const Registry r;
  return r;
}

const std::vector<std::string>& known_checks() { return check_registry().names(); }
const std::vector<std::string>& default_checks() { return check_registry().defaults(); }

}  // namespace aftermath
