#include "harness/observe/requirements_probe.h"

#include <dlfcn.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "harness/os/spawn.h"
// The memory cgroup's home is found by the inject layer, which uses it; this
// include is the one upward edge left here until that lookup moves down.
#include "harness/observe/cgroup_home.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;

constexpr Nanos kProbeDeadline = 60 * kSecond;

// Cached answers: key -> nullopt (met) or why not.
std::mutex g_mu;
std::map<std::string, std::optional<std::string>> g_cache;

template <typename F>
std::optional<std::string> cached(const std::string& key, F probe) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (auto it = g_cache.find(key); it != g_cache.end()) return it->second;
  }
  auto r = probe();
  std::lock_guard<std::mutex> lock(g_mu);
  g_cache[key] = r;
  return r;
}

// The GPU device nodes (/dev/nvidia<N>) beside nvidiactl: what the job could
// open, so also what a container was given.
int gpu_nodes(const RequirementEnv& env) {
  std::error_code ec;
  int n = 0;
  for (const auto& e : fs::directory_iterator(env.dev_dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      ++n;
  }
  return n;
}

std::optional<std::string> gpu_unmet(const RequirementEnv& env) {
  std::error_code ec;
  if (!fs::exists(env.dev_dir + "/nvidiactl", ec))
    return "no NVIDIA device (" + env.dev_dir + "/nvidiactl absent)";
  if (gpu_nodes(env) > 0) return std::nullopt;
  return "no GPU device node (" + env.dev_dir + "/nvidia<N>) beside nvidiactl";
}

// The Python the job runs, when it runs one; else the configured one.
std::string job_python(const std::vector<std::string>& job_argv, const RequirementEnv& env) {
  if (!job_argv.empty()) {
    std::string base = fs::path(job_argv[0]).filename().string();
    if (base.rfind("python", 0) == 0) return job_argv[0];
  }
  return env.python;
}

std::optional<std::string> python_check(const std::string& python, const std::string& code,
                                        const std::string& what) {
  return cached("py:" + python + ":" + code, [&]() -> std::optional<std::string> {
    CommandOutcome c = run_command({python, "-c", code}, kProbeDeadline, 4096);
    if (c.exited_zero()) return std::nullopt;
    if (!c.started()) return python + " cannot run: " + c.output;
    if (c.timed_out()) return python + " did not answer within 60s";
    std::string last = c.output;
    while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
    if (auto nl = last.rfind('\n'); nl != std::string::npos) last = last.substr(nl + 1);
    return what + " (" + python + ": " + (last.empty() ? "failed" : last) + ")";
  });
}

bool can_make_pid_namespace() {
  pid_t child = ::fork();
  if (child < 0) return false;
  if (child == 0) {
    int flags = CLONE_NEWPID;
    if (::geteuid() != 0) flags |= CLONE_NEWUSER;
    ::_exit(::unshare(flags) == 0 ? 0 : 1);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// nullopt when met; else why not.
std::optional<std::string> unmet(const std::string& name, const std::vector<std::string>& job_argv,
                                 const RequirementEnv& env) {
  if (name == "root") {
    if (::geteuid() == 0) return std::nullopt;
    return "the harness is not running as root (euid " + std::to_string(::geteuid()) + ")";
  }
  if (name == "pidns") {
    return cached("pidns", []() -> std::optional<std::string> {
      if (can_make_pid_namespace()) return std::nullopt;
      return "this kernel lets this user make no PID namespace (unshare failed)";
    });
  }
  if (name == "gpu") return gpu_unmet(env);
  if (name == "2-gpus") {  // NCCL refuses two ranks on one device
    if (auto g = gpu_unmet(env)) return g;
    int n = gpu_nodes(env);
    if (n >= 2) return std::nullopt;
    return "needs 2 GPUs, this machine has " + std::to_string(n) + " (" + env.dev_dir +
           "/nvidia<N>)";
  }
  if (name == "cuda") {
    if (auto g = gpu_unmet(env)) return g;
    return cached("cuda", []() -> std::optional<std::string> {
      void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!h) return std::string("the CUDA driver library does not load: ") + ::dlerror();
      ::dlclose(h);
      return std::nullopt;
    });
  }
  if (name == "nccl") {
    if (auto g = gpu_unmet(env)) return g;
    return python_check(job_python(job_argv, env),
                        "import torch.distributed as d; assert d.is_nccl_available()",
                        "torch has no NCCL");
  }
  if (name == "torch") {
#ifdef AFTERMATH_HAVE_TORCH
    return std::nullopt;
#else
    return "the harness was built without LibTorch (no aftermath-trainer)";
#endif
  }
  if (name == "python-torch")
    return python_check(job_python(job_argv, env), "import torch", "torch does not import");
  if (name == "memory-cgroup") {
    auto r = find_memory_cgroup_home();
    if (r) return std::nullopt;
    return r.error().what;
  }
  return "unknown requirement";
}

}  // namespace

Status probe_requirement(const std::string& name, const std::vector<std::string>& job_argv,
                         const RequirementEnv& env) {
  if (std::optional<std::string> why = unmet(name, job_argv, env)) return Error{*why};
  return {};
}

Status requirements_met(const std::vector<std::string>& requirements,
                        const std::vector<std::string>& job_argv, const RequirementEnv& env) {
  for (const auto& r : requirements)
    if (Status met = probe_requirement(r, job_argv, env); !met)
      return Error{r + ": " + met.error().what, met.error().errnum};
  return {};
}

}  // namespace aftermath
