#include "harness/scenario/fault_parse.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "harness/core/device.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

namespace {

const Keys kFaultKeys = {"action",       "target", "node",      "at",        "duration",
                         "resume_after", "signal", "kill_wait", "mechanism", "share",
                         "bytes",        "device", "headroom",  "optional"};
const Keys kTriggerKeys = {"point", "labels", "hit", "after", "when", "phase"};
const Keys kPredicateKeys = {"workers", "processes", "shm_entries", "state", "orphans"};
const Keys kPhases = {"startup", "steady", "shutdown"};

using Entries = std::vector<Entry>;

const Entry* find(const Entries& es, std::string_view name) { return FieldReader::find(es, name); }

void parse_action(FieldReader& r, const Entry& fe, const Entries& es, FaultSpec* f) {
  const Entry* action = find(es, "action");
  if (!action) {
    r.missing(fe.value, child(fe.path, "action"));
    return;
  }
  std::optional<std::string> a = r.string_value(*action);
  if (!a) return;
  std::string name = *a;
  std::optional<int> sig = parse_signal(name);
  if (sig && name.rfind("SIG", 0) != 0) name = signal_name(*sig);
  const auto& known = known_fault_actions();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    r.error(action->where(), action->path,
            "unknown action '" + *a + "' (known actions: " + list + ")");
    return;
  }
  f->action = *parse_fault_action(name);
  if (sig) f->signal = *sig;
}

void parse_target_field(FieldReader& r, const Entry& fe, const Entries& es, FaultSpec* f) {
  if (const Entry* t = find(es, "target")) {
    if (auto text = r.string_value(*t)) {
      if (auto spec = parse_target(*text)) {
        f->target = *spec;
        if (f->action == FaultAction::Scancel && spec->kind != TargetSpec::Kind::Launcher)
          r.error(t->where(), t->path,
                  "scancel signals the step from its task down: its target is the launcher (or "
                  "leave it out)");
      } else {
        r.error(t->where(), t->path, spec.error().what);
      }
    }
  } else if (f->action == FaultAction::Scancel) {
    // Slurm signals from the step's task down: the launcher is where it starts.
    f->target.kind = TargetSpec::Kind::Launcher;
    f->target.text = "launcher";
  } else if (f->action != FaultAction::Delay && f->action != FaultAction::Hang) {
    // A point's own process is the natural target of in-process faults;
    // everything else must say whom it hits.
    if (f->action == FaultAction::HostOom || f->action == FaultAction::DeviceOom) {
      f->target.kind = TargetSpec::Kind::Self;
      f->target.text = "self";
    } else {
      r.missing(fe.value, child(fe.path, "target"));
    }
  } else {
    f->target.kind = TargetSpec::Kind::Self;
    f->target.text = "self";
  }
}

// scancel's own fields: `signal:` (scancel --signal) or `kill_wait:` (the
// cluster's KillWait, for the cancel itself); and its target, the launcher.
void parse_scancel(FieldReader& r, const Entries& es, FaultSpec* f) {
  const bool scancel = f->action == FaultAction::Scancel;
  const Entry* sig = find(es, "signal");
  const Entry* kw = find(es, "kill_wait");
  if (sig) {
    auto v = r.string_value(*sig);
    std::optional<int> n = v ? parse_signal(*v) : std::nullopt;
    if (!scancel)
      r.error(sig->key.Mark(), sig->path,
              "only scancel takes a signal (the action names the signal otherwise)");
    else if (v && !n)
      r.error(sig->where(), sig->path, "unknown signal '" + *v + "' (e.g. SIGTERM, SIGUSR1, 15)");
    else if (n)
      f->step_signal = *n;
  }
  if (kw) {
    if (!scancel)
      r.error(kw->key.Mark(), kw->path, "only scancel takes a kill_wait");
    else if (sig)
      r.error(kw->key.Mark(), kw->path,
              "scancel with a signal sends only that signal: it has no kill_wait");
    if (auto v = r.bounded_duration(*kw, true)) f->kill_wait = *v;
  }
}

