#include "harness/supervise/runner.h"

#include <gnu/libc-version.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>

#include "harness/check/checks.h"

namespace aftermath {

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=:,+@%") == std::string::npos)
    return a;
  std::string out = "'";
  for (char c : a) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

std::string iso_now() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (std::uint64_t(rd()) << 32 | rd()) & 0x7fffffffffffffffull;
}

std::string repro_line(const Scenario& sc, const RunOptions& o, std::uint64_t seed) {
  std::string s = shell_quote(o.self_path.empty() ? "aftermath" : o.self_path) + " run --seed " +
                  std::to_string(seed);
  if (o.timeout) s += " --timeout " + format_duration(*o.timeout);
  if (o.grace) s += " --grace " + format_duration(*o.grace);
  if (o.settle) s += " --settle " + format_duration(*o.settle);
  if (o.containment != "auto") s += " --contain " + o.containment;
  if (o.shm != "auto") s += " --shm " + o.shm;
  for (const auto& f : o.fault_texts) s += " --fault " + shell_quote(f);
  if (sc.file == "<command line>") {
    s += " --";
    for (const auto& a : sc.job.argv) s += " " + shell_quote(a);
    return s;
  }
  std::error_code ec;
  auto abs = std::filesystem::absolute(sc.file, ec);
  return s + " " + shell_quote(ec ? sc.file : abs.string());
}

}  // namespace

ScenarioResult run_scenario(const Scenario& input, const RunOptions& o) {
  Scenario sc = input;
  if (o.timeout) sc.timeouts.job = *o.timeout;
  if (o.grace) sc.grace = *o.grace;
  if (o.settle) sc.timeouts.settle = *o.settle;
  std::uint64_t seed = o.seed ? *o.seed : sc.seed ? *sc.seed : random_seed();
  sc.job.env["AFTERMATH_SEED"] = std::to_string(seed);
  sc.job.env["AFTERMATH_SCENARIO"] = sc.name;

  ScenarioResult r;
  r.name = sc.name;
  r.file = sc.file;
  r.description = sc.description;
  r.tags = sc.tags;
  r.scenario_text = sc.text;
  r.scenario_hash = fnv1a_hex(sc.text);
  r.seed = seed;
  if (sc.expect.expect_pass) {
    r.expect = "pass";
  } else {
    r.expect = "fail:";
    for (const auto& f : sc.expect.failing) r.expect += " " + f;
  }
  r.repro = repro_line(sc, o, seed);
  r.started_at = iso_now();
  std::error_code ec;
  r.out_dir = (std::filesystem::absolute(o.out_dir, ec) / sc.name).string();
  std::filesystem::create_directories(r.out_dir, ec);
  if (ec) {
    r.verdict = Verdict::Error;
    r.error = "cannot create " + r.out_dir + ": " + ec.message();
    r.verdict_reason = r.error;
    return r;
  }
  r.stdout_path = r.out_dir + "/stdout.log";
  r.stderr_path = r.out_dir + "/stderr.log";

  SupervisorOptions so;
  so.reaper_path = o.reaper_path;
  so.out_dir = r.out_dir;
  so.containment = o.containment;
  so.shm = o.shm;
  so.keep_leaks = o.keep_leaks;
  so.interrupted = o.interrupted;
  if (o.on_status) so.on_status = [&](const LiveStatus& s) { o.on_status(sc, s); };
  try {
    r.timeline = supervise(sc, so);
  } catch (const std::exception& e) {
    r.verdict = Verdict::Error;
    r.error = e.what();
    r.verdict_reason = r.error;
    return r;
  }
  r.processes = build_histories(r.timeline);
  r.checks = run_checks(sc, r.timeline, r.processes);
  r.verdict = decide_verdict(sc, r.checks, &r.verdict_reason);
  if (o.interrupted && *o.interrupted) {
    r.verdict = Verdict::Error;
    r.error = "interrupted";
    r.verdict_reason = "the run was interrupted";
  }
  for (const auto& ev : r.timeline.events) {
    if (ev.kind == ObsKind::Note && ev.text.rfind("teardown failed", 0) == 0) {
      r.verdict = Verdict::Error;
      r.error = ev.text;
      r.verdict_reason = ev.text;
    }
  }
  auto t = compute_timings(r.timeline, r.processes);
  r.timings_ms = std::move(t.ms);
  r.timings_origin = t.origin;
  return r;
}

std::map<std::string, std::string> environment_facts() {
  std::map<std::string, std::string> env;
  utsname u{};
  if (uname(&u) == 0) {
    env["kernel"] = std::string(u.sysname) + " " + u.release;
    env["machine"] = u.machine;
  }
  env["glibc"] = gnu_get_libc_version();
#if defined(__clang__)
  env["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = "gcc " __VERSION__;
#endif
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) env["ulimit_n"] = std::to_string(rl.rlim_cur);
  struct statvfs vfs {};
  if (statvfs("/dev/shm", &vfs) == 0) {
    env["dev_shm_size_bytes"] = std::to_string(std::uint64_t(vfs.f_blocks) * vfs.f_frsize);
    env["dev_shm_used_bytes"] =
        std::to_string(std::uint64_t(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize);
  }
  env["nproc"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  env["uid"] = std::to_string(getuid());
  return env;
}

}  // namespace aftermath
