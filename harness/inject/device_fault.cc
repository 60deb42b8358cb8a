#include "harness/inject/device_fault.h"

#include <dlfcn.h>
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
#include <sstream>
#include <stdexcept>

#include "harness/observe/probe/loader.h"
#include "harness/os/spawn.h"

extern char** environ;

namespace aftermath {

// --- the interposer ---

Expected<std::map<std::string, std::string>> cuda_fail_env(const std::string& preload_path,
                                                           std::optional<long> fail_after,
                                                           const std::string& arm_path,
                                                           const std::string& existing_ld_preload) {
  if (preload_path.empty() || preload_path.front() != '/')
    return Error{"the interposer path must be absolute: '" + preload_path + "'"};
  if (preload_path.find_first_of(": \t\n") != std::string::npos)
    return Error{"the interposer path cannot hold ':' or whitespace (LD_PRELOAD separators): '" +
                 preload_path + "'"};
  if (fail_after && *fail_after < 1)
    return Error{"fail_after must be >= 1, not " + std::to_string(*fail_after)};
  if (!arm_path.empty() && arm_path.front() != '/')
    return Error{"the arm path must be absolute: '" + arm_path + "'"};

  std::string preload = preload_path;
  std::string entry;
  auto flush = [&] {
    if (!entry.empty() && entry != preload_path) preload += ":" + entry;
    entry.clear();
  };
  for (char c : existing_ld_preload) {
    if (c == ':' || c == ' ' || c == '\t' || c == '\n')
      flush();
    else
      entry += c;
  }
  flush();

  std::map<std::string, std::string> env{{"LD_PRELOAD", preload}};
  if (fail_after) env["AFTERMATH_CUDA_FAIL_AFTER"] = std::to_string(*fail_after);
  if (!arm_path.empty()) env["AFTERMATH_CUDA_FAIL_ARM"] = arm_path;
  return env;
}

Status arm_cuda_fail(const std::string& arm_path) {
  int fd = ::open(arm_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error("arm " + arm_path);
  ::close(fd);
  return {};
}

Status disarm_cuda_fail(const std::string& arm_path) {
  if (::unlink(arm_path.c_str()) != 0 && errno != ENOENT) return sys_error("disarm " + arm_path);
  return {};
}

// --- availability ---

std::vector<std::string> cudart_candidates() {
  if (const char* env = std::getenv("AFTERMATH_CUDART"); env && *env) return {env};
  std::vector<std::string> c;
#ifdef AFTERMATH_CUDART_HINT
  c.emplace_back(AFTERMATH_CUDART_HINT);  // the toolkit found at build time
#endif
  for (const auto& n : cudart_loading::cudart_sonames()) c.push_back(n);
  return c;
}

Status device_oom_available(const std::string& dev_root,
                            const std::vector<std::string>& candidates) {
  std::string ctl = dev_root + "/nvidiactl";
  if (::access(ctl.c_str(), F_OK) != 0)
    return Error{"no GPU on this machine (" + ctl + " absent)", ENOENT};
  auto loaded = cudart_loading::dlopen_first(candidates, RTLD_LAZY | RTLD_LOCAL);
  if (!loaded) return Error{"no CUDA runtime: " + loaded.error().what};
  ::dlclose(loaded->handle);
  return {};
}

Status device_oom_available() { return device_oom_available("/dev", cudart_candidates()); }

// --- the hog ---

std::string_view to_string(HogState s) {
  switch (s) {
    case HogState::NotStarted:
      return "not_started";
    case HogState::Ready:
      return "ready";
    case HogState::Failed:
      return "failed";
    case HogState::Unavailable:
      return "unavailable";
    case HogState::TimedOut:
      return "timed_out";
    case HogState::Error:
      return "error";
  }
  return "error";
}

std::optional<HogLine> parse_hog_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  HogLine h;
  std::size_t sp = line.find(' ');
  std::string_view head = line.substr(0, sp);
  if (head == "ready")
    h.state = HogState::Ready;
  else if (head == "failed")
    h.state = HogState::Failed;
  else if (head == "unavailable")
    h.state = HogState::Unavailable;
  else
    return std::nullopt;
  std::string_view rest = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
  while (!rest.empty()) {
    if (rest.front() == ' ') {
      rest.remove_prefix(1);
      continue;
    }
    if (rest.substr(0, 7) == "detail=") {
      h.fields["detail"] = std::string(rest.substr(7));
      break;
    }
    std::size_t end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    std::size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    h.fields[std::string(word.substr(0, eq))] = std::string(word.substr(eq + 1));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  }
  if (h.state == HogState::Ready && !h.fields.count("held")) return std::nullopt;
  return h;
}

namespace {

std::string tail(const std::string& s, std::size_t n) {
  std::string t = s.size() > n ? "..." + s.substr(s.size() - n) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  std::replace(t.begin(), t.end(), '\n', ' ');
  return t;
}

// Reads what is there without blocking; closes `fd` at EOF.
void drain(UniqueFd& fd, std::string& into) {
  char buf[4096];
  while (fd) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      if (into.size() < 64 * 1024) into.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    fd = UniqueFd();
  }
}

std::uint64_t field_u64(const HogLine& h, const char* key) {
  auto it = h.fields.find(key);
  return it == h.fields.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

int poll_ms(Nanos until) {
  Nanos left = until - monotonic_now();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<Nanos>((left + kMilli - 1) / kMilli, 1000));
}

}  // namespace

