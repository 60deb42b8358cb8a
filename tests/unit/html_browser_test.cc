// report.html in a real browser: a real run of a real scenario, rendered
// with render_html, loaded by headless Chromium. The DOM Chromium dumps after
// the page's script ran must hold one lane per job process and report zero
// script errors, with and without a zoom applied; a screenshot proves the
// page paints. Skipped, with the reason, where /usr/bin/chromium or the
// aftermath binary is missing.
//
// It lives with the unit tests because it links aftermath::reports; it uses
// the end-to-end helpers (deadlines, temp dirs) and runs `aftermath` from the
// folder this test binary is in (the build's bin/).
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reports/html.h"
#include "reports/result_read.h"

namespace {

// e2e_util.h wants the build's bin/ folder as a macro; the unit test binary
// has no such definition, but it sits in that folder itself.
const char* this_bin_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : exe.parent_path().string();
  }();
  return dir.c_str();
}

}  // namespace

#ifndef AFTERMATH_BIN_DIR
#define AFTERMATH_BIN_DIR this_bin_dir()
#endif
#include "tests/e2e/e2e_util.h"
#include "tests/support/files.h"

namespace aftermath {
namespace {

using namespace std::chrono_literals;

constexpr const char* kChromium = "/usr/bin/chromium";

using testing::count;

// The direct children of this process: with PR_SET_CHILD_SUBREAPER set,
// every descendant of a Chromium we started that outlives it ends up here.
std::vector<int> own_children() {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream f(task.path() / "children");
    for (int pid; f >> pid;) out.push_back(pid);
  }
  return out;
}

class HtmlBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kChromium, X_OK) != 0) {
      GTEST_SKIP() << kChromium << " is not installed (apt-get install chromium)";
    }
    if (::access(e2e::bin("aftermath").c_str(), X_OK) != 0) {
      GTEST_SKIP() << e2e::bin("aftermath") << " is not built (ninja aftermath)";
    }
    // Chromium's helpers (zygote, crashpad) outlive the browser process by a
    // moment; as a subreaper this test collects them instead of init.
    ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    subreaper_ = true;
  }

  void TearDown() override {
    if (!subreaper_) return;
    // Helpers normally exit by themselves within a few seconds; whatever
    // is still there after that is ours (only our descendants can be our
    // children) and is killed by pidfd, then reaped.
    if (!e2e::reap_orphans(20s)) {
      for (int pid : own_children()) {
        int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (fd < 0) continue;
        ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
        ::close(fd);
      }
      EXPECT_TRUE(e2e::reap_orphans(5s)) << "Chromium helpers left behind";
    }
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  }

  // Runs headless Chromium on `url` with a fresh profile; returns its stdout
  // (the DOM with --dump-dom). Fails the test on a timeout or an exit status.
  std::string chromium(const std::string& url, const std::vector<std::string>& extra) {
    std::string profile = dir_ / ("profile-" + std::to_string(++runs_));
    std::vector<std::string> argv = {kChromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--disable-quic",
                                     "--no-first-run",
                                     "--disable-background-networking",
                                     "--disable-component-update",
                                     "--disable-sync",
                                     "--disable-crash-reporter",
                                     "--user-data-dir=" + profile,
                                     "--virtual-time-budget=2000"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url);
    std::string out = dir_ / "chromium.out", err = dir_ / "chromium.err";
    e2e::Child c = e2e::spawn(argv, out, err);
    EXPECT_GT(c.pid, 0) << "cannot start " << kChromium;
    if (c.pid <= 0) return "";
    int status = e2e::wait_for(c, 60s);
    EXPECT_NE(status, -1) << "Chromium did not finish within 60 s";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "Chromium failed, status " << status << ":\n"
        << e2e::slurp(err);
    return e2e::slurp(out);
  }

  e2e::TempDir dir_;
  bool subreaper_ = false;
  int runs_ = 0;
};