void parse_mechanism(FieldReader& r, const Entries& es, FaultSpec* f) {
  if (f->action == FaultAction::DeviceOom) f->mechanism = FaultMechanism::Point;
  const Entry* m = find(es, "mechanism");
  if (!m) return;
  auto v = r.string_value(*m);
  if (!v) return;
  if (f->action == FaultAction::HostOom) {
    if (*v != "auto" && *v != "rlimit" && *v != "cgroup")
      r.error(m->where(), m->path, "unknown mechanism '" + *v + "' (auto, rlimit, cgroup)");
  } else if (f->action == FaultAction::DeviceOom) {
    if (*v != "point" && *v != "hog" && *v != "interposer")
      r.error(m->where(), m->path, "unknown mechanism '" + *v + "' (point, hog, interposer)");
  } else {
    r.error(m->key.Mark(), m->path, "only host_oom and device_oom take a mechanism");
  }
  f->mechanism = parse_fault_mechanism(*v).value_or(FaultMechanism::None);
}

// The hog's share of free device memory, or its exact bytes, and which GPU;
// host_oom's headroom.
void parse_sizes(FieldReader& r, const Entries& es, FaultSpec* f) {
  bool hog = f->action == FaultAction::DeviceOom && f->mechanism == FaultMechanism::Hog;
  if (hog && !find(es, "target")) {
    // The hog acts on a GPU, not on a process: no target to name.
    f->target.kind = TargetSpec::Kind::All;
    f->target.text = "all";
  }
  if (const Entry* sh = find(es, "share")) {
    double v = 0;
    if (!hog) {
      r.error(sh->key.Mark(), sh->path, "only device_oom with mechanism: hog takes a share");
    } else if (!sh->value.IsScalar() || !YAML::convert<double>::decode(sh->value, v) ||
               !(v > 0 && v <= 1)) {
      r.error(sh->where(), sh->path, "expected a fraction of free memory in (0, 1], e.g. 0.95");
    } else {
      f->share = v;
    }
  }
  if (const Entry* b = find(es, "bytes")) {
    auto v = b->value.IsScalar() ? parse_bytes(b->value.Scalar()) : std::nullopt;
    if (!hog) {
      r.error(b->key.Mark(), b->path, "only device_oom with mechanism: hog takes bytes");
    } else if (find(es, "share")) {
      r.error(b->key.Mark(), b->path, "share and bytes are mutually exclusive");
    } else if (std::int64_t n = v.value_or(0); n <= 0) {
      r.error(b->where(), b->path, "expected a size like 40GiB or 512MiB");
    } else {
      f->bytes = n;
    }
  }
  if (const Entry* h = find(es, "headroom")) {
    auto v = h->value.IsScalar() ? parse_bytes(h->value.Scalar()) : std::nullopt;
    if (f->action != FaultAction::HostOom) {
      r.error(h->key.Mark(), h->path, "only host_oom takes a headroom");
    } else if (std::int64_t n = v.value_or(0); n <= 0) {
      r.error(h->where(), h->path, "expected a size like 16MiB or 1GiB");
    } else {
      f->headroom = n;
    }
  }
}

void parse_optional_and_device(FieldReader& r, const Entries& es, FaultSpec* f) {
  if (const Entry* o = find(es, "optional")) {
    if (auto on = r.boolean(*o, "true or false")) f->optional = *on;
  }
  if (const Entry* d = find(es, "device")) {
    bool hog = f->action == FaultAction::DeviceOom && f->mechanism == FaultMechanism::Hog;
    const std::string s = d->value.IsScalar() ? d->value.Scalar() : "";
    if (!hog) {
      r.error(d->key.Mark(), d->path, "only device_oom with mechanism: hog takes a device");
    } else if (s.empty() || s.size() > 4 ||
               s.find_first_not_of("0123456789") != std::string::npos) {
      r.error(d->where(), d->path, "expected a CUDA device ordinal (0, 1, ...)");
    } else {
      f->device = std::stoi(s);
    }
  }
}

