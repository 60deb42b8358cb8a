#include "harness/scenario/scenario.h"

#include "harness/check/memory_checks.h"
#include "harness/core/device.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <regex>
#include <system_error>
#include <utility>

namespace aftermath {

const std::vector<std::string>& known_checks() {
  static const std::vector<std::string> kChecks = {
      "all_exited",     "no_orphans",          "no_zombies",
      "shm_clean",      "tmp_clean",           "job_exit",            "no_hang",
      "data_partition", "collectives_matched", "memory_growth",
      "device_memory_released", "no_device_holders", "device_alloc_probe"};
  return kChecks;
}

const std::vector<std::string>& default_checks() {
  // The opt-in checks (data_partition, collectives_matched, memory_growth)
  // need a job that reports its samples, collectives or memory; a scenario
  // names them under checks:. The device checks are on everywhere and skip
  // (with the reason) where there is no GPU.
  static const std::vector<std::string> kDefaults = {
      "all_exited", "no_orphans", "no_zombies", "shm_clean", "tmp_clean", "job_exit", "no_hang",
      "device_memory_released", "no_device_holders", "device_alloc_probe"};
  return kDefaults;
}

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

namespace {

namespace fs = std::filesystem;

using Keys = std::vector<std::string_view>;

const Keys kTopKeys = {"name",  "description",     "tags", "requires", "job",    "timeouts",
                       "grace", "sample_interval", "seed", "checks",   "expect", "faults"};
const Keys kFaultKeys = {"action",    "target", "at",     "duration", "resume_after",
                         "mechanism", "share",  "bytes", "device",   "headroom", "optional"};
const Keys kTriggerKeys = {"point", "labels", "hit", "after", "when", "phase"};
const Keys kPredicateKeys = {"workers", "processes", "shm_entries", "state"};
const Keys kPhases = {"startup", "steady", "shutdown"};
const Keys kJobKeys = {"command", "args", "env", "cwd"};
const Keys kTimeoutKeys = {"job", "settle", "teardown"};
const Keys kCheckParams = {"grace"};
const Keys kNoZombiesParams = {"grace", "launcher_poll"};
const Keys kNoHangParams = {"grace", "stall"};
const Keys kJobExitParams = {"grace", "code", "signal", "output_regex"};
const Keys kMemoryGrowthParams = {"grace", "max_kb_per_step", "field", "skip_steps", "min_points",
                                  "role"};
const Keys kDeviceMemoryParams = {"grace", "tolerance", "deadline"};
const Keys kExpectKeys = {"fail", "reason"};
const Keys kRequirements = {"root",  "pidns",        "gpu",          "cuda",
                             "nccl",  "torch",        "python-torch", "memory-cgroup"};

const Keys& known_check_keys() {
  static const Keys kKeys(known_checks().begin(), known_checks().end());
  return kKeys;
}

bool contains(const Keys& keys, std::string_view k) {
  return std::find(keys.begin(), keys.end(), k) != keys.end();
}

std::string join(const Keys& keys) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

std::string child(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string item(const std::string& parent, size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

// What a node is, for "expected X, got Y" messages.
std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "'" + n.Scalar() + "'";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing";
}

// Absolute and lexically normal, without resolving symlinks: argv[0] keeps the
// name the scenario used (python3 stays python3, not python3.11).
std::string absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  std::string s = abs.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// Finds `prog` like execvp() would, so the harness launches what the shell would.
std::optional<std::string> search_path(const std::string& prog) {
  const char* env = std::getenv("PATH");
  std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";  // POSIX: an empty PATH entry is the current directory
    std::string candidate = (fs::path(dir) / prog).string();
    if (is_executable_file(candidate)) return absolute_normal(candidate);
    start = end + 1;
  }
  return std::nullopt;
}

// One key/value pair of a YAML map, with the dotted path of the value.
struct Entry {
  std::string name;
  YAML::Node key;
  YAML::Node value;
  std::string path;

  // A null value's own mark points at whatever token follows it (often the next
  // line), so problems with an empty value are reported at its key.
  YAML::Mark where() const {
    if (value.IsNull() || value.Mark().line < 0) return key.Mark();
    return value.Mark();
  }
};

class Parser {
 public:
  Parser(std::string_view text, const ParseContext& ctx) : text_(text), ctx_(ctx) {
    std::string base = ctx.scenario_dir;
    if (base.empty()) {
      fs::path file(ctx.file);
      base = file.has_parent_path() ? file.parent_path().string() : ".";
    }
    base_dir_ = absolute_normal(base);
    vars_ = ctx.vars;
    vars_.emplace("SCENARIO_DIR", base_dir_);  // no-op when the caller set it
  }

  ParseResult parse() {
    ParseResult result;
    Scenario s;
    try {
      parse_into(&s);
    } catch (const YAML::Exception& e) {
      // Thrown by yaml-cpp while walking nodes; every access is type-checked
      // first, so this is a safety net, not a code path.
      error(e.mark, "", e.msg);
    } catch (const std::exception& e) {
      error(YAML::Mark::null_mark(), "", std::string("internal error: ") + e.what());
    }
    // Checked in a fixed order (checks before expect), reported in file order.
    std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::pair(a.line, a.column) < std::pair(b.line, b.column);
    });
    result.diagnostics = std::move(diags_);
    if (result.diagnostics.empty()) result.scenario = std::move(s);
    return result;
  }

 private:
  void error(const YAML::Mark& mark, std::string field, std::string message) {
    Diagnostic d;
    d.file = ctx_.file;
    d.line = mark.line >= 0 ? mark.line + 1 : 0;
    d.column = mark.line >= 0 && mark.column >= 0 ? mark.column + 1 : 0;
    d.field = std::move(field);
    d.message = std::move(message);
    diags_.push_back(std::move(d));
  }

  void missing(const YAML::Node& map, const std::string& path) {
    error(map.Mark(), path, "missing required field");
  }

  void wrong_type(const Entry& e, std::string_view expected) {
    error(e.where(), e.path, "expected " + std::string(expected) + ", got " + describe(e.value));
  }

