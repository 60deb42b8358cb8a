#include "harness/cli/report_cmd.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "harness/os/expected.h"
#include "reports/diff.h"
#include "reports/html.h"
#include "reports/junit.h"
#include "reports/summary.h"
#include "reports/trace.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Loads and parses a result.json; the error is "<path>: <why>".
Expected<json> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot read the file"};
  std::stringstream ss;
  ss << f.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{path + ": not valid JSON"};
  // A JSON file that is not a result document would render as an empty
  // report and look like "nothing ran"; refuse it instead.
  if (!j.is_object() || !j.contains("scenarios") || !j["scenarios"].is_array())
    return Error{path + ": not an aftermath result.json (no \"scenarios\" list)"};
  return j;
}

// load(), or its error printed as "aftermath CMD: ..."; nullopt then.
std::optional<json> load_or_say(const char* cmd, const std::string& path) {
  auto j = load(path);
  if (!j) {
    std::fprintf(stderr, "aftermath %s: %s\n", cmd, j.error().what.c_str());
    return std::nullopt;
  }
  return std::move(*j);
}

Status write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Error{path.string() + ": cannot write the file"};
  return {};
}

// Writes one report and names it on stdout; false (and why, on stderr) when it cannot.
bool write_report(const fs::path& path, const std::string& text) {
  Status written = write_file(path, text);
  if (!written) {
    std::fprintf(stderr, "aftermath report: %s\n", written.error().what.c_str());
    return false;
  }
  std::printf("%s\n", path.c_str());
  return true;
}

}  // namespace

int cmd_report(const std::string& result_path, const std::string& out_dir) {
  auto result = load_or_say("report", result_path);
  if (!result) return 2;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  fs::path dir = fs::absolute(out_dir, ec);
  if (ec || !fs::is_directory(dir)) {
    std::fprintf(stderr, "aftermath report: %s: cannot create the folder\n", out_dir.c_str());
    return 1;
  }
  bool ok = write_report(dir / "junit.xml", render_junit(*result));
  ok = write_report(dir / "report.html", render_html(*result, dir.string())) && ok;
  ok = write_report(
           dir / "trace.json",
           render_trace(*result).dump(-1, ' ', false, json::error_handler_t::replace) + "\n") &&
       ok;
  ok = write_report(dir / "summary.md", render_summary_md(*result)) && ok;
  return ok ? 0 : 1;
}

int cmd_diff(const std::string& a_path, const std::string& b_path) {
  auto a = load_or_say("diff", a_path);
  auto b = load_or_say("diff", b_path);
  if (!a || !b) return 2;
  std::printf("a: %s\nb: %s\n", a_path.c_str(), b_path.c_str());
  std::fputs(render_diff(*a, *b).c_str(), stdout);
  return runs_differ(*a, *b) ? 1 : 0;
}

}  // namespace aftermath
