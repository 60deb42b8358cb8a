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
#include <string>
#include <vector>

#include "reports/html.h"

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

namespace aftermath {
namespace {

using namespace std::chrono_literals;

constexpr const char* kChromium = "/usr/bin/chromium";

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

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
    f << render_html(run.result, dir_ / "out");
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

}  // namespace
}  // namespace aftermath
