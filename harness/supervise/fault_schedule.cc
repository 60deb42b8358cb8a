#include "harness/supervise/fault_schedule.h"

#include <signal.h>

#include <algorithm>

#include "harness/inject/select.h"

namespace aftermath {

namespace asio = boost::asio;

FaultSchedule::FaultSchedule(asio::io_context& ctx, const std::vector<FaultSpec>& faults,
                             std::vector<FaultRecord>& records, JobTracker& tracker,
                             FaultDriver& driver, FaultScheduleHooks hooks)
    : ctx_(ctx),
      faults_(faults),
      records_(records),
      tracker_(tracker),
      driver_(driver),
      hooks_(std::move(hooks)),
      timer_(ctx) {}

void FaultSchedule::start(Nanos t) {
  base_ = t;
  arm_next();
}

void FaultSchedule::on_phase_event(const std::string& name) {
  bool before_steady = steady_seen_, before_shutdown = shutdown_seen_;
  if (name == "step") steady_seen_ = true;
  if (name.rfind("shutdown", 0) == 0) shutdown_seen_ = true;
  if ((steady_seen_ && !before_steady) || (shutdown_seen_ && !before_shutdown)) arm_next();
}

void FaultSchedule::on_job_end() {
  job_ended_ = true;
  on_phase_event("shutdown");  // the job is ending: phase-triggered faults may fire
}

std::string FaultSchedule::on_point(int pid, const std::string& name, long long hit,
                                    const nlohmann::json& labels) {
  ++point_hits_[name];
  on_phase_event(name);
  const TrackedProcess* sender = tracker_.find(pid);
  for (auto& w : watches_) {
    if (w.fired || stopped_ || !sender || !point_matches(w.at, name, hit, labels, sender)) continue;
    w.fired = true;
    if (hooks_.remote_trigger) hooks_.remote_trigger(w.fault, name, hit);
  }
  if (stopped_ || next_ >= faults_.size()) return "continue";
  if (!sender || !point_matches(faults_[next_].at, name, hit, labels, sender)) return "continue";
  return fire(next_, pid, name, hit);
}

void FaultSchedule::watch(std::vector<std::pair<size_t, TriggerSpec>> remote) {
  for (auto& [fault, at] : remote) watches_.push_back(Watch{fault, std::move(at)});
}

void FaultSchedule::fire_remote(size_t index, int from, const std::string& point, long long hit) {
  if (stopped_ || index >= faults_.size() || index < next_) return;
  remote_fires_[index] = RemoteFire{from, point, hit};
  if (index == next_ && tracker_.top_started()) post_fire(index);
}

void FaultSchedule::after_sample(int new_shm_entries) {
  if (next_ < faults_.size() && !stopped_ && faults_[next_].at.kind == TriggerSpec::Kind::When) {
    if (predicate_holds(faults_[next_].at.when, tracker_.view(), new_shm_entries)) post_fire(next_);
  }
  retry_waiting();
}

void FaultSchedule::retry_waiting() {
  if (in_fire_ || stopped_ || next_ >= faults_.size()) return;
  if (records_[next_].waiting_since) fire(next_, 0, "", 0);
}

void FaultSchedule::stop() {
  stopped_ = true;
  timer_.cancel();
  for (auto& t : resume_timers_) t->cancel();
}

void FaultSchedule::arm_next() {
  if (next_ >= faults_.size() || stopped_ || !tracker_.top_started()) return;
  if (remote_fires_.count(next_)) return post_fire(next_);
  const FaultSpec& f = faults_[next_];
  switch (f.at.kind) {
    case TriggerSpec::Kind::After: {
      Nanos wait = std::max<Nanos>(0, base_ + f.at.after - now());
      size_t idx = next_;
      timer_.expires_after(std::chrono::nanoseconds(wait));
      timer_.async_wait([this, idx](boost::system::error_code ec) {
        if (!ec && next_ == idx) fire(idx, 0, "", 0);
      });
      break;
    }
    case TriggerSpec::Kind::Phase:
      if (f.at.phase == "startup" || (f.at.phase == "steady" && steady_seen_) ||
          (f.at.phase == "shutdown" && shutdown_seen_))
        post_fire(next_);
      break;
    case TriggerSpec::Kind::When:   // evaluated after every sample
    case TriggerSpec::Kind::Point:  // fired by the point's message
      break;
  }
}

void FaultSchedule::post_fire(size_t index) {
  asio::post(ctx_, [this, index] {
    if (next_ == index) fire(index, 0, "", 0);
  });
}

bool FaultSchedule::wait_for_target(size_t index, const std::vector<int>& pids, int self_pid) {
  // "After 10 ms, OOM rank 0" means rank 0 once it exists: a trigger that
  // comes before its target does waits for it (until the job ends, when the
  // fault is reported as never fired). A point's own process is there by
  // definition, so only triggers that are not points wait.
  const FaultSpec& f = faults_[index];
  FaultRecord& rec = records_[index];
  if (!pids.empty() || self_pid != 0 || f.target.kind == TargetSpec::Kind::Self || job_ended_)
    return false;
  if (!rec.waiting_since) {
    rec.waiting_since = now();
    hooks_.record(obs::note(now(), "fault " + std::to_string(index + 1) + " (" +
                                       std::string(to_string(f.action)) + " " + f.target.text +
                                       "): its trigger came, no live job process matches '" +
                                       f.target.text + "' yet: waiting for one"));
  }
  return true;
}

std::string FaultSchedule::fire(size_t index, int self_pid, const std::string& point,
                                long long hit) {
  if (stopped_ || index != next_ || in_fire_) return "continue";
  const FaultSpec& f = faults_[index];
  FaultRecord& rec = records_[index];
  in_fire_ = true;
  // A retry comes right after a sample; a first try takes a fresh view for
  // selectors and predicates.
  if (self_pid == 0 && !rec.waiting_since) hooks_.sample();
  in_fire_ = false;
  // Triggered on another node (fire_remote): that node's point and hit.
  const RemoteFire* remote = nullptr;
  if (auto rf = remote_fires_.find(index);
      rf != remote_fires_.end() && self_pid == 0 && point.empty())
    remote = &rf->second;
  // scancel: the step's tree among the live job processes; those outside it
  // (reparented) are counted for the timeline.
  const std::vector<int> live =
      f.action == FaultAction::Scancel ? live_job_pids() : std::vector<int>{};
  std::vector<int> pids = f.action == FaultAction::Scancel
                              ? driver_.step_tree(tracker_.top_pid(), live)
                              : select_targets(f.target, tracker_.view(), self_pid);
  if (wait_for_target(index, pids, self_pid)) return "continue";
  next_ = index + 1;
  if (rec.waiting_since && !pids.empty())
    hooks_.record(obs::note(now(), "fault " + std::to_string(index + 1) + ": '" + f.target.text +
                                       "' appeared " + format_duration(now() - *rec.waiting_since) +
                                       " after the trigger"));
  rec.sent = now();
  rec.point = remote ? remote->point : point;
  rec.hit = remote ? remote->hit : hit;
  rec.pids = pids;
  std::string answer = "continue";
  if (pids.empty()) {
    rec.status = FaultStatus::Failed;
    rec.reason = "no live job process matches '" + f.target.text + "'";
    if (rec.waiting_since)
      rec.reason = "no live job process matched '" + f.target.text + "' from its trigger (at " +
                   format_duration(*rec.waiting_since) + ") until the job's top process exited";
  } else {
    const TrackedProcess& first = *tracker_.find(pids.front());
    rec.target_role = std::string(to_string(first.role));
    rec.rank = first.rank;
    rec.worker = first.worker;
    std::vector<FaultTarget> targets;
    for (int pid : pids) {
      const TrackedProcess& tr = *tracker_.find(pid);
      targets.push_back(FaultTarget{pid, tr.pidfd ? tr.pidfd.get() : -1, tr.inner_pid});
    }
    FaultAct act = driver_.act(index, f, targets, f.at.kind == TriggerSpec::Kind::Point && !remote);
    if (remote) act.reason += "; triggered on node " + std::to_string(remote->from);
    record_act(index, act);
    if (act.ends_agent) driver_.end_agent();  // recorded (and streamed) first; never returns
    if (f.action == FaultAction::Sigstop && f.resume_after > 0 && !act.signalled.empty())
      resume_after(f, pids);
    if (f.action == FaultAction::Partition && act.status == FaultStatus::Injected) heal_after(f);
    if (f.action == FaultAction::Scancel && act.status == FaultStatus::Injected) {
      if (size_t left = live.size() - pids.size())
        hooks_.record(obs::note(
            now(), "scancel: " + std::to_string(left) +
                       " job process(es) outside the step's tree (reparented) not signalled"));
      if (!f.step_signal) kill_after(f);
    }
    answer = act.answer;
  }
  base_ = now();
  arm_next();
  return answer;
}

void FaultSchedule::record_act(size_t index, const FaultAct& act) {
  const FaultSpec& f = faults_[index];
  FaultRecord& rec = records_[index];
  const FaultAction action = f.action;
  int i = static_cast<int>(index);
  for (const auto& n : act.notes) hooks_.record(obs::note(now(), n));
  for (int pid : act.signalled) hooks_.record(obs::fault(now(), i, pid, action, rec.trigger));
  rec.status = act.status;
  rec.mechanism = act.mechanism;
  rec.reason = act.reason;
  for (const auto& c : act.cgroups) rec.cgroups.push_back(c);
  if (act.oom_kills) rec.oom_kills = act.oom_kills;
  // A signal's own observations are above, one per process it reached.
  if (act.status == FaultStatus::Injected && act.signalled.empty())
    hooks_.record(obs::fault(now(), i, rec.pids.front(), action, rec.trigger));
}

void FaultSchedule::resume_after(const FaultSpec& f, const std::vector<int>& pids) {
  auto t = std::make_unique<asio::steady_timer>(ctx_);
  t->expires_after(std::chrono::nanoseconds(f.resume_after));
  t->async_wait([this, pids](boost::system::error_code ec) {
    if (ec) return;
    for (int pid : pids) {
      const TrackedProcess* tr = tracker_.find(pid);
      if (tr && tr->pidfd && !tr->gone && !pidfd_signal(tr->pidfd.get(), SIGCONT))
        hooks_.record(obs::signal(now(), pid, SIGCONT, "resume after SIGSTOP"));
    }
  });
  resume_timers_.push_back(std::move(t));
}

std::vector<int> FaultSchedule::live_job_pids() const {
  std::vector<int> out;
  for (const auto& p : tracker_.view())
    if (p.alive) out.push_back(p.pid);
  return out;
}

void FaultSchedule::kill_after(const FaultSpec& f) {
  auto t = std::make_unique<asio::steady_timer>(ctx_);
  t->expires_after(std::chrono::nanoseconds(f.kill_wait));
  t->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    // The tree as it is now: the task may be gone, and with it what hung
    // below it (reparented); Slurm finds only what is still below a live task.
    hooks_.sample();
    std::vector<int> tree = driver_.step_tree(tracker_.top_pid(), live_job_pids());
    hooks_.record(obs::note(now(), "scancel: kill_wait over: SIGKILL to the " +
                                       std::to_string(tree.size()) +
                                       " process(es) still in the step's tree"));
    for (int pid : tree) {
      const TrackedProcess* tr = tracker_.find(pid);
      if (tr && tr->pidfd && !tr->gone && !pidfd_signal(tr->pidfd.get(), SIGKILL))
        hooks_.record(obs::signal(now(), pid, SIGKILL, "scancel after kill_wait"));
    }
  });
  resume_timers_.push_back(std::move(t));
}

