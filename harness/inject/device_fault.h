// Device out-of-memory, for real: the harness side of the two mechanisms that
// need no cooperation from the job (the third, "point-reply", asks a fixture
// to make an oversized allocation at a point).
//
//  - The allocation-failure interposer (libaftermath-cudafail.so, built from
//    fixtures/device/cuda_fail_preload.cc): preloaded into the job, it makes
//    cudaMalloc & co. return cudaErrorMemoryAllocation / CUDA_ERROR_OUT_OF_MEMORY
//    from the Nth call on, or while an arm file exists. cuda_fail_env() gives
//    the environment that loads it; arm_cuda_fail() / disarm_cuda_fail() flip
//    it at the trigger. Only calls that go through the dynamic linker are
//    caught (see the interposer's header comment for what is not).
//  - The device memory hog (aftermath-device-hog): a separate process that
//    takes a share of a GPU's free memory and holds it until told to stop, so
//    the job's next allocation meets a GPU that is really full. DeviceHog
//    runs one, reads its one-line answer with a deadline and stops it by
//    pidfd.
//
// Where neither can act (no GPU, no CUDA runtime), device_oom_available()
// says why, so the fault is skipped with that reason -- never faked.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/os/expected.h"
#include "harness/os/pidfd.h"

namespace aftermath {

// --- the interposer ---

// The variables to add to a job's environment so that it loads the
// interposer: LD_PRELOAD with `preload_path` first (the fault must stand in
// front of any other preloaded library that also wraps cudaMalloc), followed
// by the entries of `existing_ld_preload` (colon- or space-separated, as the
// loader reads it; empty entries and other copies of `preload_path` dropped),
// joined with ':'; AFTERMATH_CUDA_FAIL_AFTER when `fail_after` is set;
// AFTERMATH_CUDA_FAIL_ARM when `arm_path` is not empty. With neither, the
// interposer only counts. Keep the arm file out of /dev/shm (the shm_clean
// check watches it): the run's output directory is a good place.
// An error when `preload_path` is not an absolute path or holds ':' or
// whitespace, when `arm_path` is set but not absolute (the job may change
// directory), or when `fail_after` < 1. Pure; thread-safe.
Expected<std::map<std::string, std::string>> cuda_fail_env(const std::string& preload_path,
                                                           std::optional<long> fail_after,
                                                           const std::string& arm_path,
                                                           const std::string& existing_ld_preload);

// Creates the arm file (empty, mode 0644): from then on every intercepted
// call of a job started with that AFTERMATH_CUDA_FAIL_ARM fails. Already armed
// is success. The error reads "arm PATH: strerror".
Status arm_cuda_fail(const std::string& arm_path);
// Removes the arm file: calls pass through again. Already disarmed is success.
// The error reads "disarm PATH: strerror".
Status disarm_cuda_fail(const std::string& arm_path);

// --- availability ---

// Where a libcudart is looked for, in order: $AFTERMATH_CUDART alone when set
// (an explicit choice has no fallback), else the toolkit found at build time,
// then libcudart.so, .so.13, .so.12, .so.11.0 -- as aftermath-device-hog does.
std::vector<std::string> cudart_candidates();

// Why the device mechanisms cannot act here, or nullopt when they can:
// "no GPU on this machine (/dev/nvidiactl absent)" when `dev_root`/nvidiactl
// does not exist, else "no CUDA runtime: ..." when none of `candidates` can
// be dlopen()ed (each is closed again; CUDA is never initialised here).
Status device_oom_available(const std::string& dev_root,
                            const std::vector<std::string>& candidates);
// The same for this machine: /dev and cudart_candidates().
Status device_oom_available();

// --- the hog ---

// What a hog said, or what became of it. Closed: NotStarted before start().
enum class HogState { NotStarted, Ready, Failed, Unavailable, TimedOut, Error };
std::string_view to_string(HogState s);  // "not_started", "ready", ..., "timed_out", "error"

// One answer line of aftermath-device-hog ("ready ...", "failed ...",
// "unavailable ..."), split into its state and key=value words (`detail=`
// runs to the end of the line). nullopt when the line is none of these.
struct HogLine {
  HogState state = HogState::Error;
  std::map<std::string, std::string> fields;
};
std::optional<HogLine> parse_hog_line(std::string_view line);

struct DeviceHogOptions {
  std::string hog_path;                    // aftermath-device-hog (or a stand-in, in tests)
  int device = 0;                          // CUDA ordinal (--device)
  std::optional<std::uint64_t> bytes;      // --bytes when set, else --share
  double share = 0.95;                     // fraction of the free memory, (0, 1]
  Nanos deadline = 60 * kSecond;           // from spawn to the answer line
  std::string cudart;                      // --cudart when not empty
  std::map<std::string, std::string> env;  // set in the hog's environment (over ours)
  Nanos term_wait = 5 * kSecond;           // stop(): after SIGTERM, before SIGKILL
  Nanos kill_wait = 2 * kSecond;           // after SIGKILL, how long to wait for the exit
};

// One hog process. start() spawns it (posix_spawn: default signal
// dispositions, stdin a pipe only we hold, so the hog also dies when we do),
// then waits for its answer line until the deadline. Ready: it holds the
// memory until stop(). Failed / Unavailable: it exits by itself and start()
// reaps it. TimedOut (no line by the deadline) and Error (it could not be
// spawned, exited or spoke without a valid line): start() kills it (SIGKILL
// by pidfd) and reaps it before returning.
//
// stop() and the destructor: SIGTERM by pidfd and close its stdin; SIGKILL
// after term_wait; reaped with waitpid(pid) as soon as its pidfd says it
// exited. Every wait has a deadline: a hog stuck in the driver past kill_wait
// is left unreaped, and stop() reports nullopt (a later stop() tries again).
//
// Not thread-safe; one start() per object. Reaps with waitpid(pid): do not
// use it while another part of the process reaps with waitpid(-1).
class DeviceHog {
 public:
  DeviceHog() = default;
  ~DeviceHog();
  DeviceHog(const DeviceHog&) = delete;
  DeviceHog& operator=(const DeviceHog&) = delete;