// Combinations that cannot work; only when the fault is otherwise clean, so
// one mistake is not reported twice.
void check_combinations(FieldReader& r, const Entry& fe, size_t before, const FaultSpec& f) {
  bool at_point = f.at.kind == TriggerSpec::Kind::Point;
  if (f.target.kind == TargetSpec::Kind::Self && !at_point && f.action != FaultAction::None &&
      r.error_count() == before) {
    r.error(fe.value.Mark(), child(fe.path, "target"),
            "target 'self' (the process at a point) needs an `at: {point: ...}` trigger");
  }
  if ((f.action == FaultAction::Delay || f.action == FaultAction::Hang ||
       (f.action == FaultAction::DeviceOom && f.mechanism == FaultMechanism::Point) ||
       (f.action == FaultAction::HostOom && f.mechanism == FaultMechanism::Rlimit)) &&
      !at_point && r.error_count() == before) {
    r.error(fe.value.Mark(), child(fe.path, "at"),
            "'" + std::string(to_string(f.action)) +
                "' acts inside the job at a point: it needs `at: {point: ...}`");
  }
  if ((f.action == FaultAction::Delay || f.action == FaultAction::Hang) &&
      f.target.kind != TargetSpec::Kind::Self && r.error_count() == before) {
    r.error(fe.value.Mark(), child(fe.path, "target"),
            "'" + std::string(to_string(f.action)) +
                "' holds the process at the point: its target can only be self");
  }
}

// The range of a node number a fault names (its node:N or agent:N target, or
// its `node:` field); `nodes` 0: not known here (a --fault before its
// scenario), no range check.
void check_node_number(FieldReader& r, const Entry& e, const std::string& path, int nodes, int node,
                       const std::string& what) {
  if (nodes == 1) {
    r.error(e.value.Mark(), path,
            what + " needs a multi-node scenario (nodes: 2 or more); this one runs on one node");
  } else if (nodes > 1 && node >= nodes) {
    r.error(e.value.Mark(), path,
            what + " does not exist: nodes are 0.." + std::to_string(nodes - 1));
  }
}

// node:N and agent:N name a node of a multi-node run; the node actions need
// node:N, agent_kill needs agent:N, and a `node:` field picks the node of a
// fault whose target does not name one.
void check_node_target(FieldReader& r, const Entry& fe, const Entries& es, size_t before, int nodes,
                       const FaultSpec& f) {
  if (r.error_count() != before || f.action == FaultAction::None) return;
  using K = TargetSpec::Kind;
  const K kind = f.target.kind;
  const std::string action(to_string(f.action));
  const std::string target_path = child(fe.path, "target");
  if (is_node_action(f.action) && kind != K::Node) {
    r.error(fe.value.Mark(), target_path,
            "'" + action + "' acts on a node: its target must be node:N");
  } else if (f.action == FaultAction::AgentKill && kind != K::Agent) {
    r.error(fe.value.Mark(), target_path,
            "'agent_kill' kills a node's agent: its target must be agent:N");
  } else if (kind == K::Node && !is_node_action(f.action) && !f.signal) {
    r.error(
        fe.value.Mark(), target_path,
        "node:N takes the node actions (node_loss, partition) and signals, not '" + action + "'");
  } else if (kind == K::Agent && f.action != FaultAction::AgentKill) {
    r.error(fe.value.Mark(), target_path, "agent:N takes only agent_kill, not '" + action + "'");
  } else if (kind == K::Node || kind == K::Agent) {
    check_node_number(r, fe, target_path, nodes, f.target.node, f.target.text);
  }
  const Entry* n = find(es, "node");
  if (!n || r.error_count() != before) return;
  if (kind == K::Node || kind == K::Agent)
    r.error(n->key.Mark(), n->path, "the target " + f.target.text + " names its node already");
  else
    check_node_number(r, *n, n->path, nodes, f.node, "node " + std::to_string(f.node));
}

// A name a point or label may carry: the AFTERMATH_POINTS syntax reserves these.
bool point_text_ok(const std::string& s) { return s.find_first_of(";{}#=,") == std::string::npos; }