void FaultSchedule::heal_after(const FaultSpec& f) {
  auto t = std::make_unique<asio::steady_timer>(ctx_);
  t->expires_after(std::chrono::nanoseconds(f.duration));
  t->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    Status healed = driver_.heal_network();
    hooks_.record(obs::note(
        now(), healed ? "the partition healed: the node's network is back" : healed.error().what));
  });
  resume_timers_.push_back(std::move(t));
}

void FaultSchedule::watch_oom_kills() {
  if (driver_.has_cgroups()) record_oom_kills(driver_.poll_oom_kills());
}

void FaultSchedule::close_cgroups() {
  std::vector<std::string> notes;
  record_oom_kills(driver_.close_cgroups(notes));
  for (auto& n : notes) hooks_.record(obs::note(now(), n));
}

void FaultSchedule::record_oom_kills(const std::vector<OomKillSeen>& kills) {
  for (const auto& k : kills) {
    hooks_.record(
        obs::oom_kill(now(), static_cast<int>(k.fault), k.pid, k.kills, k.cgroup, k.kernel_line));
    auto& rec = records_.at(k.fault);
    if (!k.kernel_line.empty()) rec.kernel_log.push_back(k.kernel_line);
    rec.oom_kills = k.fault_total;
  }
}

UnfiredContext FaultSchedule::unfired(bool job_ended, bool deadline_hit) const {
  return UnfiredContext{next_, job_ended, deadline_hit, point_hits_};
}

}  // namespace aftermath