  // The entries of `map` in document order. Non-string and duplicate keys are
  // reported and dropped; so are keys outside `accepted` when it is given.
  std::vector<Entry> entries(const YAML::Node& map, const std::string& path, const Keys* accepted,
                             std::string_view noun = "key") {
    std::vector<Entry> out;
    for (auto it = map.begin(); it != map.end(); ++it) {
      YAML::Node key = it->first;
      if (!key.IsScalar()) {
        error(key.Mark(), path, "keys must be strings, got " + describe(key));
        continue;
      }
      const std::string& name = key.Scalar();
      if (accepted != nullptr && !contains(*accepted, name)) {
        std::string list_name = noun == "key" ? "accepted" : "known " + std::string(noun) + "s";
        error(key.Mark(), child(path, name),
              "unknown " + std::string(noun) + " '" + name + "' (" + list_name + ": " +
                  join(*accepted) + ")");
        continue;
      }
      auto dup =
          std::find_if(out.begin(), out.end(), [&](const Entry& e) { return e.name == name; });
      if (dup != out.end()) {
        error(key.Mark(), child(path, name),
              "duplicate key '" + name + "' (first at line " +
                  std::to_string(dup->key.Mark().line + 1) + ")");
        continue;
      }
      out.push_back(Entry{name, key, it->second, child(path, name)});
    }
    return out;
  }

  static const Entry* find(const std::vector<Entry>& es, std::string_view name) {
    for (const Entry& e : es)
      if (e.name == name) return &e;
    return nullptr;
  }

  std::optional<std::string> string_value(const Entry& e) {
    if (!e.value.IsScalar()) {
      wrong_type(e, "a string");
      return std::nullopt;
    }
    return e.value.Scalar();
  }

  // A list item as an Entry, so items share the scalar/duration helpers.
  static Entry list_item(const Entry& list, size_t i, const YAML::Node& node) {
    // A null item's mark is unreliable: fall back to the list's key.
    return Entry{"", node.IsNull() || node.Mark().line < 0 ? list.key : node, node,
                 item(list.path, i)};
  }

  // Each item of a list of strings, with its Entry. Non-scalar items are reported.
  std::vector<std::pair<std::string, Entry>> string_list(const Entry& e) {
    std::vector<std::pair<std::string, Entry>> out;
    if (!e.value.IsSequence()) {
      wrong_type(e, "a list");
      return out;
    }
    for (size_t i = 0; i < e.value.size(); ++i) {
      Entry it = list_item(e, i, e.value[i]);
      if (auto s = string_value(it)) out.emplace_back(*s, it);
    }
    return out;
  }

  std::optional<Nanos> duration(const Entry& e) {
    if (!e.value.IsScalar()) {
      wrong_type(e, "a duration like 500ms or 20s");
      return std::nullopt;
    }
    const std::string& s = e.value.Scalar();
    bool bare = !s.empty() && s.find_first_not_of("+-0123456789.") == std::string::npos &&
                s.find_first_of("0123456789") != std::string::npos;
    if (bare) {
      error(e.where(), e.path, "bare number '" + s + "' needs a unit, e.g. 5s");
      return std::nullopt;
    }
    if (!s.empty() && s[0] == '-') {
      error(e.where(), e.path, "duration '" + s + "' must not be negative");
      return std::nullopt;
    }
    std::optional<Nanos> d = parse_duration(s);
    if (!d) {
      error(e.where(), e.path,
            "invalid duration '" + s + "' (a number with a unit: ns, us, ms, s, m, h; e.g. 500ms)");
    }
    return d;
  }

  // `grace:` as one duration, or a map of roles: {default: 1s, helper: 3s}.
  void parse_grace(const Entry& e, std::optional<Nanos>* all, std::map<Role, Nanos>* by_role) {
    if (e.value.IsScalar()) {
      *all = bounded_duration(e, false);
      return;
    }
    if (!e.value.IsMap()) {
      wrong_type(e, "a duration, or a map of roles to durations like {default: 1s, helper: 3s}");
      return;
    }
    static const Keys kGraceKeys = {"default", "launcher", "rank", "worker", "helper", "unknown"};
    for (const Entry& r : entries(e.value, e.path, &kGraceKeys, "role")) {
      auto d = bounded_duration(r, false);
      if (!d) continue;
      if (r.name == "default") *all = *d;
      else (*by_role)[*parse_role(r.name)] = *d;
    }
  }

  // Duration with a lower bound (`positive`: > 0, else >= 0).
  std::optional<Nanos> bounded_duration(const Entry& e, bool positive) {
    std::optional<Nanos> d = duration(e);
    if (d && positive && *d <= 0) {
      error(e.where(), e.path, "must be > 0");
      return std::nullopt;
    }
    return d;
  }

  std::optional<std::string> lookup(const std::string& name) const {
    if (auto it = vars_.find(name); it != vars_.end()) return it->second;
    if (const char* v = std::getenv(name.c_str())) return std::string(v);
    return std::nullopt;
  }

