// The wire format between the supervisor and aftermath-reaper.
//
// The reaper is the job's init: pid 1 of the job's own PID namespace where the
// kernel allows one, else a child subreaper. Every orphan of the job is
// re-parented to it, and it reaps them all, so it is the one process that
// knows every exit status. It reports over a pipe in fixed-size records
// (each write is smaller than PIPE_BUF, hence atomic) stamped with
// CLOCK_MONOTONIC, which is the same clock in the supervisor.
//
// The supervisor holds the write end of a "lifeline" pipe whose read end the
// reaper polls. When the supervisor dies, however it dies, the lifeline reads
// EOF and the reaper exits; as pid 1 its exit makes the kernel SIGKILL every
// process left in the namespace. A parent-death signal makes the same happen
// at once, the lifeline closes the race in which the parent dies before the
// signal is armed.
#pragma once

#include <cstdint>

namespace aftermath::reaper {

enum class Msg : std::int32_t {
  Mode = 1,        // a = containment (see Containment), b = errno of the failed PID-namespace
                   // attempt, pid = 1 if the job has a private /dev/shm (a tmpfs in its own
                   // mount namespace, seen from outside as /proc/<reaper>/root/dev/shm)
  TopStarted = 2,  // pid = the top process's host pid, a = its pid in the namespace
  ExecFailed = 3,  // a = errno of execve; the job never ran
  Reaped = 4,      // pid = the reaped process's pid as the reaper sees it, a = wait status
  TopExited = 5,   // pid = top's namespace pid, a = wait status
  InitPid = 6,     // pid = the init (reaper) host pid
  ProcView = 7,    // PID-namespace modes only, from pid 1 before the job starts: pid = 1 if
                   // the job sees a procfs of its own PID namespace on /proc (so /proc/self,
                   // /proc/<pid> and getpid() agree inside it); else pid = 0, a = errno of
                   // what failed, b = what failed (see ProcViewStep)
  ForkWatch = 8,   // pid 1 of a PID namespace, asked to (--watch-forks): it watches the
                   // namespace's last pid, and sends Forked each time that moves
  Forked = 9,      // pid = the namespace's newest pid: the job forked since the last one
};

// Why a job in a PID namespace still sees the host's /proc (ProcView's b).
enum class ProcViewStep : std::int32_t {
  NotAsked = 0,        // the reaper was told to leave /proc alone (--proc host)
  MountNamespace = 1,  // no mount namespace of its own (unshare(CLONE_NEWNS))
  ProcMount = 2,       // the mount of a procfs for its PID namespace was refused
};

enum class Containment : std::int32_t { PidNamespace = 1, UserPidNamespace = 2, Subreaper = 3 };

struct Record {
  Msg type;
  std::int32_t pid;
  std::int32_t a;
  std::int32_t b;
  std::int64_t t_ns;  // CLOCK_MONOTONIC
};
static_assert(sizeof(Record) == 24);

}  // namespace aftermath::reaper
