// Hang diagnosis cost (Google Benchmark, wall time): diagnose() on N real
// python3 processes blocked in a script, with or without torch imported
// (libtorch is most of what gdb reads), one gdb at a time or the default
// number side by side; and the diagnosis as it was before, for comparison:
// one gdb per process, one after another, every library's symbols loaded,
// C stacks only.
//
//   build/bin/aftermath_bench --benchmark_filter=Diagnos
//
// Arguments: processes / parallel (0: the default) / torch.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/observe/diagnose.h"
#include "harness/os/spawn.h"
#include "tests/support/python_child.h"
#include "tests/support/temp_dir.h"

namespace {

using aftermath::testing::PythonChild;

// N python3 processes blocked reading stdin, ready when constructed.
// (Each process's own per-process time is the "took" of its diagnosis;
// per_process below is their mean.)
class BlockedPythons {
 public:
  BlockedPythons(int n, bool torch) {
    // With torch, each is a rank of its own one-process gloo group, so its
    // threads wait in libtorch and gloo as a DDP rank's do.
    std::string rank = torch ? "import os, torch, torch.distributed as dist\n"
                               "dist.init_process_group('gloo', init_method='file://" +
                                   dir_.path() + "/pg-%d' % os.getpid(), rank=0, world_size=1)\n"
                             : "";
    script_ = dir_.write("blocked.py", "import sys\n" + rank +
                                           "def wait_here(stream):\n"
                                           "    print('ready', flush=True)\n"
                                           "    return stream.read()\n"
                                           "wait_here(sys.stdin)\n");
    for (int i = 0; i < n; ++i)
      kids_.push_back(
          std::make_unique<PythonChild>("/usr/bin/python3", std::vector<std::string>{script_}));
    for (auto& k : kids_) ok_ = ok_ && k->wait_for("ready", 120000);
  }
  bool ok() const { return ok_; }
  std::vector<int> pids() const {
    std::vector<int> p;
    for (const auto& k : kids_) p.push_back(k->pid());
    return p;
  }

 private:
  aftermath::testing::TempDir dir_;
  std::string script_;
  std::vector<std::unique_ptr<PythonChild>> kids_;
  bool ok_ = true;
};

void BM_Diagnose(benchmark::State& state) {
  std::string gdb = aftermath::find_gdb();
  if (gdb.empty() || ::access("/usr/bin/python3", X_OK) != 0) {
    state.SkipWithError("needs gdb and /usr/bin/python3");
    return;
  }
  BlockedPythons procs(static_cast<int>(state.range(0)), state.range(2) != 0);
  if (!procs.ok()) {
    state.SkipWithError("the python3 processes did not start");
    return;
  }
  aftermath::DiagnoseOptions o;
  o.gdb = gdb;
  o.parallel = static_cast<int>(state.range(1));
  o.per_process = 60 * aftermath::kSecond;
  o.total = 120 * aftermath::kSecond;
  size_t with_frames = 0;
  double took_ms = 0;
  for (auto _ : state) {
    auto ds = aftermath::diagnose(procs.pids(), o).processes;
    with_frames = 0;
    for (const auto& d : ds) {
      with_frames += d.python_frames.empty() ? 0 : 1;
      took_ms += static_cast<double>(d.took) / 1e6;
    }
  }
  state.counters["with_python_frames"] = static_cast<double>(with_frames);
  state.counters["per_process_ms"] =
      took_ms / static_cast<double>(state.iterations() * static_cast<size_t>(state.range(0)));
}
BENCHMARK(BM_Diagnose)
    ->ArgNames({"procs", "parallel", "torch"})
    ->Args({1, 1, 0})
    ->Args({1, 1, 1})
    ->Args({2, 1, 1})
    ->Args({2, 0, 1})
    ->Args({8, 1, 1})
    ->Args({8, 0, 1})
    ->Args({8, 3, 1})
    ->Args({8, 4, 1})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The diagnosis before Python stacks: gdb's plain "thread apply all bt" per
// process, one after another.
void BM_DiagnoseBefore(benchmark::State& state) {
  std::string gdb = aftermath::find_gdb();
  if (gdb.empty() || ::access("/usr/bin/python3", X_OK) != 0) {
    state.SkipWithError("needs gdb and /usr/bin/python3");
    return;
  }
  BlockedPythons procs(static_cast<int>(state.range(0)), state.range(1) != 0);
  if (!procs.ok()) {
    state.SkipWithError("the python3 processes did not start");
    return;
  }
  for (auto _ : state) {
    for (int pid : procs.pids()) {
      auto c = aftermath::run_command({gdb, "-nx", "-batch", "-p", std::to_string(pid), "-ex",
                                       "set pagination off", "-ex", "thread apply all bt"},
                                      60 * aftermath::kSecond);
      benchmark::DoNotOptimize(c);
    }
  }
}
BENCHMARK(BM_DiagnoseBefore)
    ->ArgNames({"procs", "torch"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({8, 1})
    ->Iterations(3)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