  // Expands every ${NAME}; each unknown name is its own diagnostic.
  std::optional<std::string> expand(const std::string& in, const Entry& e) {
    std::string out;
    bool ok = true;
    size_t i = 0;
    while (i < in.size()) {
      if (in[i] != '$' || i + 1 >= in.size() || in[i + 1] != '{') {
        out += in[i++];
        continue;
      }
      size_t close = in.find('}', i + 2);
      if (close == std::string::npos) {
        error(e.where(), e.path, "unterminated '${' in '" + in + "'");
        return std::nullopt;
      }
      std::string name = in.substr(i + 2, close - i - 2);
      if (name.empty()) {
        error(e.where(), e.path, "empty variable name '${}' in '" + in + "'");
        ok = false;
      } else if (std::optional<std::string> v = lookup(name)) {
        out += *v;
      } else {
        error(e.where(), e.path,
              "unknown variable ${" + name + "} (not a harness variable nor in the environment)");
        ok = false;
      }
      i = close + 1;
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<std::string> expanded_string(const Entry& e) {
    std::optional<std::string> s = string_value(e);
    if (!s) return std::nullopt;
    return expand(*s, e);
  }

  // --- sections -------------------------------------------------------------

  void parse_into(Scenario* s) {
    s->file = ctx_.file;
    s->text = std::string(text_);
    // Every known check gets an entry: the defaults enabled, the opt-in ones not.
    for (const std::string& name : known_checks()) s->checks[name].enabled = false;
    for (const std::string& name : default_checks()) s->checks[name].enabled = true;

    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(std::string(text_));
    } catch (const YAML::Exception& e) {
      error(e.mark, "", e.msg);
      return;
    }
    if (docs.empty() || docs[0].IsNull()) {
      error(YAML::Mark::null_mark(), "",
            "empty scenario: expected a map with name, description and job");
      return;
    }
    for (size_t i = 1; i < docs.size(); ++i) {
      if (!docs[i].IsNull()) {
        error(docs[i].Mark(), "", "only one YAML document is allowed per scenario file");
        break;
      }
    }
    const YAML::Node& root = docs[0];
    if (!root.IsMap()) {
      error(root.Mark(), "", "the top level must be a map, got " + describe(root));
      return;
    }

    std::vector<Entry> top = entries(root, "", &kTopKeys);
    if (const Entry* e = find(top, "name")) {
      parse_name(*e, &s->name);
    } else {
      missing(root, "name");
    }
    if (const Entry* e = find(top, "description")) {
      if (auto v = string_value(*e)) {
        if (v->empty()) error(e->where(), e->path, "must not be empty");
        s->description = *v;
      }
    } else {
      missing(root, "description");
    }
    if (const Entry* e = find(top, "tags")) {
      for (auto& [tag, it] : string_list(*e)) {
        if (tag.empty()) error(it.where(), it.path, "must not be empty");
        s->tags.push_back(tag);
      }
    }
    if (const Entry* e = find(top, "requires")) {
      for (auto& [req, it] : string_list(*e)) {
        if (!contains(kRequirements, req)) {
          error(it.where(), it.path,
                "unknown requirement '" + req + "' (known: " + join(kRequirements) + ")");
        }
        s->requires_.push_back(req);
      }
    }
    if (const Entry* e = find(top, "job")) {
      parse_job(*e, &s->job);
    } else {
      missing(root, "job");
    }
    if (const Entry* e = find(top, "timeouts")) parse_timeouts(*e, &s->timeouts);
    if (const Entry* e = find(top, "grace")) {
      std::optional<Nanos> all;
      parse_grace(*e, &all, &s->role_grace);
      if (all) s->grace = *all;
    }
    if (const Entry* e = find(top, "sample_interval")) {
      if (auto d = duration(*e)) {
        if (*d < 1 * kMilli || *d > 10 * kSecond) {
          error(e->where(), e->path, "must be between 1ms and 10s");
        }
        s->sample_interval = *d;
      }
    }
    if (const Entry* e = find(top, "seed")) parse_seed(*e, &s->seed);
    if (const Entry* e = find(top, "checks")) parse_checks(*e, &s->checks);
    // After checks: expect.fail may only name enabled checks.
    if (const Entry* e = find(top, "expect")) parse_expect(*e, s->checks, &s->expect);
    if (const Entry* e = find(top, "faults")) parse_faults(*e, &s->faults);
  }

 public:
  void parse_faults(const Entry& fe, std::vector<FaultSpec>* out) {
    if (!fe.value.IsSequence()) {
      wrong_type(fe, "a list of faults");
      return;
    }
    for (size_t i = 0; i < fe.value.size(); ++i) {
      Entry it = list_item(fe, i, fe.value[i]);
      if (auto f = parse_fault(it)) out->push_back(std::move(*f));
    }
  }

  std::optional<FaultSpec> parse_fault(const Entry& fe) {
    if (!fe.value.IsMap()) {
      wrong_type(fe, "a map {action, target, at}");
      return std::nullopt;
    }
    size_t before = diags_.size();
    FaultSpec f;
    f.line = fe.value.Mark().line + 1;
    std::vector<Entry> es = entries(fe.value, fe.path, &kFaultKeys);
    const Entry* action = find(es, "action");
    if (!action) {
      missing(fe.value, child(fe.path, "action"));
    } else if (auto a = string_value(*action)) {
      std::string name = *a;
      std::optional<int> sig = parse_signal(name);
      if (sig && name.rfind("SIG", 0) != 0) name = signal_name(*sig);
      if (std::find(known_fault_actions().begin(), known_fault_actions().end(), name) ==
          known_fault_actions().end()) {
        std::string known;
        for (const auto& k : known_fault_actions()) known += (known.empty() ? "" : ", ") + k;
        error(action->where(), action->path,
              "unknown action '" + *a + "' (known actions: " + known + ")");
      } else {
        f.action = *parse_fault_action(name);
        if (sig) f.signal = *sig;
      }
    }
    if (const Entry* t = find(es, "target")) {
      if (auto text = string_value(*t)) {
        std::string why;
        if (auto spec = parse_target(*text, &why)) {
          f.target = *spec;
        } else {
          error(t->where(), t->path, why);
        }
      }
    } else if (f.action != FaultAction::Delay && f.action != FaultAction::Hang) {
      // A point's own process is the natural target of in-process faults;
      // everything else must say whom it hits.
      if (f.action == FaultAction::HostOom || f.action == FaultAction::DeviceOom) {
        f.target.kind = TargetSpec::Kind::Self;
        f.target.text = "self";
      } else {
        missing(fe.value, child(fe.path, "target"));
      }
    } else {
      f.target.kind = TargetSpec::Kind::Self;
      f.target.text = "self";
    }
    if (const Entry* at = find(es, "at")) {
      parse_trigger(*at, &f.at);
    } else {
      missing(fe.value, child(fe.path, "at"));
    }
    if (const Entry* d = find(es, "duration")) {
      if (f.action != FaultAction::Delay) error(d->key.Mark(), d->path, "only a delay takes a duration");
      if (auto v = bounded_duration(*d, true)) f.duration = *v;
    } else if (f.action == FaultAction::Delay) {
      missing(fe.value, child(fe.path, "duration"));
    }
    if (const Entry* r = find(es, "resume_after")) {
      if (f.action != FaultAction::Sigstop) error(r->key.Mark(), r->path, "only SIGSTOP takes resume_after");
      if (auto v = bounded_duration(*r, true)) f.resume_after = *v;
    }
    if (f.action == FaultAction::DeviceOom) f.mechanism = FaultMechanism::Point;
    if (const Entry* m = find(es, "mechanism")) {
      if (auto v = string_value(*m)) {
        if (f.action == FaultAction::HostOom) {
          if (*v != "auto" && *v != "rlimit" && *v != "cgroup")
            error(m->where(), m->path, "unknown mechanism '" + *v + "' (auto, rlimit, cgroup)");
        } else if (f.action == FaultAction::DeviceOom) {
          if (*v != "point" && *v != "hog" && *v != "interposer")
            error(m->where(), m->path, "unknown mechanism '" + *v + "' (point, hog, interposer)");
        } else {
          error(m->key.Mark(), m->path, "only host_oom and device_oom take a mechanism");
        }
        f.mechanism = parse_fault_mechanism(*v).value_or(FaultMechanism::None);
      }
    }
    // The hog's share of free device memory, or its exact bytes, and which GPU.
    bool hog = f.action == FaultAction::DeviceOom && f.mechanism == FaultMechanism::Hog;
    if (hog && !find(es, "target")) {
      // The hog acts on a GPU, not on a process: no target to name.
      f.target.kind = TargetSpec::Kind::All;
      f.target.text = "all";
    }
    if (const Entry* sh = find(es, "share")) {
      double v = 0;
      if (!hog) {
        error(sh->key.Mark(), sh->path, "only device_oom with mechanism: hog takes a share");
      } else if (!sh->value.IsScalar() || !YAML::convert<double>::decode(sh->value, v) ||
                 !(v > 0 && v <= 1)) {
        error(sh->where(), sh->path, "expected a fraction of free memory in (0, 1], e.g. 0.95");
      } else {
        f.share = v;
      }
    }
    if (const Entry* b = find(es, "bytes")) {
      auto v = b->value.IsScalar() ? parse_bytes(b->value.Scalar()) : std::nullopt;
      if (!hog) {
        error(b->key.Mark(), b->path, "only device_oom with mechanism: hog takes bytes");
      } else if (find(es, "share")) {
        error(b->key.Mark(), b->path, "share and bytes are mutually exclusive");
      } else if (std::int64_t n = v.value_or(0); n <= 0) {
        error(b->where(), b->path, "expected a size like 40GiB or 512MiB");
      } else {
        f.bytes = n;
      }
    }
    if (const Entry* h = find(es, "headroom")) {
      auto v = h->value.IsScalar() ? parse_bytes(h->value.Scalar()) : std::nullopt;
      if (f.action != FaultAction::HostOom) {
        error(h->key.Mark(), h->path, "only host_oom takes a headroom");
      } else if (std::int64_t n = v.value_or(0); n <= 0) {
        error(h->where(), h->path, "expected a size like 16MiB or 1GiB");
      } else {
        f.headroom = n;
      }
    }
    if (const Entry* o = find(es, "optional")) {
      bool on = false;
      if (o->value.IsScalar() && YAML::convert<bool>::decode(o->value, on)) {
        f.optional = on;
      } else {
        wrong_type(*o, "true or false");
      }
    }
    if (const Entry* d = find(es, "device")) {
      const std::string s = d->value.IsScalar() ? d->value.Scalar() : "";
      if (!hog) {
        error(d->key.Mark(), d->path, "only device_oom with mechanism: hog takes a device");
      } else if (s.empty() || s.size() > 4 || s.find_first_not_of("0123456789") != std::string::npos) {
        error(d->where(), d->path, "expected a CUDA device ordinal (0, 1, ...)");
      } else {
        f.device = std::stoi(s);
      }
    }
    // Combinations that cannot work.
    bool at_point = f.at.kind == TriggerSpec::Kind::Point;
    if (f.target.kind == TargetSpec::Kind::Self && !at_point && f.action != FaultAction::None &&
        diags_.size() == before) {
      error(fe.value.Mark(), child(fe.path, "target"),
            "target 'self' (the process at a point) needs an `at: {point: ...}` trigger");
    }
    if ((f.action == FaultAction::Delay || f.action == FaultAction::Hang ||
         (f.action == FaultAction::DeviceOom && f.mechanism == FaultMechanism::Point) ||
         (f.action == FaultAction::HostOom && f.mechanism == FaultMechanism::Rlimit)) &&
        !at_point && diags_.size() == before) {
      error(fe.value.Mark(), child(fe.path, "at"),
            "'" + std::string(to_string(f.action)) + "' acts inside the job at a point: it needs `at: {point: ...}`");
    }
    if ((f.action == FaultAction::Delay || f.action == FaultAction::Hang) && f.target.kind != TargetSpec::Kind::Self &&
        diags_.size() == before) {
      error(fe.value.Mark(), child(fe.path, "target"),
            "'" + std::string(to_string(f.action)) + "' holds the process at the point: its target can only be self");
    }
    if (diags_.size() != before) return std::nullopt;
    return f;
  }

  void parse_trigger(const Entry& te, TriggerSpec* t) {
    if (!te.value.IsMap()) {
      wrong_type(te, "a map: {point: NAME, labels: {...}, hit: N} | {after: 2s} | {when: {...}} | "
                     "{phase: startup|steady|shutdown}");
      return;
    }
    std::vector<Entry> es = entries(te.value, te.path, &kTriggerKeys);
    int kinds = (find(es, "point") != nullptr) + (find(es, "after") != nullptr) +
                (find(es, "when") != nullptr) + (find(es, "phase") != nullptr);
    if (kinds != 1) {
      error(te.where(), te.path, "needs exactly one of point, after, when, phase");
      return;
    }
    if (const Entry* p = find(es, "point")) {
      t->kind = TriggerSpec::Kind::Point;
      if (auto v = string_value(*p)) {
        if (v->empty() || v->find_first_of(";{}#=,") != std::string::npos)
          error(p->where(), p->path, "a point name must be non-empty and free of ; { } # = ,");
        t->point = *v;
      }
      if (const Entry* l = find(es, "labels")) {
        if (!l->value.IsMap()) {
          wrong_type(*l, "a map of label: value");
        } else {
          for (const Entry& le : entries(l->value, l->path, nullptr)) {
            if (le.name.empty() || le.name.find_first_of(";{}#=,") != std::string::npos)
              error(le.key.Mark(), le.path, "a label name must be non-empty and free of ; { } # = ,");
            if (auto v = string_value(le)) {
              if (v->find_first_of(";{}#=,") != std::string::npos)
                error(le.where(), le.path, "a label value must be free of ; { } # = ,");
              t->labels[le.name] = *v;
            }
          }
        }
      }
      if (const Entry* h = find(es, "hit")) {
        const std::string s = h->value.IsScalar() ? h->value.Scalar() : "";
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12 ||
            std::stoll(s) < 1) {
          error(h->where(), h->path, "hit must be a positive integer (1 = the first hit)");
        } else {
          t->hit = std::stoll(s);
        }
      }
      t->text = "point " + t->point;
      for (const auto& [k, v] : t->labels) t->text += " " + k + "=" + v;
      if (t->hit) t->text += " hit " + std::to_string(*t->hit);
      return;
    }
    for (const char* k : {"labels", "hit"}) {
      if (const Entry* e = find(es, k)) error(e->key.Mark(), e->path, "only a point takes " + std::string(k));
    }
    if (const Entry* a = find(es, "after")) {
      t->kind = TriggerSpec::Kind::After;
      if (auto d = bounded_duration(*a, false)) t->after = *d;
      t->text = "after " + format_duration(t->after);
      return;
    }
    if (const Entry* ph = find(es, "phase")) {
      t->kind = TriggerSpec::Kind::Phase;
      if (auto v = string_value(*ph)) {
        if (!contains(kPhases, *v)) {
          error(ph->where(), ph->path, "unknown phase '" + *v + "' (" + join(kPhases) + ")");
        }
        t->phase = *v;
      }
      t->text = "phase " + t->phase;
      return;
    }
    const Entry* w = find(es, "when");
    t->kind = TriggerSpec::Kind::When;
    if (!w->value.IsMap()) {
      wrong_type(*w, "a map: {workers: {rank: R, count: N}} | {processes: N} | {shm_entries: N} | "
                     "{state: D}");
      return;
    }
    std::vector<Entry> ps = entries(w->value, w->path, &kPredicateKeys);
    if (ps.size() != 1) {
      if (!ps.empty()) error(w->where(), w->path, "needs exactly one predicate");
      else if (w->value.size() == 0) error(w->where(), w->path, "needs a predicate");
      return;
    }
    const Entry& p = ps[0];
    Predicate& pr = t->when;
    auto count_of = [&](const Entry& e) -> int {
      const std::string s = e.value.IsScalar() ? e.value.Scalar() : "";
      if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) {
        error(e.where(), e.path, "expected a count (a non-negative integer)");
        return 0;
      }
      return std::stoi(s);
    };
    if (p.name == "workers") {
      pr.kind = Predicate::Kind::Workers;
      if (p.value.IsMap()) {
        static const Keys kWorkerKeys = {"rank", "count"};
        std::vector<Entry> ws = entries(p.value, p.path, &kWorkerKeys);
        if (const Entry* r = find(ws, "rank")) pr.rank = count_of(*r);
        if (const Entry* c = find(ws, "count")) pr.count = count_of(*c);
        else missing(p.value, child(p.path, "count"));
      } else {
        pr.count = count_of(p);
      }
      pr.text = "workers" + (pr.rank >= 0 ? " of rank " + std::to_string(pr.rank) : std::string()) +
                " >= " + std::to_string(pr.count);
    } else if (p.name == "processes") {
      pr.kind = Predicate::Kind::Processes;
      pr.count = count_of(p);
      pr.text = "processes >= " + std::to_string(pr.count);
    } else if (p.name == "shm_entries") {
      pr.kind = Predicate::Kind::ShmEntries;
      pr.count = count_of(p);
      pr.text = "new /dev/shm entries >= " + std::to_string(pr.count);
    } else {
      pr.kind = Predicate::Kind::State;
      auto v = string_value(p);
      if (v && (v->size() != 1 || std::string("RSDZTtXIWP").find((*v)[0]) == std::string::npos)) {
        error(p.where(), p.path, "expected a /proc state letter: R, S, D, Z, T, t, X, I");
      } else if (v) {
        pr.state = (*v)[0];
      }
      pr.text = std::string("a process in state ") + (pr.state ? std::string(1, pr.state) : "?");
    }
    t->text = "when " + pr.text;
  }

  // For --fault: a bare fault map as its own document.
  std::optional<FaultSpec> parse_fault_document() {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text_));
    } catch (const YAML::Exception& e) {
      error(e.mark, "", e.msg);
      return std::nullopt;
    }
    Entry e{"", root, root, "fault"};
    return parse_fault(e);
  }
  // `--check 'NAME: {params}'`: a map of checks, as under checks:, merged
  // into *checks.
  void parse_checks_document(std::map<std::string, CheckConfig>* checks) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text_));
    } catch (const YAML::Exception& e) {
      error(e.mark, "", e.msg);
      return;
    }
    Entry e{"", root, root, ""};
    parse_checks(e, checks);
  }
  std::vector<Diagnostic> take_diagnostics() { return std::move(diags_); }

 private:
  void parse_name(const Entry& e, std::string* out) {
    std::optional<std::string> v = string_value(e);
    if (!v) return;
    auto first_ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    auto rest_ok = [&](char c) { return first_ok(c) || c == '.' || c == '_' || c == '-'; };
    bool ok = !v->empty() && first_ok((*v)[0]) && std::all_of(v->begin() + 1, v->end(), rest_ok);
    if (!ok) {
      error(e.where(), e.path,
            "invalid name '" + *v +
                "' (lower-case letters, digits, '.', '_', '-'; starting with a letter or digit)");
    }
    *out = *v;
  }

  void parse_job(const Entry& je, Job* job) {
    if (!je.value.IsMap()) {
      wrong_type(je, "a map");
      return;
    }
    std::vector<Entry> es = entries(je.value, je.path, &kJobKeys);

    std::vector<std::string> argv;
    bool argv_ok = true;
    std::optional<Entry> prog;  // where argv[0] came from, for lookup errors
    bool string_command = false;
    if (const Entry* cmd = find(es, "command")) {
      if (cmd->value.IsScalar()) {
        string_command = true;
        prog = *cmd;
        if (std::optional<std::string> v = expand(cmd->value.Scalar(), *cmd)) {
          if (v->empty()) {
            error(cmd->where(), cmd->path, "must not be empty");
            argv_ok = false;
          }
          argv.push_back(*v);
        } else {
          argv_ok = false;
        }
      } else if (cmd->value.IsSequence()) {
        if (cmd->value.size() == 0) {
          error(cmd->where(), cmd->path, "must not be empty: a list [program, arg, ...]");
          argv_ok = false;
        }
        for (size_t i = 0; i < cmd->value.size(); ++i) {
          Entry it = list_item(*cmd, i, cmd->value[i]);
          if (i == 0) prog = it;
          std::optional<std::string> v = expanded_string(it);
          if (!v) {
            argv_ok = false;
            continue;
          }
          if (i == 0 && v->empty()) {
            error(it.where(), it.path, "the program must not be empty");
            argv_ok = false;
          }
          argv.push_back(*v);
        }
      } else {
        wrong_type(*cmd, "a string or a list [program, arg, ...]");
        argv_ok = false;
      }
    } else {
      missing(je.value, child(je.path, "command"));
      argv_ok = false;
    }

    if (const Entry* args = find(es, "args")) {
      if (!args->value.IsSequence()) {
        wrong_type(*args, "a list");
      } else {
        for (size_t i = 0; i < args->value.size(); ++i) {
          Entry it = list_item(*args, i, args->value[i]);
          if (std::optional<std::string> v = expanded_string(it)) argv.push_back(*v);
        }
      }
    }

    if (const Entry* env = find(es, "env")) {
      if (!env->value.IsMap()) {
        wrong_type(*env, "a map of NAME: value");
      } else {
        for (const Entry& var : entries(env->value, env->path, nullptr)) {
          if (var.name.empty() || var.name.find('=') != std::string::npos) {
            error(var.key.Mark(), var.path, "invalid environment variable name '" + var.name + "'");
            continue;
          }
          if (var.value.IsNull()) {
            error(var.where(), var.path, "expected a value (write \"\" for an empty one)");
            continue;
          }
          if (std::optional<std::string> v = expanded_string(var)) job->env[var.name] = *v;
        }
      }
    }

    if (const Entry* cwd = find(es, "cwd")) {
      if (std::optional<std::string> v = expanded_string(*cwd)) {
        if (v->empty()) {
          error(cwd->where(), cwd->path, "must not be empty");
        } else {
          fs::path p(*v);
          job->cwd = absolute_normal(p.is_relative() ? fs::path(base_dir_) / p : p);
          if (ctx_.check_command) {
            struct stat st;
            if (::stat(job->cwd.c_str(), &st) != 0) {
              error(cwd->where(), cwd->path, job->cwd + ": " + errno_text(errno));
            } else if (!S_ISDIR(st.st_mode)) {
              error(cwd->where(), cwd->path, job->cwd + ": not a directory");
            }
          }
        }
      }
    }

    if (argv_ok && !argv.empty() && ctx_.check_command) {
      if (std::optional<std::string> resolved = resolve(argv[0], *prog, string_command)) {
        argv[0] = *resolved;
      }
    }
    job->argv = std::move(argv);
  }

  // The absolute path of an existing executable for `cmd`, or a diagnostic.
  std::optional<std::string> resolve(const std::string& cmd, const Entry& where,
                                     bool string_command) {
    if (cmd.find('/') == std::string::npos) {
      if (std::optional<std::string> found = search_path(cmd)) return found;
      std::string hint;
      if (string_command && cmd.find_first_of(" \t") != std::string::npos) {
        hint = " (a string command is one program; put its arguments in a list or in job.args)";
      }
      error(where.where(), where.path, "command '" + cmd + "' not found in PATH" + hint);
      return std::nullopt;
    }
    fs::path p(cmd);
    std::string abs = absolute_normal(p.is_relative() ? fs::path(base_dir_) / p : p);
    struct stat st;
    if (::stat(abs.c_str(), &st) != 0) {
      error(where.where(), where.path, "command not found: " + abs + ": " + errno_text(errno));
      return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) {
      error(where.where(), where.path, "command is not a regular file: " + abs);
      return std::nullopt;
    }
    if (::access(abs.c_str(), X_OK) != 0) {
      error(where.where(), where.path, "command is not executable: " + abs);
      return std::nullopt;
    }
    return abs;
  }

  void parse_timeouts(const Entry& te, Timeouts* t) {
    if (!te.value.IsMap()) {
      wrong_type(te, "a map");
      return;
    }
    std::vector<Entry> es = entries(te.value, te.path, &kTimeoutKeys);
    if (const Entry* e = find(es, "job")) {
      if (auto d = bounded_duration(*e, true)) t->job = *d;
    }
    if (const Entry* e = find(es, "settle")) {
      if (auto d = bounded_duration(*e, false)) t->settle = *d;
    }
    if (const Entry* e = find(es, "teardown")) {
      if (auto d = bounded_duration(*e, true)) t->teardown = *d;
    }
  }

  void parse_seed(const Entry& e, std::optional<std::uint64_t>* seed) {
    if (!e.value.IsScalar()) {
      wrong_type(e, "a non-negative integer");
      return;
    }
    const std::string& s = e.value.Scalar();
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) {
      error(e.where(), e.path, "expected a non-negative integer, got '" + s + "'");
      return;
    }
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno == ERANGE) {
      error(e.where(), e.path, "seed '" + s + "' does not fit in 64 bits");
      return;
    }
    *seed = static_cast<std::uint64_t>(v);
  }

  void parse_checks(const Entry& ce, std::map<std::string, CheckConfig>* checks) {
    if (!ce.value.IsMap()) {
      wrong_type(ce, "a map of check: true | false | {params}");
      return;
    }
    for (const Entry& e : entries(ce.value, ce.path, &known_check_keys(), "check")) {
      CheckConfig& cfg = (*checks)[e.name];
      if (e.value.IsScalar()) {
        bool on = false;
        if (YAML::convert<bool>::decode(e.value, on)) {
          cfg.enabled = on;
        } else {
          wrong_type(e, "true, false or a map of parameters");
        }
      } else if (e.value.IsMap()) {
        cfg.enabled = true;
        parse_check_params(e, &cfg);
      } else {
        wrong_type(e, "true, false or a map of parameters");
      }
    }
  }

  void parse_check_params(const Entry& ce, CheckConfig* cfg) {
    bool job_exit = ce.name == "job_exit";
    const Keys* keys = job_exit                                   ? &kJobExitParams
                       : ce.name == "memory_growth"               ? &kMemoryGrowthParams
                       : ce.name == "device_memory_released"      ? &kDeviceMemoryParams
                       : ce.name == "no_zombies"                  ? &kNoZombiesParams
                       : ce.name == "no_hang"                     ? &kNoHangParams
                                                                  : &kCheckParams;
    std::vector<Entry> es = entries(ce.value, ce.path, keys);
    if (const Entry* e = find(es, "grace")) parse_grace(*e, &cfg->grace, &cfg->role_grace);
    if (ce.name == "memory_growth") parse_memory_growth(ce, es, cfg);
    if (ce.name == "device_memory_released") parse_device_memory(es, cfg);
    if (ce.name == "no_hang") {
      // A hang is declared once no job process has made progress for this
      // long (no CPU time, no start or exit, no event or point).
      if (const Entry* e = find(es, "stall")) {
        if (auto d = bounded_duration(*e, true)) {
          if (cfg->params.is_null()) cfg->params = nlohmann::json::object();
          cfg->params["stall_ns"] = *d;
        }
      }
    }
    if (ce.name == "no_zombies") {
      // How often the job's launcher reaps its children (torchrun's is read
      // from its command line): a zombie under it may wait that long more.
      if (const Entry* e = find(es, "launcher_poll")) {
        if (auto d = bounded_duration(*e, false)) {
          if (cfg->params.is_null()) cfg->params = nlohmann::json::object();
          cfg->params["launcher_poll_ns"] = *d;
        }
      }
    }
    if (!job_exit) return;
    JobExitExpect& je = cfg->job_exit;
    const Entry* code = find(es, "code");
    if (code != nullptr) {
      const std::string s = code->value.IsScalar() ? code->value.Scalar() : "";
      bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      bool negative =
          s.size() > 1 && s[0] == '-' && s.find_first_not_of("0123456789", 1) == std::string::npos;
      if (!code->value.IsScalar() || (!digits && !negative)) {
        wrong_type(*code, "an exit code (an integer 0..255)");
      } else if (negative || s.size() > 3 || std::stoi(s) > 255) {
        error(code->where(), code->path, "exit code " + s + " is out of range 0..255");
      } else {
        je.code = std::stoi(s);
      }
    }
    if (const Entry* sig = find(es, "signal")) {
      if (code != nullptr) {
        // A killed process has no exit code, so both can never match.
        error(sig->key.Mark(), sig->path, "code and signal are mutually exclusive");
      } else if (!sig->value.IsScalar()) {
        wrong_type(*sig, "a signal name like SIGKILL or a number 1..64");
      } else if (std::optional<int> n = parse_signal(sig->value.Scalar())) {
        je.signal = *n;
      } else {
        error(sig->where(), sig->path,
              "unknown signal '" + sig->value.Scalar() +
                  "' (a name like SIGKILL or KILL, or a number 1..64)");
      }
    }
    if (const Entry* re = find(es, "output_regex")) {
      if (std::optional<std::string> s = string_value(*re)) {
        try {
          std::regex compiled(*s, std::regex::ECMAScript);
          je.output_regex = *s;
        } catch (const std::regex_error& err) {
          error(re->where(), re->path, "invalid regex '" + *s + "': " + err.what());
        }
      }
    }
  }

  // A YAML scalar as JSON: an integer, a number, else a string.
  static nlohmann::json scalar_json(const YAML::Node& v) {
    long long i = 0;
    double d = 0;
    const std::string& s = v.Scalar();
    if (s.find_first_not_of("+-0123456789") == std::string::npos &&
        YAML::convert<long long>::decode(v, i))
      return i;
    if (YAML::convert<double>::decode(v, d) && s.find_first_of("0123456789") != std::string::npos)
      return d;
    return s;
  }

  // memory_growth's parameters, validated by the check's own parser; its
  // error names the key, which locates the diagnostic.
  void parse_memory_growth(const Entry& ce, const std::vector<Entry>& es, CheckConfig* cfg) {
    nlohmann::json params = nlohmann::json::object();
    for (const Entry& e : es) {
      if (e.name == "grace") continue;
      if (!e.value.IsScalar()) {
        wrong_type(e, "a number or a name");
        return;
      }
      params[e.name] = scalar_json(e.value);
    }
    std::string why;
    if (!parse_memory_growth_params(params, &why)) {
      const Entry* at = &ce;
      std::string message = why;
      if (auto colon = why.find(": "); colon != std::string::npos) {
        if (const Entry* e = find(es, why.substr(0, colon))) {
          at = e;
          message = why.substr(colon + 2);
        }
      }
      error(at->where(), at->path, message);
      return;
    }
    cfg->params = std::move(params);
  }

  void parse_device_memory(const std::vector<Entry>& es, CheckConfig* cfg) {
    nlohmann::json params = nlohmann::json::object();
    if (const Entry* e = find(es, "tolerance")) {
      std::optional<std::int64_t> b =
          e->value.IsScalar() ? parse_bytes(e->value.Scalar()) : std::nullopt;
      if (!b || *b < 0) {
        error(e->where(), e->path,
              "expected a size like 64MiB, 1GiB or 500MB, got " + describe(e->value));
        return;
      }
      params["tolerance_bytes"] = *b;
    }
    if (const Entry* e = find(es, "deadline")) {
      auto d = bounded_duration(*e, true);
      if (!d) return;
      params["deadline_ns"] = *d;
    }
    cfg->params = std::move(params);
  }

  void parse_expect(const Entry& ee, const std::map<std::string, CheckConfig>& checks,
                    Expectation* ex) {
    if (ee.value.IsScalar()) {
      if (ee.value.Scalar() != "pass") {
        error(ee.where(), ee.path,
              "expected 'pass' or a map {fail: [checks...], reason: text}, got " +
                  describe(ee.value));
      }
      return;
    }
    if (!ee.value.IsMap()) {
      wrong_type(ee, "'pass' or a map {fail: [checks...], reason: text}");
      return;
    }
    std::vector<Entry> es = entries(ee.value, ee.path, &kExpectKeys);
    if (const Entry* fail = find(es, "fail")) {
      ex->expect_pass = false;
      if (fail->value.IsSequence() && fail->value.size() == 0) {
        error(fail->where(), fail->path, "must list at least one check");
      }
      for (auto& [name, it] : string_list(*fail)) {
        if (!contains(known_check_keys(), name)) {
          error(it.where(), it.path,
                "unknown check '" + name + "' (known checks: " + join(known_check_keys()) + ")");
        } else if (auto c = checks.find(name); c != checks.end() && !c->second.enabled) {
          error(it.where(), it.path,
                "check '" + name + "' is disabled in checks, so it cannot be expected to fail");
        } else if (!ex->failing.insert(name).second) {
          error(it.where(), it.path, "check '" + name + "' is listed twice");
        }
      }
    } else {
      missing(ee.value, child(ee.path, "fail"));
    }
    if (const Entry* reason = find(es, "reason")) {
      if (std::optional<std::string> s = string_value(*reason)) ex->reason = *s;
    }
  }

  std::string_view text_;
  const ParseContext& ctx_;
  std::string base_dir_;
  std::map<std::string, std::string> vars_;
  std::vector<Diagnostic> diags_;
};

}  // namespace

