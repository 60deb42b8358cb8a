#include "harness/cluster/witness.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>

#include "harness/core/duration.h"
#include "harness/observe/proc.h"
#include "harness/os/pidfd.h"

namespace aftermath {

namespace {

using nlohmann::json;

// The process as it is now, when it is still the one that was seen.
std::optional<ProcStat> still_there(const WitnessProcess& p, const std::string& proc_root) {
  auto text = read_small_file(proc_root + "/" + std::to_string(p.pid) + "/stat");
  if (!text) return std::nullopt;
  auto st = parse_proc_stat(*text);
  if (!st || st->starttime != p.start_ticks || st->state == 'X') return std::nullopt;
  return st;
}

void pause_ms(int ms) { ::poll(nullptr, 0, ms); }

bool kill_and_wait(const WitnessProcess& p, const std::string& proc_root) {
  UniqueFd fd;
  if (pidfd_open(p.pid, fd)) return !still_there(p, proc_root);  // gone already
  // The pidfd pins this pid: if the process is still the one seen, the
  // signal reaches it and no other.
  if (!still_there(p, proc_root)) return true;
  if (pidfd_signal(fd.get(), SIGKILL)) return !still_there(p, proc_root);
  Nanos deadline = monotonic_now() + 5 * kSecond;
  for (;;) {
    auto st = still_there(p, proc_root);
    // A zombie is dead; its parent (a survivor too, or init) reaps it.
    if (!st || st->state == 'Z') return true;
    if (monotonic_now() >= deadline) return false;
    pollfd pf{fd.get(), POLLIN, 0};
    ::poll(&pf, 1, 20);
  }
}

bool to_number(const std::string& s, auto* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

WitnessReport witness(const std::vector<WitnessProcess>& procs, Nanos grace,
                      const std::string& proc_root) {
  WitnessReport r;
  r.checked = static_cast<int>(procs.size());
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  r.host = host;
  Nanos start = monotonic_now();
  std::vector<std::pair<WitnessProcess, ProcStat>> alive;
  for (;;) {
    alive.clear();
    for (const auto& p : procs)
      if (auto st = still_there(p, proc_root)) alive.emplace_back(p, *st);
    r.waited = monotonic_now() - start;
    if (alive.empty() || r.waited >= grace) break;
    pause_ms(20);
  }
  for (auto& [p, st] : alive) {
    WitnessSurvivor s;
    s.process = p;
    s.comm = st.comm;
    s.state = st.state;
    s.ppid = st.ppid;
    s.killed = kill_and_wait(p, proc_root);
    r.survivors.push_back(std::move(s));
  }
  return r;
}

std::string witness_arg(const WitnessProcess& p) {
  std::string s = std::to_string(p.pid) + ":" + std::to_string(p.start_ticks);
  if (!p.role.empty()) s += ":" + p.role;
  return s;
}

Expected<WitnessProcess> parse_witness_arg(const std::string& text) {
  WitnessProcess p;
  auto a = text.find(':');
  auto b = a == std::string::npos ? std::string::npos : text.find(':', a + 1);
  std::string ticks =
      a == std::string::npos ? "" : text.substr(a + 1, b == std::string::npos ? b : b - a - 1);
  if (!to_number(text.substr(0, a), &p.pid) || p.pid <= 0 || !to_number(ticks, &p.start_ticks))
    return Error{"--proc: expected PID:START_TICKS[:ROLE], got '" + text + "'"};
  if (b != std::string::npos) p.role = text.substr(b + 1);
  return p;
}

int cmd_witness(const std::vector<std::string>& procs, const std::string& grace) {
  auto g = parse_duration_ns(grace);
  if (!g || *g < 0) {
    std::fprintf(stderr,
                 "aftermath witness: --grace: expected a duration like 1s or 500ms, got '%s'\n",
                 grace.c_str());
    return 2;
  }
  std::vector<WitnessProcess> ps;
  for (const auto& text : procs) {
    auto p = parse_witness_arg(text);
    if (!p) {
      std::fprintf(stderr, "aftermath witness: %s\n", p.error().what.c_str());
      return 2;
    }
    ps.push_back(*p);
  }
  std::printf("%s\n", to_json(witness(ps, *g)).dump().c_str());
  return 0;
}

json to_json(const WitnessReport& r) {
  json survivors = json::array();
  for (const auto& s : r.survivors)
    survivors.push_back({{"pid", s.process.pid},
                         {"start_ticks", s.process.start_ticks},
                         {"role", s.process.role},
                         {"comm", s.comm},
                         {"state", std::string(1, s.state)},
                         {"ppid", s.ppid},
                         {"killed", s.killed}});
  return {
      {"host", r.host}, {"checked", r.checked}, {"waited_ns", r.waited}, {"survivors", survivors}};
}

Expected<WitnessReport> witness_report_from(const json& j) {
  if (!j.is_object() || !j.contains("checked") || !j["checked"].is_number_integer() ||
      !j.contains("survivors") || !j["survivors"].is_array())
    return Error{"not a witness report"};
  WitnessReport r;
  r.host = j.value("host", "");
  r.checked = j["checked"].get<int>();
  r.waited = j.value("waited_ns", Nanos{0});
  for (const auto& s : j["survivors"]) {
    if (!s.is_object()) return Error{"a survivor is not an object"};
    WitnessSurvivor w;
    w.process.pid = s.value("pid", 0);
    w.process.start_ticks = s.value("start_ticks", std::uint64_t{0});
    w.process.role = s.value("role", "");
    w.comm = s.value("comm", "");
    std::string st = s.value("state", "?");
    w.state = st.empty() ? '?' : st[0];
    w.ppid = s.value("ppid", 0);
    w.killed = s.value("killed", false);
    r.survivors.push_back(std::move(w));
  }
  return r;
}

}  // namespace aftermath
