#include "harness/supervise/run_registry.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace aftermath {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// pid -> the run that had it last.
std::unordered_map<int, int>& pids() {
  static std::unordered_map<int, int> m;
  return m;
}

}  // namespace

int new_run_id() {
  static std::atomic<int> next{1};
  return next++;
}

void note_run_pid(int run, int pid) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  pids()[pid] = run;
}

int other_run_with(int run, int pid) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = pids().find(pid);
  return it == pids().end() || it->second == run ? 0 : it->second;
}

}  // namespace aftermath