TEST_F(HtmlBrowser, RealRunRendersOneLanePerProcessWithoutScriptErrors) {
  // A real run: the top process exits, two orphans live until teardown.
  e2e::Run run = e2e::aftermath(
      dir_, {"run", "--out", dir_ / "out", e2e::src("scenarios/orphan-outlives-parent.yaml")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_TRUE(run.result.is_object()) << run.err;
  const nlohmann::json& processes = run.result["scenarios"][0]["processes"];
  ASSERT_GE(processes.size(), 3u);

  std::string report = dir_ / "out/report.html";
  {
    std::ofstream f(report, std::ios::binary);
    auto typed = read_result(run.result);
    ASSERT_TRUE(typed) << typed.error().what;
    f << render_html(*typed, dir_ / "out");
  }
  std::string url = "file://" + report;

  std::string dom = chromium(url, {"--dump-dom"});
  ASSERT_FALSE(dom.empty());
  // The script ran to its end and counted no errors.
  EXPECT_NE(dom.find("data-js=\"ready\""), std::string::npos);
  EXPECT_NE(dom.find("<span id=\"js-errors\">0</span>"), std::string::npos)
      << dom.substr(dom.find("js-errors") == std::string::npos ? 0 : dom.find("js-errors"), 80);
  EXPECT_EQ(count(dom, "class=\"lane\""), processes.size());
  for (const auto& p : processes) {
    std::string pid = std::to_string(p["pid"].get<long long>());
    EXPECT_EQ(count(dom, "class=\"lane\" data-pid=\"" + pid + "\""), 1u) << pid;
  }
  EXPECT_NE(dom.find(">killed(SIGTERM)</text>"), std::string::npos);

  // Zoomed to the first 10 ms through the URL: the script re-lays out the
  // timeline (ticks a millisecond apart) and still raises nothing.
  std::string svg_id = "tl-s0-" + run.result["scenarios"][0]["name"].get<std::string>();
  std::string zoomed = chromium(url + "#zoom=" + svg_id + ":0:10", {"--dump-dom"});
  EXPECT_NE(zoomed.find("<span id=\"js-errors\">0</span>"), std::string::npos);
  EXPECT_NE(zoomed.find(">5 ms</text>"), std::string::npos);
  EXPECT_EQ(dom.find(">5 ms</text>"), std::string::npos);
  EXPECT_EQ(count(zoomed, "class=\"lane\""), processes.size());

  // And it paints: a PNG of a plausible size.
  std::string shot = dir_ / "report.png";
  chromium(url, {"--screenshot=" + shot, "--window-size=1400,900", "--hide-scrollbars"});
  std::string png = e2e::slurp(shot);
  EXPECT_GT(png.size(), 10000u) << "screenshot missing or blank";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::filesystem::remove(shot);
}

// Reads back what the browser computed, into <pre id="probe"> as JSON: the
// fills of pid's stopped bar, its running bar and the legend's swatches;
// whether the hang section's row for pid is there; the height of its
// <details> closed, then opened (as a click on its summary would).
std::string probe_script(long long pid) {
  std::string lane = "g.lane[data-pid=\"" + std::to_string(pid) + "\"]";
  std::string row = "div.hang tbody.hang-proc[data-pid=\"" + std::to_string(pid) + "\"]";
  return "<pre id=\"probe\"></pre><script>(function () {\n"
         "  function fill(sel) { var e = document.querySelector(sel);\n"
         "    return e ? getComputedStyle(e).fill : 'missing'; }\n"
         "  var out = { lane: fill('" +
         lane + " rect.stopped'), running: fill('" + lane +
         " rect.life'),\n"
         "    legend: fill('.legend rect.stopped'), legend_running: fill('.legend rect.life'),\n"
         "    legend_d: fill('.legend rect.uninterruptible') };\n"
         "  var bar = document.querySelector('" +
         lane +
         " rect.stopped');\n"
         "  out.bar_width = bar ? bar.getBoundingClientRect().width : -1;\n"
         "  var row = document.querySelector('" +
         row +
         "');\n"
         "  out.row = !!row;\n"
         "  var d = row && row.querySelector('details');\n"
         "  out.closed = d ? d.getBoundingClientRect().height : -1;\n"
         "  if (d) d.querySelector('summary').click();\n"
         "  out.open = d ? d.getBoundingClientRect().height : -1;\n"
         "  out.is_open = !!(d && d.open);\n"
         "  document.getElementById('probe').textContent = JSON.stringify(out);\n"
         "})();</script>";
}

TEST_F(HtmlBrowser, StoppedProcessAndHangSectionRenderAsDrawn) {
  // A real hang: the top process is stopped 50 ms in; the deadline declares
  // the hang and the harness diagnoses the live processes.
  e2e::Run run =
      e2e::aftermath(dir_, {"run", "--out", dir_ / "out", "--timeout", "1500ms", "--fault",
                            "{action: SIGSTOP, target: launcher, at: {after: 50ms}}", "--",
                            e2e::bin("tc_hang"), "--life", "20s"});
  ASSERT_TRUE(run.result.is_object()) << run.out << run.err;
  const nlohmann::json& sc = run.result["scenarios"][0];
  long long top = sc["top"]["pid"].get<long long>();
  bool seen_stopped = false;
  for (const auto& e : sc["timeline"])
    seen_stopped |= e["kind"] == "proc_state" && e["pid"] == top && e["state"] == "T";
  ASSERT_TRUE(seen_stopped) << "the harness never saw the top process stopped";
  ASSERT_FALSE(sc["hang_diagnosis"]["processes"].empty()) << sc["hang_diagnosis"].dump();

  auto typed = read_result(run.result);
  ASSERT_TRUE(typed) << typed.error().what;
  std::string html = render_html(*typed, dir_ / "out");
  size_t body_end = html.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  html.insert(body_end, probe_script(top));
  std::string report = dir_ / "out/report.html";
  {
    std::ofstream f(report, std::ios::binary);
    f << html;
  }
  std::string dom = chromium("file://" + report, {"--dump-dom"});
  EXPECT_NE(dom.find("<span id=\"js-errors\">0</span>"), std::string::npos);
  size_t at = dom.find("<pre id=\"probe\">");
  ASSERT_NE(at, std::string::npos) << dom.substr(0, 200);
  at += std::string("<pre id=\"probe\">").size();
  nlohmann::json probe =
      nlohmann::json::parse(dom.substr(at, dom.find("</pre>", at) - at), nullptr, false);
  ASSERT_TRUE(probe.is_object()) << dom.substr(at, 400);

  // The stopped bar is painted in the legend's stopped colour, which is
  // neither the running colour nor the uninterruptible one.
  EXPECT_EQ(probe["lane"], probe["legend"]) << probe.dump();
  EXPECT_NE(probe["lane"], "missing") << probe.dump();
  EXPECT_NE(probe["lane"], "rgb(0, 0, 0)") << "SVG's default fill: the stylesheet gave it none";
  EXPECT_NE(probe["lane"], probe["running"]) << probe.dump();
  EXPECT_EQ(probe["running"], probe["legend_running"]) << probe.dump();
  EXPECT_NE(probe["legend"], probe["legend_d"]) << probe.dump();
  EXPECT_GT(probe["bar_width"].get<double>(), 100)
      << probe.dump();  // stopped from 50 ms to the end
  // The hang section has the stopped process, and its details open on a click.
  EXPECT_TRUE(probe["row"].get<bool>()) << probe.dump();
  EXPECT_TRUE(probe["is_open"].get<bool>()) << probe.dump();
  EXPECT_GT(probe["closed"].get<double>(), 0) << probe.dump();
  EXPECT_GT(probe["open"].get<double>(), probe["closed"].get<double>() + 40) << probe.dump();
}

}  // namespace
}  // namespace aftermath
