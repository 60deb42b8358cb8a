#include "harness/supervise/tmp_watch.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness/observe/proc.h"
#include "harness/supervise/job_tracker.h"
#include "harness/supervise/run_registry.h"

namespace aftermath {

namespace {

// Names and inodes only: the walk for sizes is left to finish().
constexpr TmpScanLimits kListOnly{0, 0};
constexpr Nanos kFirstBackoff = 50 * kMilli;
constexpr Nanos kMaxBackoff = 4 * kSecond;

}  // namespace

JobLookup tracker_lookup(JobTracker& tracker, const ProcReader& proc, int run_id) {
  return JobLookup{
      .present =
          [&tracker](bool fresh) {
            if (fresh) tracker.walk();
            return tracker.present_pids();
          },
      .whose =
          [&tracker, &proc, run_id](int pid) {
            using W = JobLookup::Whose;
            if (tracker.had(pid)) return W::Job;
            tracker.walk();
            if (tracker.had(pid)) return W::Job;
            if (other_run_with(run_id, pid) != 0) return W::Outside;
            // Alive, and not below the job's reaper (the walk found every
            // process that is): another's.
            if (proc.stat(pid)) return W::Outside;
            return W::Unknown;
          },
  };
}

Status TmpDirWatch::start(Options options) {
  opt_ = std::move(options);
  auto table = scan_tmp(opt_.dir, kListOnly);
  if (!table) return table.error();
  baseline_ = std::move(*table);
  (void)watch_.watch(opt_.dir);     // without inotify, poll() lists the dir instead
  (void)creators_.watch(opt_.dir);  // without fanotify, whoever holds an entry tells
  active_ = true;
  return {};
}

void TmpDirWatch::note_new(const std::string& name, Nanos now) {
  auto e = stat_tmp(opt_.dir, name, kListOnly);
  if (!e) return;
  if (auto b = baseline_.find(name); b != baseline_.end() && b->second.inode == e->inode) return;
  auto it = seen_.find(name);
  if (it != seen_.end() && it->second.inode == e->inode) return;
  seen_[name] = Seen{.inode = e->inode, .next_try = now, .backoff = kFirstBackoff};
}

void TmpDirWatch::ask_creator(Seen& s, const JobLookup& job) {
  if (s.creator <= 0 || s.creator_known || s.job || s.outside) return;
  switch (job.whose(s.creator)) {
    case JobLookup::Whose::Job:
      s.job = s.creator_known = true;
      break;
    case JobLookup::Whose::Outside:
      s.outside = s.creator;
      s.creator_known = true;
      break;
    case JobLookup::Whose::Unknown:
      break;  // asked again later; until then, its holders tell
  }
}

void TmpDirWatch::note_creators(Nanos now, const JobLookup& job, bool last) {
  if (!creators_.active() || !job.whose) return;
  std::vector<CreatedEntry> made;
  (void)creators_.read(&made);  // events lost: those entries are judged by their holders
  for (const auto& c : made) {
    if (c.pid <= 0 || !known_residue(classify_tmp_name(c.name))) continue;
    note_new(c.name, now);
    auto it = seen_.find(c.name);
    if (it == seen_.end()) continue;  // gone already
    it->second.creator = c.pid;
    ask_creator(it->second, job);
  }
  // A creator nobody knew may be known now (a run beside this one has
  // published it since): asked again when its entry is due (the holders'
  // backoff: each ask may walk the job's tree), and once more at the end.
  for (auto& [name, s] : seen_)
    if (last || now >= s.next_try) ask_creator(s, job);
}

void TmpDirWatch::poll(Nanos now, const JobLookup& job) {
  if (!active_) return;
  note_creators(now, job, false);
  std::set<std::string> changed;
  if (watch_.poll(&changed)) {
    for (const auto& name : changed)
      if (known_residue(classify_tmp_name(name))) note_new(name, now);
  } else if (auto table = scan_tmp(opt_.dir, kListOnly)) {
    for (const auto& [name, e] : *table)
      if (known_residue(e.kind)) note_new(name, now);
  }

  std::vector<std::string> due;
  for (auto it = seen_.begin(); it != seen_.end();) {
    Seen& s = it->second;
    if (s.job || s.outside || now < s.next_try) {
      ++it;
      continue;
    }
    auto e = stat_tmp(opt_.dir, it->first, kListOnly);
    if (!e || e->inode != s.inode) {  // removed (or replaced: seen again when noticed)
      it = seen_.erase(it);
      continue;
    }
    due.push_back(it->first);
    ++it;
  }
  if (due.empty()) return;
  std::vector<int> job_pids = job.present(false);
  auto by_job = find_tmp_holders(opt_.proc_root, opt_.dir, due, &job_pids);
  std::vector<std::string> elsewhere;
  for (const auto& name : due) {
    Seen& s = seen_.at(name);
    auto h = by_job.find(name);
    if (h != by_job.end() && !h->second.pids.empty()) {
      s.job = true;
    } else if (h != by_job.end() && !h->second.bound.empty()) {
      elsewhere.push_back(name);  // bound, but by none of the job's processes
    } else {
      s.next_try = now + s.backoff;
      s.backoff = std::min(2 * s.backoff, kMaxBackoff);
    }
  }
  if (elsewhere.empty()) return;
  // Rare (a neighbour's residue, or a job process too new to be known yet: a
  // DataLoader worker binds its resource_sharer listener as it hands over its
  // first batch): only then is every process looked at, and the job's list
  // asked for again with its newcomers.
  auto by_all = find_tmp_holders(opt_.proc_root, opt_.dir, elsewhere);
  bool refreshed = false;
  for (const auto& name : elsewhere) {
    auto h = by_all.find(name);
    if (h == by_all.end() || refreshed) continue;
    for (int pid : h->second.pids)
      if (std::find(job_pids.begin(), job_pids.end(), pid) == job_pids.end()) {
        job_pids = job.present(true);
        refreshed = true;
        break;
      }
  }
  for (const auto& name : elsewhere) {
    Seen& s = seen_.at(name);
    auto h = by_all.find(name);
    if (h != by_all.end() && std::ranges::any_of(h->second.pids, [&](int pid) {
          return std::find(job_pids.begin(), job_pids.end(), pid) != job_pids.end();
        })) {
      s.job = true;
      continue;
    }
    s.outside = -1;
    if (h != by_all.end())
      for (int pid : h->second.pids)
        if (std::find(job_pids.begin(), job_pids.end(), pid) == job_pids.end()) {
          s.outside = pid;
          break;
        }
  }
}

std::vector<Observation> TmpDirWatch::finish(Nanos now, const JobLookup& job) {
  std::vector<Observation> out;
  if (!active_) return out;
  note_creators(now, job, true);
  active_ = false;
  auto table = scan_tmp(opt_.dir);
  if (!table) {
    out.push_back(obs::harness_failure(now, HarnessPart::TmpDir, table.error().what));
    return out;
  }
  auto fresh = new_tmp_entries(baseline_, *table);
  std::vector<std::string> names;
  for (const auto& e : fresh) names.push_back(e.name);
  // The job is gone: whoever holds an entry now is outside it.
  auto holds = find_tmp_holders(opt_.proc_root, opt_.dir, names);
  for (const auto& e : fresh) {
    int outside = 0;
    if (auto h = holds.find(e.name); h != holds.end() && h->second.held()) {
      outside = h->second.pids.empty() ? -1 : h->second.pids.front();
    } else if (auto s = seen_.find(e.name);
               s != seen_.end() && s->second.inode == e.inode && !s->second.job) {
      outside = s->second.outside;
    }
    std::string path = opt_.dir + "/" + e.name;
    out.push_back(obs::tmp_left(now, path, e.bytes, e.uid, e.kind, outside));
    if (!known_residue(e.kind) || outside != 0 || opt_.keep_leaks) continue;
    auto again = stat_tmp(opt_.dir, e.name, kListOnly);
    if (!again || again->inode != e.inode) continue;  // gone or replaced meanwhile
    std::error_code ec;
    if (e.kind == TmpKind::Torchelastic) {
      // torchrun's logs, kept: with the run's other logs, not in the temp dir.
      if (opt_.logs_dir.empty()) continue;
      std::string to = opt_.logs_dir + "/" + e.name;
      std::filesystem::create_directories(opt_.logs_dir, ec);
      if (!ec) std::filesystem::rename(path, to, ec);
      if (ec == std::errc::cross_device_link) {
        ec.clear();
        std::filesystem::copy(path, to, std::filesystem::copy_options::recursive, ec);
        if (!ec) std::filesystem::remove_all(path, ec);
      }
      if (ec) {
        out.push_back(obs::note(
            now, "cannot move torchrun's log folder " + path + " to " + to + ": " + ec.message()));
        continue;
      }
      out.push_back(obs::tmp_reclaim(now, path, e.bytes, to));
      continue;
    }
    std::filesystem::remove_all(path, ec);
    if (ec) {
      out.push_back(
          obs::note(now, "cannot remove leftover temp-dir entry " + path + ": " + ec.message()));
      continue;
    }
    out.push_back(obs::tmp_reclaim(now, path, e.bytes));
  }
  return out;
}

}  // namespace aftermath