ParseResult parse_scenario(std::string_view text, const ParseContext& ctx) {
  try {
    return Parser(text, ctx).parse();
  } catch (const std::exception& e) {
    // Only allocation failure can get here; still a diagnostic, never a throw.
    ParseResult r;
    r.diagnostics.push_back(
        Diagnostic{ctx.file, 0, 0, "", std::string("internal error: ") + e.what()});
    return r;
  }
}

std::optional<FaultSpec> parse_fault_text(std::string_view yaml, const std::string& label,
                                          std::vector<Diagnostic>* diagnostics) {
  ParseContext ctx;
  ctx.file = label;
  ctx.check_command = false;
  Parser p(yaml, ctx);
  auto f = p.parse_fault_document();
  auto d = p.take_diagnostics();
  if (diagnostics) diagnostics->insert(diagnostics->end(), d.begin(), d.end());
  return d.empty() ? f : std::nullopt;
}

bool parse_checks_text(std::string_view yaml, const std::string& label,
                       std::map<std::string, CheckConfig>* checks, std::vector<Diagnostic>* diagnostics) {
  ParseContext ctx;
  ctx.file = label;
  ctx.check_command = false;
  Parser p(yaml, ctx);
  std::map<std::string, CheckConfig> parsed = *checks;
  p.parse_checks_document(&parsed);
  auto d = p.take_diagnostics();
  if (diagnostics) diagnostics->insert(diagnostics->end(), d.begin(), d.end());
  if (!d.empty()) return false;
  *checks = std::move(parsed);
  return true;
}