  // Never throws for a failure of the hog; every failure is in state()/reason().
  HogState start(const DeviceHogOptions& options);
  // Ends the hog (no-op once reaped); its outcome, or nullopt when it was
  // never started or could not be reaped within the bounds.
  std::optional<Outcome> stop();

  HogState state() const { return state_; }
  int pid() const { return pid_; }                       // -1 before start(); kept after the reap
  bool running() const { return pid_ > 0 && !reaped_; }  // spawned and not yet reaped
  std::uint64_t held() const { return held_; }           // bytes held (Ready), else 0
  std::uint64_t goal() const { return goal_; }
  std::uint64_t free_before() const { return free_before_; }
  std::uint64_t free_after() const { return free_after_; }
  std::uint64_t total() const { return total_; }
  // Ready: empty, or the allocation error when it holds less than its goal
  // (short=1). Failed/Unavailable: the hog's reason word (and detail).
  // TimedOut/Error: what went wrong, with the tail of the hog's stderr.
  const std::string& reason() const { return reason_; }
  const std::string& line() const { return line_; }  // the answer as printed
  const std::optional<Outcome>& outcome() const { return outcome_; }

 private:
  void spawn(const DeviceHogOptions& o);
  void read_answer(Nanos until);
  bool wait_exit(Nanos until);  // true once reaped
  void kill_now();

  HogState state_ = HogState::NotStarted;
  int pid_ = -1;
  bool reaped_ = false;
  UniqueFd pidfd_, stdin_w_, stdout_r_, stderr_r_;
  std::string out_, err_;
  std::string line_, reason_;
  std::uint64_t held_ = 0, goal_ = 0, free_before_ = 0, free_after_ = 0, total_ = 0;
  std::optional<Outcome> outcome_;
  Nanos term_wait_ = 5 * kSecond, kill_wait_ = 2 * kSecond;
};

}  // namespace aftermath