void parse_point(FieldReader& r, const Entries& es, TriggerSpec* t) {
  t->kind = TriggerSpec::Kind::Point;
  const Entry* p = find(es, "point");
  if (auto v = r.string_value(*p)) {
    if (v->empty() || !point_text_ok(*v))
      r.error(p->where(), p->path, "a point name must be non-empty and free of ; { } # = ,");
    t->point = *v;
  }
  if (const Entry* l = find(es, "labels")) {
    if (!l->value.IsMap()) {
      r.wrong_type(*l, "a map of label: value");
    } else {
      for (const Entry& le : r.entries(l->value, l->path, nullptr)) {
        if (le.name.empty() || !point_text_ok(le.name))
          r.error(le.key.Mark(), le.path, "a label name must be non-empty and free of ; { } # = ,");
        if (auto v = r.string_value(le)) {
          if (!point_text_ok(*v))
            r.error(le.where(), le.path, "a label value must be free of ; { } # = ,");
          t->labels[le.name] = *v;
        }
      }
    }
  }
  if (const Entry* h = find(es, "hit")) {
    const std::string s = h->value.IsScalar() ? h->value.Scalar() : "";
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 12 ||
        std::stoll(s) < 1) {
      r.error(h->where(), h->path, "hit must be a positive integer (1 = the first hit)");
    } else {
      t->hit = std::stoll(s);
    }
  }
  t->text = "point " + t->point;
  for (const auto& [k, v] : t->labels) t->text += " " + k + "=" + v;
  if (t->hit) t->text += " hit " + std::to_string(*t->hit);
}

// A count: a non-negative integer of at most 9 digits; 0 (reported) otherwise.
int count_of(FieldReader& r, const Entry& e) {
  const std::string s = e.value.IsScalar() ? e.value.Scalar() : "";
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) {
    r.error(e.where(), e.path, "expected a count (a non-negative integer)");
    return 0;
  }
  return std::stoi(s);
}

void parse_predicate(FieldReader& r, const Entry& p, Predicate* pr) {
  if (p.name == "workers") {
    pr->kind = Predicate::Kind::Workers;
    if (p.value.IsMap()) {
      static const Keys kWorkerKeys = {"rank", "count"};
      Entries ws = r.entries(p.value, p.path, &kWorkerKeys);
      if (const Entry* rk = find(ws, "rank")) pr->rank = count_of(r, *rk);
      if (const Entry* c = find(ws, "count"))
        pr->count = count_of(r, *c);
      else
        r.missing(p.value, child(p.path, "count"));
    } else {
      pr->count = count_of(r, p);
    }
    pr->text = "workers" +
               (pr->rank >= 0 ? " of rank " + std::to_string(pr->rank) : std::string()) +
               " >= " + std::to_string(pr->count);
  } else if (p.name == "processes") {
    pr->kind = Predicate::Kind::Processes;
    pr->count = count_of(r, p);
    pr->text = "processes >= " + std::to_string(pr->count);
  } else if (p.name == "orphans") {
    pr->kind = Predicate::Kind::Orphans;
    pr->count = count_of(r, p);
    pr->text = "orphans >= " + std::to_string(pr->count);
  } else if (p.name == "shm_entries") {
    pr->kind = Predicate::Kind::ShmEntries;
    pr->count = count_of(r, p);
    pr->text = "new /dev/shm entries >= " + std::to_string(pr->count);
  } else {
    pr->kind = Predicate::Kind::State;
    auto v = r.string_value(p);
    if (v && (v->size() != 1 || std::string("RSDZTtXIWP").find((*v)[0]) == std::string::npos)) {
      r.error(p.where(), p.path, "expected a /proc state letter: R, S, D, Z, T, t, X, I");
    } else if (v) {
      pr->state = (*v)[0];
    }
    pr->text = std::string("a process in state ") + (pr->state ? std::string(1, pr->state) : "?");
  }
}