DeviceHog::~DeviceHog() { stop(); }

void DeviceHog::spawn(const DeviceHogOptions& o) {
  auto fail = [&](const std::string& what) {
    state_ = HogState::Error;
    reason_ = what;
  };
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(std::string("pipe: ") + std::strerror(errno));
  UniqueFd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC | O_NONBLOCK) != 0)
    return fail(std::string("pipe: ") + std::strerror(errno));
  UniqueFd err_r(err[0]), err_w(err[1]);
  // O_NONBLOCK is per open file description: our read ends keep it, the
  // write ends the hog gets block as usual.
  ::fcntl(out_w.get(), F_SETFL, 0);
  ::fcntl(err_w.get(), F_SETFL, 0);

  std::vector<std::string> args{o.hog_path, "--device", std::to_string(o.device)};
  if (o.bytes) {
    args.insert(args.end(), {"--bytes", std::to_string(*o.bytes)});
  } else {
    std::ostringstream s;
    s.precision(17);
    s << o.share;
    args.insert(args.end(), {"--share", s.str()});
  }
  if (!o.cudart.empty()) args.insert(args.end(), {"--cudart", o.cudart});
  std::vector<std::string> env_s;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    std::string_view key = v.substr(0, v.find('='));
    if (!o.env.count(std::string(key))) env_s.emplace_back(v);
  }
  for (const auto& [k, v] : o.env) env_s.push_back(k + "=" + v);

  SpawnOptions so;
  so.argv = args;
  so.env = &env_s;
  so.stdin_fd = in_r.get();
  so.stdout_fd = out_w.get();
  so.stderr_fd = err_w.get();
  auto started = aftermath::spawn(so);
  if (!started) return fail(started.error().what);
  pid_ = *started;
  if (auto ec = pidfd_open(pid_, pidfd_)) {
    // Only ENOSYS (kernel < 5.3) gets here: the child is unreaped, so the pid
    // is still ours. Without a pidfd it cannot be waited on with a deadline.
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
    reaped_ = true;
    outcome_ = Outcome::from_wait_status(st);
    return fail("pidfd_open: " + ec.message());
  }
  stdin_w_ = std::move(in_w);
  stdout_r_ = std::move(out_r);
  stderr_r_ = std::move(err_r);
}

