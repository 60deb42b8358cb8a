// The machine inspection's first half: gathering. Everything `aftermath
// inspect` judges is read here, once, into a plain MachineSnapshot: the
// process table, the holders of device files and /dev/shm entries, what NVML
// and the allocation probe say about each GPU, the /dev/shm and temp-dir
// entries, the fault cgroups, and who is asking. The second half
// (hygiene.h: judge_machine) is a pure function of that snapshot, so it can
// be tested on snapshots made by hand.
//
// Everything gather_machine reads comes from HygieneOptions (proc root, shm
// dir, device pattern, NVML, probe runner), so tests can also point it at
// planted files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/types.h"
#include "harness/observe/cgroup_home.h"
#include "harness/observe/holders.h"
#include "harness/observe/nvml.h"
#include "harness/observe/probe.h"
#include "harness/observe/process_index.h"
#include "harness/observe/shm.h"
#include "harness/observe/tmp_residue.h"

namespace aftermath {

struct HygieneOptions {
  std::string proc_root = "/proc";
  std::string shm_dir = "/dev/shm";
  std::string device_pattern = std::string(kNvidiaDevicePattern);  // glob, or "re:" regex
  std::vector<std::string> shm_prefixes = {"torch_", "sem."};
  // A process whose parent is one of these was orphaned. Add the pid of a
  // subreaper that collects orphans (a test that made itself one).
  std::set<int> orphan_parents = {1};
  // Services that legitimately run under init and hold GPUs (comm, as /proc
  // truncates it to 15 characters): never leftovers.
  std::set<std::string> daemon_comms = {"nvidia-persiste", "nv-fabricmanage", "nv-hostengine",
                                        "nvidia-smi",      "dcgm-exporter",   "Xorg",
                                        "Xwayland",        "gnome-shell",     "nvidia-powerd"};
  Nvml* nvml = nullptr;  // not owned; null: GPU memory is not inspected
  // The GPUs not inspected (no driver, NVML failed or not consulted) is a
  // problem, not a note: a GPU runner's pre/post step must not pass blind.
  bool require_gpu = false;
  int nvml_pid_level = 0;        // see DeviceObserverOptions::nvml_pid_level
  ProbeRunner* probe = nullptr;  // not owned; null: no allocation probe
  // Younger /dev/shm entries are never leftovers while their creator is alive
  // or unknown: it may not have mapped them yet. One whose creator is
  // provably gone is a leftover at any age.
  Nanos shm_min_age = 30 * kSecond;
  // The temp dir whose residue is judged ("" looks nowhere; the CLI passes
  // $TMPDIR or /tmp), and the age from which residue nobody holds is a
  // leftover even when its maker cannot be proven gone.
  std::string tmp_dir;
  Nanos tmp_min_age = 30 * kSecond;
  // Where fault cgroups are made: "auto" finds it as the harness does
  // (observe/cgroup_home.h) when proc_root is this machine's /proc; "" looks
  // nowhere.
  std::string cgroup_dir = "auto";
  std::int64_t now_wall_ns = 0;  // CLOCK_REALTIME for ages; 0: read the clock
};

// One GPU as NVML sees it; `probe` is filled in when judging.
struct HygieneGpu {
  GpuInfo info;
  std::int64_t used = 0;
  std::int64_t free = 0;
  std::vector<GpuProcess> processes;
  std::optional<GpuProbe> probe;
  std::string error;
};

// Who runs the inspection, for judging what it could not inspect.
struct Caller {
  unsigned uid = 0;
  bool root = false;        // euid 0
  bool ptrace_cap = false;  // CAP_SYS_PTRACE in the effective set
};
Caller this_caller();

// A /dev/shm entry with what only a stat of it by name tells.
struct ShmFile {
  ShmEntry entry;
  std::uint64_t inode = 0;    // 0: the stat failed
  std::int64_t ctime_ns = 0;  // its inode change time; its mtime when the stat failed
};

// The machine as read at one moment. Plain data: no handle, nothing read later.
struct MachineSnapshot {
  std::int64_t now_wall_ns = 0;         // CLOCK_REALTIME, for ages
  ProcessIndex processes;               // the proc root's process table
  std::map<int, std::string> cmdlines;  // of processes that hold something, and of zombies
  int self_pid = 0;                     // the inspecting process, in the proc root
  Caller caller;

  // GPUs: empty gpu_unavailable and the GPUs NVML lists, each with its
  // processes mapped into the proc root (pid 0: not visible there).
  std::string gpu_unavailable;
  std::string driver_version;
  std::vector<HygieneGpu> gpus;
  // The allocation probe's report; nullopt when there is no probe.
  std::optional<ProbeReport> probe;

  // Set when the device pattern did not parse: no device file was looked at.
  std::optional<std::string> pattern_error;
  std::map<int, std::vector<FileRef>> device_files;  // pid -> device files it holds open
  std::map<int, std::vector<FileRef>> shm_held;      // pid -> files under the shm dir it holds
  std::map<int, std::vector<FileRef>> shm_mapped;    // pid -> files under the shm dir it maps
  std::set<int> unreadable;  // processes whose fds, maps or cwd were refused

  std::vector<ShmFile> shm;             // every entry of the shm dir, by name
  std::optional<std::int64_t> boot_ns;  // btime of the proc root; nullopt in a fake tree
  long clock_ticks = 0;                 // _SC_CLK_TCK

  std::string cgroup_dir;  // where fault cgroups were looked for ("" nowhere)
  std::vector<FaultCgroupEntry> cgroups;

  // The temp dir's known residue (empty tmp_dir in the options: not looked at).
  std::optional<std::string> tmp_error;  // set when the temp dir could not be listed
  TmpTable tmp;
  std::map<std::string, TmpHold> tmp_holds;  // residue name -> who holds it
};

// Reads the machine now. Never throws for what it finds.
MachineSnapshot gather_machine(const HygieneOptions& options);

}  // namespace aftermath
