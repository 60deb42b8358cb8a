// The fault schedule: when each of a scenario's faults fires, in order.
//
// A fault's trigger is considered only once every earlier fault has fired:
// `after` counts from the previous fault (the top's start for the first), a
// phase fires when the job reaches it, a predicate is tried after every
// sample, a point fires when its process reports it and waits for the
// answer. A trigger that comes before any live process matches the target
// waits for one (until the job ends). Firing takes a fresh view of the job
// from the tracker, hands the targets to the fault driver, and writes what
// the driver did into the fault's record.
#pragma once

#include <boost/asio.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/inject/fault_driver.h"
#include "harness/inject/fault_outcomes.h"
#include "harness/scenario/fault.h"
#include "harness/supervise/job_tracker.h"

namespace aftermath {

struct FaultScheduleHooks {
  std::function<Nanos()> now;               // run time
  std::function<void(Observation)> record;  // observations (notes, faults, signals, OOM kills)
  std::function<void()> sample;             // a fresh look at the job (tree and /dev/shm)
  // A remote trigger (watch()) matched here: the fault belongs to another
  // node, which fires it (multi-node runs). Its index in the whole scenario.
  std::function<void(size_t fault, const std::string& point, long long hit)> remote_trigger;
};

class FaultSchedule {
 public:
  // `records`: one per fault, filled in as they fire (outlives this).
  FaultSchedule(boost::asio::io_context& ctx, const std::vector<FaultSpec>& faults,
                std::vector<FaultRecord>& records, JobTracker& tracker, FaultDriver& driver,
                FaultScheduleHooks hooks);

  // The top process started at `t`: the first fault is armed.
  void start(Nanos t);
  // A fixture's event or point name: "step" starts the steady phase, "shutdown*" the shutdown.
  void on_phase_event(const std::string& name);
  // The top exited: the shutdown phase begins, and targets no longer come.
  void on_job_end();
  // A point reached by `pid`: fires the next fault when it matches. The reply.
  std::string on_point(int pid, const std::string& name, long long hit,
                       const nlohmann::json& labels);
  // After each sample: a predicate trigger may hold (`new_shm_entries`:
  // beyond the baseline), a waiting fault may find its target.
  void after_sample(int new_shm_entries);
  // A fault waiting for its target: fire it once one is there.
  void retry_waiting();
  // Teardown: nothing fires from now on.
  void stop();
  // New kills in the fault cgroups: recorded, and counted in their faults.
  void watch_oom_kills();
  // After the job: the last kills counted, the fault cgroups removed.
  void close_cgroups();
  // Point triggers of faults that belong to other nodes (Scenario::
  // remote_triggers): each is passed to hooks.remote_trigger the first time a
  // point here matches it, whatever this node's own faults are doing; the
  // point's process is answered "continue" at once.
  void watch(std::vector<std::pair<size_t, TriggerSpec>> remote);
  // Fault `index` (of this node's) was triggered on node `from` (a point
  // there matched it): fired now when it is the next one, else once the
  // earlier ones have fired. Ignored once it fired.
  void fire_remote(size_t index, int from, const std::string& point, long long hit);
  // How the run ended for the faults that never fired.
  UnfiredContext unfired(bool job_ended, bool deadline_hit) const;

 private:
  Nanos now() const { return hooks_.now(); }
  void arm_next();
  void post_fire(size_t index);
  std::string fire(size_t index, int self_pid, const std::string& point, long long hit);
  bool wait_for_target(size_t index, const std::vector<int>& pids, int self_pid);
  void record_act(size_t index, const FaultAct& act);
  void resume_after(const FaultSpec& f, const std::vector<int>& pids);
  // A partition's cut ends after its duration.
  void heal_after(const FaultSpec& f);
  // scancel: SIGKILL to the step's tree as it is after the fault's kill_wait.
  void kill_after(const FaultSpec& f);
  // The pids of the job processes alive in the tracker's view.
  std::vector<int> live_job_pids() const;
  void record_oom_kills(const std::vector<OomKillSeen>& kills);

  boost::asio::io_context& ctx_;
  const std::vector<FaultSpec>& faults_;
  std::vector<FaultRecord>& records_;
  JobTracker& tracker_;
  FaultDriver& driver_;
  FaultScheduleHooks hooks_;
  boost::asio::steady_timer timer_;
  std::vector<std::unique_ptr<boost::asio::steady_timer>> resume_timers_;
  size_t next_ = 0;
  bool stopped_ = false;
  bool job_ended_ = false;
  bool in_fire_ = false;  // fire() samples, and sampling retries a waiting fault
  Nanos base_ = 0;        // when the previous fault fired (the top's start for the first)
  bool steady_seen_ = false;
  bool shutdown_seen_ = false;
  std::map<std::string, long long> point_hits_;  // point name -> hits seen (for "never reached")
  struct Watch {
    size_t fault;
    TriggerSpec at;
    bool fired = false;
  };
  std::vector<Watch> watches_;
  struct RemoteFire {
    int from;
    std::string point;
    long long hit;
  };
  std::map<size_t, RemoteFire> remote_fires_;  // triggered elsewhere before their turn here
};

}  // namespace aftermath