void parse_trigger(FieldReader& r, const Entry& te, TriggerSpec* t) {
  if (!te.value.IsMap()) {
    r.wrong_type(te,
                 "a map: {point: NAME, labels: {...}, hit: N} | {after: 2s} | {when: {...}} | "
                 "{phase: startup|steady|shutdown}");
    return;
  }
  Entries es = r.entries(te.value, te.path, &kTriggerKeys);
  int kinds = (find(es, "point") != nullptr) + (find(es, "after") != nullptr) +
              (find(es, "when") != nullptr) + (find(es, "phase") != nullptr);
  if (kinds != 1) {
    r.error(te.where(), te.path, "needs exactly one of point, after, when, phase");
    return;
  }
  if (find(es, "point")) return parse_point(r, es, t);
  for (const char* k : {"labels", "hit"}) {
    if (const Entry* e = find(es, k))
      r.error(e->key.Mark(), e->path, "only a point takes " + std::string(k));
  }
  if (const Entry* a = find(es, "after")) {
    t->kind = TriggerSpec::Kind::After;
    if (auto d = r.bounded_duration(*a, false)) t->after = *d;
    t->text = "after " + format_duration(t->after);
    return;
  }
  if (const Entry* ph = find(es, "phase")) {
    t->kind = TriggerSpec::Kind::Phase;
    if (auto v = r.string_value(*ph)) {
      if (!contains(kPhases, *v)) {
        r.error(ph->where(), ph->path, "unknown phase '" + *v + "' (" + join(kPhases) + ")");
      }
      t->phase = *v;
    }
    t->text = "phase " + t->phase;
    return;
  }
  const Entry* w = find(es, "when");
  t->kind = TriggerSpec::Kind::When;
  if (!w->value.IsMap()) {
    r.wrong_type(*w,
                 "a map: {workers: {rank: R, count: N}} | {processes: N} | {shm_entries: N} | "
                 "{orphans: N} | {state: D}");
    return;
  }
  Entries ps = r.entries(w->value, w->path, &kPredicateKeys);
  if (ps.size() != 1) {
    if (!ps.empty())
      r.error(w->where(), w->path, "needs exactly one predicate");
    else if (w->value.size() == 0)
      r.error(w->where(), w->path, "needs a predicate");
    return;
  }
  parse_predicate(r, ps[0], &t->when);
  t->text = "when " + t->when.text;
}

}  // namespace

void parse_faults(FieldReader& r, const Entry& fe, int nodes, std::vector<FaultSpec>* out) {
  if (!fe.value.IsSequence()) {
    r.wrong_type(fe, "a list of faults");
    return;
  }
  for (size_t i = 0; i < fe.value.size(); ++i) {
    Entry it = FieldReader::list_item(fe, i, fe.value[i]);
    if (auto f = parse_fault(r, it, nodes)) out->push_back(std::move(*f));
  }
}

std::optional<FaultSpec> parse_fault(FieldReader& r, const Entry& fe, int nodes) {
  if (!fe.value.IsMap()) {
    r.wrong_type(fe, "a map {action, target, at}");
    return std::nullopt;
  }
  size_t before = r.error_count();
  FaultSpec f;
  f.line = fe.value.Mark().line + 1;
  Entries es = r.entries(fe.value, fe.path, &kFaultKeys);
  parse_action(r, fe, es, &f);
  parse_target_field(r, fe, es, &f);
  if (const Entry* n = find(es, "node")) f.node = count_of(r, *n);
  if (const Entry* at = find(es, "at")) {
    parse_trigger(r, *at, &f.at);
  } else {
    r.missing(fe.value, child(fe.path, "at"));
  }
  bool timed = f.action == FaultAction::Delay || f.action == FaultAction::Partition;
  if (const Entry* d = find(es, "duration")) {
    if (!timed) r.error(d->key.Mark(), d->path, "only a delay or a partition takes a duration");
    if (auto v = r.bounded_duration(*d, true)) f.duration = *v;
  } else if (timed) {
    r.missing(fe.value, child(fe.path, "duration"));
  }
  if (const Entry* ra = find(es, "resume_after")) {
    if (f.action != FaultAction::Sigstop)
      r.error(ra->key.Mark(), ra->path, "only SIGSTOP takes resume_after");
    if (auto v = r.bounded_duration(*ra, true)) f.resume_after = *v;
  }
  parse_scancel(r, es, &f);
  parse_mechanism(r, es, &f);
  parse_sizes(r, es, &f);
  parse_optional_and_device(r, es, &f);
  check_combinations(r, fe, before, f);
  check_node_target(r, fe, es, before, nodes, f);
  if (r.error_count() != before) return std::nullopt;
  return f;
}

Expected<FaultSpec, Diagnostics> parse_fault_text(std::string_view yaml, const std::string& label) {
  FieldReader r(label);
  std::optional<FaultSpec> f;
  try {
    // For --fault: a bare fault map as its own document.
    YAML::Node root = YAML::Load(std::string(yaml));
    f = parse_fault(r, Entry{"", root, root, "fault"});
  } catch (const YAML::Exception& e) {
    r.error(e.mark, "", e.msg);
  }
  Diagnostics d = r.take();
  if (!d.empty()) return d;
  if (!f) return Diagnostics{Diagnostic{label, 0, 0, "", "not a fault"}};
  return std::move(*f);
}

}  // namespace aftermath
