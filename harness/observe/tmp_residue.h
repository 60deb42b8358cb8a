// What a multi-process PyTorch job leaves in its temp directory ($TMPDIR or
// /tmp), and who still holds it.
//
// Three kinds of entry are known residue, each made by a library that removes
// it only on an orderly exit:
//  - pymp-*: multiprocessing.util.get_temp_dir() (the Listener and
//    resource_sharer sockets, listener-*, live in it). A Finalize removes it
//    at interpreter exit; a process that is SIGKILLed, or leaves by
//    os._exit() (a DataLoader worker's SIGTERM handler does), never runs it.
//  - torch-shm-dir-*: torch_shm_manager's folder for manager.sock; the
//    manager removes it when it exits by itself, not when it is killed.
//  - torchelastic_*: torchrun's log folder (tempfile.mkdtemp), which it never
//    removes.
//  - aftermath-torchrun-*: fixtures/python/torchrun_shim.py's log folder
//    where it runs without aftermath; removed when its agent exits, left
//    when the agent is SIGKILLed.
//  - pytorch-errorfile-*.pickle: torch.multiprocessing.spawn's (2.x) file a
//    child writes its exception to; the parent reads it and never removes it
//    (1.13 passed the exception through a queue and left nothing).
// Anything else that appears is only reported: a job's outputs may live there.
//
// "Held" means a live process still uses the entry: an open fd under it, its
// working directory under it, or a socket bound to a path under it (listed in
// /proc/net/unix for as long as some process has the socket open; only the
// proc root's network namespace is seen there). A held entry is never removed.
//
// Parsing is apart from I/O (parse_proc_net_unix), and every reader takes its
// roots (the temp dir, the proc root) so tests plant fake trees.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/types.h"
#include "harness/os/expected.h"

namespace aftermath {

// TmpKind (harness/core/types.h) by the entry's name.
TmpKind classify_tmp_name(std::string_view name);
inline bool known_residue(TmpKind k) { return k != TmpKind::Other; }

struct TmpEntry {
  std::string name;  // the name in the temp dir
  TmpKind kind = TmpKind::Other;
  bool dir = false;
  unsigned uid = 0;
  std::uint64_t inode = 0;     // what a removal re-checks: only this very entry goes
  std::int64_t bytes = 0;      // st_size summed over everything under it (bounded)
  bool bytes_partial = false;  // the walk stopped at its bound: bytes is a lower bound
  std::int64_t mtime_ns = 0;   // the newest mtime seen in it (CLOCK_REALTIME)
  // Sockets directly in it (listener-*, manager.sock): a socket file whose
  // socket is no longer bound proves the process that bound it is gone.
  std::vector<std::string> sockets;
};
using TmpTable = std::map<std::string, TmpEntry>;

// Bounds on the walk under each entry (a job may leave a large tree there).
struct TmpScanLimits {
  int max_files = 2000;  // per entry
  int max_depth = 8;
};

// Every entry of `dir` ("." and ".." aside), each walked for its size; an
// error when `dir` cannot be listed.
Expected<TmpTable> scan_tmp(const std::string& dir, const TmpScanLimits& limits = {});

// One entry of `dir` by name, as scan_tmp lists it; nullopt if absent.
std::optional<TmpEntry> stat_tmp(const std::string& dir, const std::string& name,
                                 const TmpScanLimits& limits = {});

// The entries of `after` that `before` lacks: a new name, or the same name on
// another inode (removed and made again). In name order.
std::vector<TmpEntry> new_tmp_entries(const TmpTable& before, const TmpTable& after);

// A socket bound to a filesystem path, from /proc/net/unix.
struct UnixSocket {
  std::uint64_t inode = 0;
  std::string path;
};
// The path-bound sockets of /proc/net/unix contents (abstract "@..." and
// unbound ones left out).
std::vector<UnixSocket> parse_proc_net_unix(std::string_view contents);

// Who holds an entry of the temp dir.
struct TmpHold {
  std::vector<int> pids;           // live processes that hold it (proc-root pids), sorted
  std::vector<std::string> bound;  // live bound sockets under it (paths)
  bool held() const { return !pids.empty() || !bound.empty(); }
};

// For each of `names` (entries of `dir`), who holds it now: a process
// working in it (its cwd), with a file open in it, or a socket bound in it.
// A directory open in it is a look (ls, du, another run's scan of a temp dir
// it shares), not a hold. Looks at every
// process of `proc_root`, or only at `only_pids` when given (with the bound
// sockets of the whole network namespace either way). Processes whose fds or
// cwd cannot be read go to *unreadable. Names nobody holds are absent.
std::map<std::string, TmpHold> find_tmp_holders(const std::string& proc_root,
                                                const std::string& dir,
                                                const std::vector<std::string>& names,
                                                const std::vector<int>* only_pids = nullptr,
                                                std::set<int>* unreadable = nullptr);

// Whether the process that made `e` is provably gone: it holds sockets, none
// of which is bound any more, and nobody holds it (hold: find_tmp_holders'
// answer for it, nullptr when absent). pymp and torch-shm-dir entries bind
// their sockets for their maker's whole life.
bool tmp_maker_gone(const TmpEntry& e, const TmpHold* hold);

// The temp dir a job with this environment uses, as Python's tempfile and
// torch_shm_manager pick it: $TMPDIR when set (non-empty), else /tmp.
std::string job_tmp_dir(const std::optional<std::string>& tmpdir_env);

}  // namespace aftermath
