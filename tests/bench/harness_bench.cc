// Micro benchmarks of the harness's own hot paths (Google Benchmark):
//   process-table snapshot of a job's subtree at 1, 17, 136 and 1000 processes,
//   /dev/shm scan + diff at 100, 1000, 10000 entries, the unarmed point cost.
// The side-by-side comparison with ps / psutil / fuser is tools/compare.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "aftermath_points.h"
#include "harness/observe/proc.h"
#include "harness/observe/shm.h"
#include "tree.h"

namespace {

void BM_SubtreeSnapshot(benchmark::State& state) {
  int n = static_cast<int>(state.range(0));
  // 1 = just the root; 17 = 1 rank x 16 workers; 136 = 8 x 16; 1000 = 37 x 26 (+38).
  int ranks = n == 1 ? 0 : n == 17 ? 1 : n == 136 ? 8 : 37;
  int workers = n == 1 ? 0 : n == 17 ? 15 : n == 136 ? 16 : 26;
  bench::ProcessTree tree(ranks, workers);
  aftermath::ProcReader reader;
  size_t found = 0;
  for (auto _ : state) {
    auto members = reader.subtree(tree.root());
    found = members.size() + 1;
    benchmark::DoNotOptimize(members);
  }
  state.counters["processes"] = static_cast<double>(found);
  // Seconds per process of the job (shown with an SI prefix: "4.2u" = 4.2 us).
  state.counters["per_process"] =
      benchmark::Counter(static_cast<double>(found), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}
BENCHMARK(BM_SubtreeSnapshot)->Arg(1)->Arg(17)->Arg(136)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The sample of known processes: each one's stat re-read through a
// descriptor kept open (what the job tracker's refresh does), against the
// same reads by path.
void StatRefresh(benchmark::State& state, bool kept) {
  int n = static_cast<int>(state.range(0));
  int ranks = n == 1 ? 0 : n == 17 ? 1 : n == 136 ? 8 : 37;
  int workers = n == 1 ? 0 : n == 17 ? 15 : n == 136 ? 16 : 26;
  bench::ProcessTree tree(ranks, workers);
  aftermath::ProcReader reader;
  std::vector<int> pids{tree.root()};
  for (const auto& [pid, entry] : reader.subtree(tree.root())) pids.push_back(pid);
  aftermath::StatFiles files;
  for (auto _ : state) {
    for (int pid : pids) {
      auto st = kept ? files.read(pid) : reader.stat(pid);
      benchmark::DoNotOptimize(st);
    }
  }
  state.counters["per_process"] = benchmark::Counter(
      static_cast<double>(pids.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
void BM_StatRefreshKeptFds(benchmark::State& state) { StatRefresh(state, true); }
void BM_StatRefreshByPath(benchmark::State& state) { StatRefresh(state, false); }
BENCHMARK(BM_StatRefreshKeptFds)->Arg(136)->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StatRefreshByPath)->Arg(136)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The full table (every process on the machine), the fallback without
// children files.
void BM_FullTableSnapshot(benchmark::State& state) {
  aftermath::ProcReader reader;
  for (auto _ : state) {
    auto table = reader.scan();
    benchmark::DoNotOptimize(table);
  }
}
BENCHMARK(BM_FullTableSnapshot)->Unit(benchmark::kMicrosecond);

class ShmDir {
 public:
  explicit ShmDir(int n) {
    char tmpl[] = "/dev/shm/aftermath-bench-XXXXXX";
    path_ = mkdtemp(tmpl);
    for (int i = 0; i < n; ++i) {
      std::string p = path_ + "/torch_" + std::to_string(1000 + i) + "_" + std::to_string(i) + "_0";
      int fd = open(p.c_str(), O_CREAT | O_WRONLY, 0600);
      if (fd >= 0) {
        if (ftruncate(fd, 4096) != 0) {
        }
        close(fd);
      }
    }
  }
  ~ShmDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void BM_ShmScanAndDiff(benchmark::State& state) {
  ShmDir dir(static_cast<int>(state.range(0)));
  auto before = aftermath::scan_shm(dir.path());
  for (auto _ : state) {
    auto now = aftermath::scan_shm(dir.path());
    auto d = aftermath::diff_shm(before, now);
    benchmark::DoNotOptimize(d);
  }
  state.counters["entries"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_ShmScanAndDiff)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// A point nobody armed: the cost every fixture pays at every point.
void BM_UnarmedPoint(benchmark::State& state) {
  for (auto _ : state) {
    auto r = aftermath::points::point("loader.worker.getitem", {{"index", 7}});
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_UnarmedPoint);

void BM_ParseProcStat(benchmark::State& state) {
  std::string line =
      "4242 (python3 worker) S 4200 4200 4200 0 -1 4194560 1234 0 0 0 12 3 0 0 20 0 4 0 987654 "
      "123456789 4567 18446744073709551615 1 1 0 0 0 0 0 16781312 17442 0 0 0 17 1 0 0 0 0 0";
  for (auto _ : state) {
    auto st = aftermath::parse_proc_stat(line);
    benchmark::DoNotOptimize(st);
  }
}
BENCHMARK(BM_ParseProcStat);

}  // namespace
