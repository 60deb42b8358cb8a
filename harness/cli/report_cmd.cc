#include "harness/cli/report_cmd.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "reports/diff.h"
#include "reports/html.h"
#include "reports/summary.h"
#include "reports/trace.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Loads and parses a result.json; on failure prints "<cmd>: <path>: <why>".
std::optional<json> load(const char* cmd, const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "aftermath %s: %s: cannot read the file\n", cmd, path.c_str());
    return std::nullopt;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "aftermath %s: %s: not valid JSON\n", cmd, path.c_str());
    return std::nullopt;
  }
  // A JSON file that is not a result document would render as an empty
  // report and look like "nothing ran"; refuse it instead.
  if (!j.is_object() || !j.contains("scenarios") || !j["scenarios"].is_array()) {
    std::fprintf(stderr, "aftermath %s: %s: not an aftermath result.json (no \"scenarios\" list)\n",
                 cmd, path.c_str());
    return std::nullopt;
  }
  return j;
}

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "aftermath report: %s: cannot write the file\n", path.c_str());
    return false;
  }
  std::printf("%s\n", path.c_str());
  return true;
}

}  // namespace

int cmd_report(const std::string& result_path, const std::string& out_dir) {
  auto result = load("report", result_path);
  if (!result) return 2;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  fs::path dir = fs::absolute(out_dir, ec);
  if (ec || !fs::is_directory(dir)) {
    std::fprintf(stderr, "aftermath report: %s: cannot create the folder\n", out_dir.c_str());
    return 1;
  }
  bool ok = write_file(dir / "report.html", render_html(*result, dir.string()));
  ok = write_file(
           dir / "trace.json",
           render_trace(*result).dump(-1, ' ', false, json::error_handler_t::replace) + "\n") &&
       ok;
  ok = write_file(dir / "summary.md", render_summary_md(*result)) && ok;
  std::printf("junit.xml is not rewritten from result.json: `aftermath run` writes it.\n");
  return ok ? 0 : 1;
}

int cmd_diff(const std::string& a_path, const std::string& b_path) {
  auto a = load("diff", a_path);
  auto b = load("diff", b_path);
  if (!a || !b) return 2;
  std::printf("a: %s\nb: %s\n", a_path.c_str(), b_path.c_str());
  std::fputs(render_diff(*a, *b).c_str(), stdout);
  return runs_differ(*a, *b) ? 1 : 0;
}

}  // namespace aftermath
