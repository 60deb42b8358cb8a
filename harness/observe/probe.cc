#include "harness/observe/probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "harness/os/pidfd.h"
#include "harness/os/spawn.h"

extern char** environ;

namespace aftermath {

namespace {

constexpr size_t kMaxOutput = 64 * 1024;  // a probe prints a few hundred bytes

std::string tail(const std::string& s, size_t n) {
  std::string t = s.size() > n ? "..." + s.substr(s.size() - n) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  for (auto& c : t)
    if (c == '\n') c = ' ';
  return t;
}

// One probe child and what it said.
struct Child {
  const GpuInfo* gpu = nullptr;  // null: the one child for every GPU
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd out, err;
  std::string out_text, err_text;
  bool exited = false;
  bool reaped = false;
  bool killed = false;
  std::optional<Outcome> outcome;
  Nanos started = 0, ended = 0;
  std::string spawn_error;
};

std::vector<std::string> child_env(const GpuInfo* gpu) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    if (v.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0 || v.rfind("CUDA_DEVICE_ORDER=", 0) == 0) continue;
    env.emplace_back(v);
  }
  // PCI bus order makes the one-child-for-all ordinals match NVML's usual order.
  env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  if (gpu) env.push_back("CUDA_VISIBLE_DEVICES=" + gpu->uuid);
  return env;
}

void spawn(Child& c, const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    c.spawn_error = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    c.spawn_error = std::string("pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return;
  }
  c.out = UniqueFd(out[0]);
  c.err = UniqueFd(err[0]);
  UniqueFd out_w(out[1]), err_w(err[1]);
  auto env_s = child_env(c.gpu);
  c.started = monotonic_now();
  SpawnOptions so;
  so.argv = argv;
  so.env = &env_s;
  so.stdout_fd = out[1];
  so.stderr_fd = err[1];
  auto started = spawn(so);
  c.pid = started ? *started : -1;
  if (!started) {
    c.spawn_error = started.error().what;
    c.out = UniqueFd();
    c.err = UniqueFd();
    return;
  }
  if (auto ec = pidfd_open(c.pid, c.pidfd)) {
    // Only ENOSYS (kernel < 5.3) can get here: the child cannot be gone, it is
    // unreaped. Kill it now rather than run it without a way to time it out.
    ::kill(c.pid, SIGKILL);
    int st;
    ::waitpid(c.pid, &st, 0);
    c.reaped = c.exited = true;
    c.spawn_error = "pidfd_open: " + ec.message();
  }
}

void drain(UniqueFd& fd, std::string& into) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      if (into.size() < kMaxOutput) into.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    fd = UniqueFd();  // EOF or error: done with it
    return;
  }
}

void try_reap(Child& c) {
  if (c.reaped || c.pid <= 0) return;
  int st;
  pid_t r = ::waitpid(c.pid, &st, WNOHANG);
  if (r == c.pid) {
    c.reaped = c.exited = true;
    c.outcome = Outcome::from_wait_status(st);
    if (!c.ended) c.ended = monotonic_now();
  }
}

// Waits for every child's output and exit, up to `until`.
void pump(std::vector<Child>& children, Nanos until) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, int>> who;  // 0: out, 1: err, 2: pidfd
    auto watch = [&](const UniqueFd& fd, Child& c, int what) {
      fds.push_back({fd.get(), POLLIN, 0});
      who.emplace_back(&c, what);
    };
    for (auto& c : children) {
      if (c.pid <= 0) continue;
      if (c.out) watch(c.out, c, 0);
      if (c.err) watch(c.err, c, 1);
      if (!c.exited && c.pidfd) watch(c.pidfd, c, 2);
    }
    if (fds.empty()) return;
    Nanos left = until - monotonic_now();
    if (left <= 0) return;
    int ms = static_cast<int>(std::min<Nanos>((left + kMilli - 1) / kMilli, 1000));
    int n = ::poll(fds.data(), fds.size(), ms);
    if (n < 0 && errno != EINTR) return;
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [c, what] = who[i];
      if (what == 0) drain(c->out, c->out_text);
      if (what == 1) drain(c->err, c->err_text);
      if (what == 2) {
        c->exited = true;
        c->ended = monotonic_now();
        try_reap(*c);
      }
    }
  }
}

GpuProbe for_gpu(const Child& c) {
  GpuProbe p;
  if (c.gpu) {
    p.index = c.gpu->index;
    p.uuid = c.gpu->uuid;
    p.pci_bus_id = c.gpu->pci_bus_id;
    p.name = c.gpu->name;
  }
  p.elapsed = (c.ended ? c.ended : monotonic_now()) - c.started;
  return p;
}