void DeviceHog::read_answer(Nanos until) {
  bool exited = false;
  for (;;) {
    std::size_t nl = out_.find('\n');
    if (nl != std::string::npos) {
      line_ = out_.substr(0, nl);
      break;
    }
    if (exited || !stdout_r_) break;
    if (monotonic_now() >= until) {
      state_ = HogState::TimedOut;
      return;
    }
    pollfd fds[3] = {{stdout_r_.get(), POLLIN, 0},
                     {pidfd_.get(), POLLIN, 0},
                     {stderr_r_ ? stderr_r_.get() : -1, POLLIN, 0}};
    int n = ::poll(fds, 3, poll_ms(until));
    if (n < 0 && errno != EINTR) {
      state_ = HogState::Error;
      reason_ = std::string("poll: ") + std::strerror(errno);
      return;
    }
    if (fds[2].revents) drain(stderr_r_, err_);
    if (fds[0].revents) drain(stdout_r_, out_);
    if (fds[1].revents) {
      // Exited: whatever it wrote is in the pipe now.
      exited = true;
      drain(stdout_r_, out_);
      drain(stderr_r_, err_);
    }
  }
  drain(stderr_r_, err_);
  if (line_.empty()) {
    line_ = tail(out_, 200);
    state_ = HogState::Error;
    reason_ = "the hog closed its output without answering";
    return;
  }
  auto h = parse_hog_line(line_);
  if (!h) {
    state_ = HogState::Error;
    reason_ = "not a hog answer: " + tail(line_, 200);
    return;
  }
  state_ = h->state;
  if (h->state == HogState::Ready) {
    held_ = field_u64(*h, "held");
    goal_ = field_u64(*h, "goal");
    free_before_ = field_u64(*h, "free_before");
    free_after_ = field_u64(*h, "free_after");
    total_ = field_u64(*h, "total");
    if (h->fields.count("short")) reason_ = h->fields["error"];
  } else {
    free_before_ = field_u64(*h, "free_before");
    total_ = field_u64(*h, "total");
    reason_ = h->fields["reason"];
    if (h->fields.count("error")) reason_ += " (" + h->fields["error"] + ")";
    if (h->fields.count("detail")) reason_ += ": " + h->fields["detail"];
  }
}

bool DeviceHog::wait_exit(Nanos until) {
  for (;;) {
    if (reaped_) return true;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      outcome_ = Outcome::from_wait_status(st);
      pidfd_ = UniqueFd();
      stdin_w_ = UniqueFd();
      stdout_r_ = UniqueFd();
      stderr_r_ = UniqueFd();
      return true;
    }
    if (r < 0 && errno != EINTR) {  // ECHILD: someone else reaped it; it is gone
      reaped_ = true;
      pidfd_ = UniqueFd();
      return true;
    }
    if (monotonic_now() >= until) return false;
    pollfd p{pidfd_.get(), POLLIN, 0};
    ::poll(&p, 1, poll_ms(until));
  }
}

void DeviceHog::kill_now() {
  if (!running()) return;
  (void)pidfd_signal(pidfd_.get(), SIGKILL);  // ESRCH: already exited, the reap follows
  wait_exit(monotonic_now() + kill_wait_);
}

HogState DeviceHog::start(const DeviceHogOptions& o) {
  if (state_ != HogState::NotStarted) throw std::logic_error("DeviceHog::start called twice");
  term_wait_ = o.term_wait;
  kill_wait_ = o.kill_wait;
  Nanos until = monotonic_now() + o.deadline;
  spawn(o);
  if (state_ == HogState::Error) return state_;
  read_answer(until);
  switch (state_) {
    case HogState::Ready:
      break;
    case HogState::Failed:
    case HogState::Unavailable:
      // It exits by itself right after answering.
      if (!wait_exit(std::max(until, monotonic_now() + kMilli * 100))) kill_now();
      break;
    case HogState::TimedOut:
      reason_ = "no answer within " + format_duration(o.deadline);
      if (!err_.empty()) reason_ += "; stderr: " + tail(err_, 300);
      kill_now();
      break;
    default:
      if (!err_.empty()) reason_ += "; stderr: " + tail(err_, 300);
      kill_now();
      if (outcome_) reason_ += " (" + outcome_->to_string() + ")";
      break;
  }
  // After the answer nobody reads its stderr: the hog ignores SIGPIPE.
  stderr_r_ = UniqueFd();
  return state_;
}

std::optional<Outcome> DeviceHog::stop() {
  if (pid_ <= 0) return std::nullopt;
  if (reaped_) return outcome_;
  (void)pidfd_signal(pidfd_.get(), SIGTERM);
  stdin_w_ = UniqueFd();  // EOF: the hog's second way to hear it
  if (!wait_exit(monotonic_now() + term_wait_)) kill_now();
  return reaped_ ? outcome_ : std::nullopt;
}

}  // namespace aftermath
