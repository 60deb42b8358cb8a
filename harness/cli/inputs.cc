#include "harness/cli/inputs.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/os/find_program.h"

namespace aftermath {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> expand(const std::vector<std::string>& inputs,
                                std::vector<std::string>& errors, int depth);

}  // namespace

bool looks_like_program(const std::string& path) {
  fs::path p(path);
  auto ext = p.extension().string();
  if (ext == ".yaml" || ext == ".yml" || ext == ".suite") return false;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  char head[4] = {};
  std::ifstream f(path, std::ios::binary);
  f.read(head, sizeof head);
  bool elf =
      f.gcount() == 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
  bool script = f.gcount() >= 2 && head[0] == '#' && head[1] == '!';
  auto perms = fs::status(p, ec).permissions();
  bool exec = (perms & (fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec)) !=
              fs::perms::none;
  return elf || script || (exec && ext.empty());
}

std::string double_dash_hint(const std::vector<std::string>& words, size_t program) {
  std::string cmd;
  for (size_t k = program; k < words.size(); ++k) cmd += " " + words[k];
  return words[program] + ": a program, not a scenario or suite; did you mean `aftermath run --" +
         cmd + "`?";
}

namespace {

// The scenario files a .suite file lists.
std::vector<std::string> expand_suite(const std::string& suite, std::vector<std::string>& errors,
                                      int depth) {
  std::vector<std::string> out;
  std::ifstream f(suite);
  if (!f) {
    errors.push_back(suite + ": cannot read the suite file");
    return out;
  }
  std::string line;
  int n = 0;
  while (std::getline(f, line)) {
    ++n;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    fs::path p = fs::path(suite).parent_path() / line;
    if (!fs::exists(p)) {
      errors.push_back(suite + ":" + std::to_string(n) + ":1: " + line + ": no such scenario file");
      continue;
    }
    auto inner = expand({p.lexically_normal().string()}, errors, depth + 1);
    out.insert(out.end(), inner.begin(), inner.end());
  }
  return out;
}

std::vector<std::string> expand(const std::vector<std::string>& inputs,
                                std::vector<std::string>& errors, int depth) {
  std::vector<std::string> out;
  if (depth > 8) {
    errors.push_back("suites nest more than 8 deep (a suite that includes itself?)");
    return out;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    if (depth == 0 && looks_like_program(in)) {
      errors.push_back(double_dash_hint(inputs, i));
      break;  // what follows is its arguments
    }
    if (fs::is_directory(in)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in))
        if (e.path().extension() == ".yaml") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::path(in).extension() == ".suite") {
      auto listed = expand_suite(in, errors, depth);
      out.insert(out.end(), listed.begin(), listed.end());
    } else {
      out.push_back(in);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs,
                                       std::vector<std::string>& errors) {
  return expand(inputs, errors, 0);
}

std::string self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("aftermath") : p.string();
}

std::string bin_dir() { return fs::path(self_path()).parent_path().string(); }

Expected<std::string> run_python(const std::string& given) {
  auto resolve = [](const std::string& p, const std::string& from) -> Expected<std::string> {
    std::string path = p;
    if (p.find('/') == std::string::npos)
      path = find_program(p).value_or("");
    else
      path = fs::absolute(p).lexically_normal().string();
    if (path.empty() || !is_executable_file(path))
      return Error{from + " '" + p + "': not found or not executable"};
    return path;
  };
  if (!given.empty()) return resolve(given, "--python");
  if (const char* env = std::getenv("AFTERMATH_PYTHON"); env && *env)
    return resolve(env, "$AFTERMATH_PYTHON");
#ifdef AFTERMATH_DEFAULT_PYTHON
  if (is_executable_file(AFTERMATH_DEFAULT_PYTHON)) return std::string(AFTERMATH_DEFAULT_PYTHON);
#endif
  if (std::string beside = bin_dir() + "/python"; is_executable_file(beside)) return beside;
  return resolve("python3", "python3 on PATH");
}

std::map<std::string, std::string> scenario_vars(const std::string& python) {
  std::map<std::string, std::string> vars = {{"AFTERMATH_BIN", bin_dir()}};
  // The LibTorch trainer: $AFTERMATH_TRAINER (one built against another
  // LibTorch: fixtures/cpp builds on its own), else the build's.
  const char* trainer = std::getenv("AFTERMATH_TRAINER");
  vars["AFTERMATH_TRAINER"] =
      trainer && *trainer ? std::string(trainer) : bin_dir() + "/aftermath-trainer";
  if (!python.empty()) vars["PYTHON"] = python;
  return vars;
}

}  // namespace aftermath