// What one child's run says about its GPU(s).
std::vector<GpuProbe> results(const Child& c, Nanos deadline) {
  std::vector<GpuProbe> out;
  if (!c.spawn_error.empty()) {
    GpuProbe p = for_gpu(c);
    p.status = ProbeStatus::Error;
    p.error = c.spawn_error;
    out.push_back(p);
    return out;
  }
  size_t pos = 0;
  while (pos < c.out_text.size()) {
    size_t eol = c.out_text.find('\n', pos);
    if (eol == std::string::npos) eol = c.out_text.size();
    auto parsed = parse_probe_line(std::string_view(c.out_text).substr(pos, eol - pos));
    pos = eol + 1;
    if (!parsed) continue;
    GpuProbe p = *parsed;
    if (c.gpu) {
      // Seen through CUDA_VISIBLE_DEVICES=<uuid>: ordinal 0 is this GPU.
      p.index = c.gpu->index;
      if (p.uuid.empty()) p.uuid = c.gpu->uuid;
      if (p.name.empty()) p.name = c.gpu->name;
      if (p.pci_bus_id.empty()) p.pci_bus_id = c.gpu->pci_bus_id;
    }
    p.elapsed = for_gpu(c).elapsed;
    out.push_back(p);
  }
  if (c.killed) {
    std::string why = "no answer within " + format_duration(deadline) + ": killed";
    if (!c.exited) why += ", and still not gone after SIGKILL (stuck in the driver?)";
    if (out.empty()) {
      GpuProbe p = for_gpu(c);
      p.status = ProbeStatus::TimedOut;
      p.error = why;
      out.push_back(p);
    } else {
      // It answered, then hung (typically tearing its context down).
      for (auto& p : out) {
        p.error = "answered " + std::string(to_string(p.status)) + ", then hung: " + why;
        p.status = ProbeStatus::TimedOut;
      }
    }
    return out;
  }
  if (out.empty()) {
    GpuProbe p = for_gpu(c);
    p.status = ProbeStatus::Error;
    p.error = "the probe " + (c.outcome ? c.outcome->to_string() : std::string("ended")) +
              " without an answer";
    if (!c.err_text.empty()) p.error += ": " + tail(c.err_text, 300);
    out.push_back(p);
  }
  return out;
}

}  // namespace

std::optional<GpuProbe> parse_probe_line(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("status") || !j["status"].is_string())
    return std::nullopt;
  auto st = parse_probe_status(j["status"].get<std::string>());
  if (!st) return std::nullopt;
  GpuProbe p;
  p.status = *st;
  auto str = [&](const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  auto num = [&](const char* k, std::int64_t dflt) {
    return j.contains(k) && j[k].is_number_integer() ? j[k].get<std::int64_t>() : dflt;
  };
  p.ordinal = static_cast<int>(num("ordinal", -1));
  p.uuid = str("uuid");
  p.pci_bus_id = str("pci_bus_id");
  p.name = str("name");
  p.error = str("error");
  p.free = num("free", -1);
  p.total = num("total", -1);
  return p;
}

ProbeReport ProcessProbeRunner::run(const std::vector<GpuInfo>& gpus) {
  ProbeReport report;
  if (command_.argv.empty()) {
    report.unavailable = "no probe command";
    return report;
  }
  std::vector<Child> children(gpus.empty() ? 1 : gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) children[i].gpu = &gpus[i];
  for (auto& c : children) spawn(c, command_.argv);
  for (auto& c : children) {
    if (!c.out) continue;
    ::fcntl(c.out.get(), F_SETFL, O_NONBLOCK);
    ::fcntl(c.err.get(), F_SETFL, O_NONBLOCK);
  }

  Nanos start = monotonic_now();
  pump(children, start + command_.deadline);
  bool any_killed = false;
  for (auto& c : children) {
    if (c.pid > 0 && !c.exited) {
      c.killed = any_killed = true;
      c.ended = monotonic_now();
      (void)pidfd_signal(c.pidfd.get(), SIGKILL);
    }
  }
  if (any_killed) {
    // Only the pidfds now: the output of a killed probe no longer matters, and
    // a pipe a grandchild still holds must not keep us here.
    for (auto& c : children) {
      if (!c.killed) continue;
      c.out = UniqueFd();
      c.err = UniqueFd();
    }
    pump(children, monotonic_now() + command_.kill_wait);
  }
  for (auto& c : children) try_reap(c);

  for (auto& c : children) {
    auto rs = results(c, command_.deadline);
    report.gpus.insert(report.gpus.end(), rs.begin(), rs.end());
  }
  // Nothing to probe at all: say why once, instead of per GPU.
  bool all_unavailable = !report.gpus.empty() &&
                         std::all_of(report.gpus.begin(), report.gpus.end(),
                                     [](auto& g) { return g.status == ProbeStatus::Unavailable; });
  if (all_unavailable) {
    report.unavailable =
        report.gpus.front().error.empty() ? "no CUDA device" : report.gpus.front().error;
    report.gpus.clear();
  }
  return report;
}

ProbeCommand default_probe_command(const std::string& bin_dir) {
  ProbeCommand c;
  const char* env = std::getenv("AFTERMATH_PROBE");
  c.argv = {env && *env ? std::string(env) : bin_dir + "/aftermath-probe"};
  return c;
}

}  // namespace aftermath
