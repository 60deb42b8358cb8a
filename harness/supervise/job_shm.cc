#include "harness/supervise/job_shm.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/os/clock.h"

namespace aftermath {

JobShm::JobShm(std::function<Nanos()> now, std::function<void(Observation)> record)
    : now_(std::move(now)), record_(std::move(record)) {}

void JobShm::take_baseline(const std::string& dir) {
  dir_ = dir;
  auto table = read_shm(dir_);
  if (!table) {
    record_(obs::harness_failure(now_(), HarnessPart::ShmDir, table.error().what));
    return;
  }
  baseline_ = std::move(*table);
}

void JobShm::set_place(bool private_shm, int reaper_pid) {
  // A private tmpfs starts empty; the host's is what we saw before the launch.
  private_ = private_shm;
  if (private_shm) {
    dir_ = "/proc/" + std::to_string(reaper_pid) + "/root/dev/shm";
    baseline_.clear();
    if (auto table = read_shm(dir_); !table)
      record_(obs::harness_failure(now_(), HarnessPart::ShmDir, table.error().what));
  }
  now_table_ = baseline_;
  for (const auto& [name, e] : baseline_) record_(obs::shm_add(0, name, e.bytes, true));
}

bool JobShm::at_baseline() const {
  if (fresh_ >= 0) return fresh_ == 0;
  for (const auto& [name, e] : now_table_)
    if (!baseline_.count(name)) return false;
  return true;
}

void JobShm::recount() {
  extra_ = 0;
  fresh_ = 0;
  for (const auto& [name, e] : now_table_)
    if (!baseline_.count(name)) {
      extra_ += e.bytes;
      ++fresh_;
    }
}

void JobShm::sample() {
  if (final_) return;
  // inotify says which names changed, so an idle tick reads nothing and a
  // busy one only those: the cost is the changes', not the directory's (a
  // runner may hold 100,000 entries). A full scan where it cannot (no watch,
  // events lost), and as a safety net every kRescan, or 1000 times as long as
  // the last scan took if that is longer (at most 0.1% of a core).
  constexpr Nanos kRescan = 10 * kSecond;
  bool scan = false;
  if (watch_.dir() != dir_) {
    (void)watch_.watch(dir_);
    scan = true;
  }
  std::set<std::string> changed;
  if (!watch_.poll(&changed)) scan = true;
  const Nanos t = monotonic_now();
  if (last_scan_ < 0 || t - last_scan_ >= std::max(kRescan, 1000 * scan_cost_)) scan = true;
  ShmDiff d;
  std::int64_t resized_by = 0;  // fresh entries' growth (inotify path)
  auto fresh = [&](const std::string& name) { return !baseline_.count(name); };
  if (scan) {
    auto shm = scan_shm(dir_);
    ++scans_;
    d = diff_shm(now_table_, shm);
    now_table_ = std::move(shm);
    last_scan_ = monotonic_now();
    scan_cost_ = last_scan_ - t;
  } else {
    for (const auto& name : changed) {
      auto e = stat_shm(dir_, name);
      auto it = now_table_.find(name);
      if (e && it == now_table_.end()) {
        d.added.push_back(*e);
        now_table_.emplace(name, std::move(*e));
      } else if (e) {
        if (e->bytes != it->second.bytes) {
          d.resized.push_back(*e);
          if (fresh(name)) resized_by += e->bytes - it->second.bytes;
        }
        it->second = std::move(*e);
      } else if (it != now_table_.end()) {
        d.removed.push_back(it->second);
        now_table_.erase(it);
      }
    }
  }
  for (const auto& e : d.added) record_(obs::shm_add(now_(), e.name, e.bytes));
  for (const auto& e : d.resized) record_(obs::shm_resize(now_(), e.name, e.bytes));
  for (const auto& e : d.removed) record_(obs::shm_remove(now_(), e.name));

  // What the job added: counted in full after a scan, else moved by the
  // changes alone.
  if (scan || fresh_ < 0) {
    recount();
    return;
  }
  for (const auto& e : d.added)
    if (fresh(e.name)) extra_ += e.bytes, ++fresh_;
  for (const auto& e : d.removed)
    if (fresh(e.name)) extra_ -= e.bytes, --fresh_;
  extra_ += resized_by;
}

void JobShm::finish(bool keep_leaks, const std::string& keep_dir) {
  final_ = true;
  std::error_code ec;
  for (const auto& [name, e] : now_table_) {
    if (baseline_.count(name)) continue;
    auto path = std::filesystem::path(dir_) / name;
    if (keep_leaks) {
      // A private tmpfs goes with the job: keep a copy for inspection. The
      // host's /dev/shm keeps the entry itself.
      if (private_) {
        std::filesystem::create_directories(keep_dir, ec);
        std::filesystem::copy(path, std::filesystem::path(keep_dir) / name,
                              std::filesystem::copy_options::recursive, ec);
        record_(
            obs::note(now_(), "kept a copy of leaked /dev/shm entry " + name + " in " + keep_dir));
      }
      continue;
    }
    if (!private_) {
      std::filesystem::remove_all(path, ec);
      if (ec) {
        record_(
            obs::note(now_(), "cannot remove leaked /dev/shm entry " + name + ": " + ec.message()));
        continue;
      }
    }
    // (private: discarded with the job's tmpfs when its namespace ends)
    record_(obs::shm_reclaim(now_(), name, e.bytes));
  }
}

}  // namespace aftermath
