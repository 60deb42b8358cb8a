#include "harness/cli/pytest_cmd.h"

#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "harness/cli/inputs.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace fs = std::filesystem;

std::vector<std::string> pytest_command(const std::string& python,
                                        const std::vector<std::string>& pytest_args) {
  std::vector<std::string> cmd = {python, "-m", "pytest", "-p", "aftermath_pytest"};
  cmd.insert(cmd.end(), pytest_args.begin(), pytest_args.end());
  return cmd;
}

std::string pytest_run_name(const std::vector<std::string>& pytest_args) {
  for (const auto& a : pytest_args) {
    if (a.empty() || a[0] == '-') continue;
    std::string path = a.substr(0, a.find("::"));
    // An option's value ("-n 2", "-k expr") is no path: only what exists.
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    std::string base = fs::path(path).filename().string();
    if (base.empty() || base == "." || base == "..") break;
    std::string name = "pytest-" + base;
    for (auto& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.')
        ch = '_';
    return name;
  }
  return "pytest";
}

std::string pytest_pythonpath(const std::string& plugin_dir, const char* inherited) {
  if (inherited == nullptr || *inherited == '\0') return plugin_dir;
  return plugin_dir + ":" + inherited;
}

int cmd_pytest(RunCliOptions c, RunInvocation inv, const std::string& plugin_dir) {
  if (!c.inputs.empty()) {
    std::fprintf(
        stderr,
        "aftermath pytest: takes no scenario files ('%s'); pytest's arguments go after --, "
        "e.g. aftermath pytest -- tests/\n",
        c.inputs[0].c_str());
    return 2;
  }
  if (inv.job_command.empty()) {
    std::fprintf(
        stderr,
        "aftermath pytest: give pytest's arguments after --, e.g. aftermath pytest -- tests/\n");
    return 2;
  }
  if (!c.shard.empty()) {
    std::fprintf(stderr,
                 "aftermath pytest: --shard slices scenario files and suites, not a pytest run\n");
    return 2;
  }
  // The plugin: beside the build's programs (bin/../python, where the build
  // copies fixtures/points/), else installed with the wheel in the
  // interpreter's own environment (then it must import there).
  std::error_code ec;
  bool beside = true;
  for (const char* file : {"aftermath_pytest.py", "aftermath_points.py"})
    beside = beside && fs::is_regular_file(fs::path(plugin_dir) / file, ec);
  if (c.name.empty()) c.name = pytest_run_name(inv.job_command);
  if (beside) {
    const char* inherited =
        c.job_env.count("PYTHONPATH") ? c.job_env["PYTHONPATH"].c_str() : std::getenv("PYTHONPATH");
    c.job_env["PYTHONPATH"] = pytest_pythonpath(plugin_dir, inherited);
  }
  const std::string imports = beside ? "import pytest" : "import pytest, aftermath_pytest";
  // Each interpreter without pytest is said now, with the option, rather
  // than found in the report of a job that failed at its first import.
  for (const auto& given : c.pythons.empty() ? std::vector<std::string>{""} : c.pythons) {
    auto python = run_python(given);
    if (!python) {
      std::fprintf(stderr, "aftermath pytest: %s\n", python.error().what.c_str());
      return 2;
    }
    CommandOutcome probe = run_command({*python, "-c", imports}, 60 * kSecond, 4096);
    if (!probe.exited_zero()) {
      std::string why = !probe.started()    ? "cannot be started (" + probe.output + ")"
                        : probe.timed_out() ? "did not answer `" + imports + "` within 60 s"
                        : beside
                            ? "cannot import pytest"
                            : "cannot import pytest and the plugin (aftermath_pytest: install the "
                              "aftermath wheel into its environment)";
      std::fprintf(stderr,
                   "aftermath pytest: --python %s %s; install pytest for it (pip install pytest "
                   "pytest-xdist; "
                   "Debian: python3-pytest python3-pytest-xdist, for /usr/bin/python3) or name one "
                   "that has it "
                   "with --python\n",
                   python->c_str(), why.c_str());
      return 2;
    }
  }
  inv.job_command = pytest_command("${PYTHON}", inv.job_command);
  return cmd_run(c, inv);
}

}  // namespace aftermath