std::optional<GraceSpec> parse_grace_text(std::string_view text, std::string* error) {
  GraceSpec g;
  if (auto d = parse_duration(text)) {
    g.all = *d;
    return g;
  }
  YAML::Node n;
  try {
    n = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    *error = "'" + std::string(text) + "' is neither a duration nor a map: " + e.msg;
    return std::nullopt;
  }
  if (!n.IsMap()) {
    *error = "'" + std::string(text) +
             "' is not a duration (e.g. 500ms) nor a map of roles (e.g. '{default: 1s, helper: 3s}')";
    return std::nullopt;
  }
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
    Role role = Role::Unknown;
    if (key != "default") {
      auto r = parse_role(key);
      if (!r || key != std::string(to_string(*r))) {
        *error = "unknown role '" + key + "' (default, launcher, rank, worker, helper, unknown)";
        return std::nullopt;
      }
      role = *r;
    }
    auto d = it->second.IsScalar() ? parse_duration(it->second.Scalar()) : std::nullopt;
    if (!d || *d < 0) {
      *error = key + ": '" + (it->second.IsScalar() ? it->second.Scalar() : std::string("?")) +
               "' is not a duration (e.g. 500ms, 3s)";
      return std::nullopt;
    }
    if (key == "default") g.all = *d;
    else g.by_role[role] = *d;
  }
  return g;
}

ParseResult load_scenario(const std::string& path, ParseContext ctx) {
  if (ctx.file.empty()) ctx.file = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::string text;
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        text.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        break;
      } else if (errno != EINTR) {
        err = errno;
        break;
      }
    }
    ::close(fd);
  }
  if (err != 0) {
    ParseResult r;
    r.diagnostics.push_back(Diagnostic{ctx.file, 0, 0, "", "cannot read: " + errno_text(err)});
    return r;
  }
  return parse_scenario(text, ctx);
}

}  // namespace aftermath
