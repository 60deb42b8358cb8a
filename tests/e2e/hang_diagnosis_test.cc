// End-to-end: a real hang of two gloo ranks. An ordinary DDP script
// (tests/data/programs/ddp_plain.py) runs under torchrun; rank 1 is
// SIGSTOPped once rank 0 trains, so rank 0 blocks in its all_reduce for good.
// The hang diagnosis shows rank 1 stopped (state T) and rank 0's Python
// frames, down to the script's own all_reduce call, and the no_hang check's
// reason says where rank 0 is.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.h"
#include "harness/observe/python_stack.h"

using namespace std::chrono_literals;
using e2e::TempDir;
using nlohmann::json;

namespace {

// The line of `text` in `file` (1-based), 0 if absent.
int line_of(const std::string& file, const std::string& text) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (line.find(text) != std::string::npos) return n;
  return 0;
}

bool python_stacks_available() {
  std::string exe = std::filesystem::canonical("/usr/bin/python3").string();
  return !aftermath::find_libpython_script("/usr/share/gdb", exe, aftermath::python_version_of(exe))
              .empty();
}

const json* process_of(const json& diagnosis, int rank) {
  for (const auto& p : diagnosis["processes"])
    if (p["role"] == "rank" && p["rank"] == rank) return &p;
  return nullptr;
}

TEST(HangDiagnosis, AStoppedRankHoldsTheOtherInItsAllReduce) {
  if (!e2e::torch_unavailable().empty()) GTEST_SKIP() << e2e::torch_unavailable();
  if (::access("/usr/bin/gdb", X_OK) != 0) GTEST_SKIP() << "gdb is not installed";
  TempDir dir;
  const e2e::HeldPort port;
  ASSERT_GT(port.port, 0);
  const std::string program = e2e::src("tests/data/programs/ddp_plain.py");
  const int call_line = line_of(program, "dist.all_reduce(t)");
  ASSERT_GT(call_line, 0);
  // Rank 1 stops once both ranks have their worker: both are then past
  // init_process_group, and rank 0 can only be held in the training loop.
  // gdb reads libtorch's symbols before it has a stack: 3-6 s on a quiet
  // machine, past the 10 s default once both cores are busy with other work,
  // so the diagnosis gets a budget that does not depend on this machine.
  auto r = e2e::aftermath(dir,
                          {"run",
                           "--out",
                           dir / "out",
                           "--timeout",
                           "90s",
                           "--check",
                           "no_hang: {stall: 3s, diagnose: 120s}",
                           "--fault",
                           "{action: SIGSTOP, target: rank:1, at: {when: {workers: {count: 2}}}}",
                           "--",
                           "/usr/bin/python3",
                           e2e::src("fixtures/python/torchrun_shim.py"),
                           "--nnodes",
                           "1",
                           "--nproc_per_node",
                           "2",
                           "--master_addr",
                           "127.0.0.1",
                           "--master_port",
                           port.str(),
                           program,
                           "--workers",
                           "1",
                           "--steps",
                           "100000"},
                          300s);
  ASSERT_FALSE(r.result.is_null()) << r.err << r.out;
  const json& s = r.result["scenarios"][0];
  ASSERT_EQ(s["faults"][0]["status"], "injected") << s["faults"][0].dump();
  EXPECT_EQ(e2e::check_status(r, "no_hang"), "fail");
  const json& diag = s["hang_diagnosis"];
  EXPECT_GT(diag["took_ms"].get<double>(), 0.0);
  const json* stopped = process_of(diag, 1);
  const json* waiting = process_of(diag, 0);
  ASSERT_TRUE(stopped && waiting) << diag.dump(1);
  EXPECT_EQ((*stopped)["state"], "T") << stopped->dump(1);
  EXPECT_NE((*waiting)["user_stacks"].get<std::string>().find("#0 "), std::string::npos);
  EXPECT_GT((*waiting)["took_ms"].get<double>(), 0.0);
  if (!python_stacks_available()) {
    // Without python3-dbg: the C stacks, and the reason there is no more.
    EXPECT_NE((*waiting)["python_note"].get<std::string>().find("python3-dbg"), std::string::npos)
        << waiting->dump(1);
    return;
  }
  EXPECT_EQ((*waiting)["python_note"], "") << waiting->dump(1);
  const json& frames = (*waiting)["python_frames"];
  ASSERT_GE(frames.size(), 2u) << waiting->dump(1);
  EXPECT_EQ(frames[0]["function"], "all_reduce") << frames.dump(1);
  bool call_site = false;
  for (const auto& f : frames)
    call_site = call_site || (f["file"] == program && f["line"] == call_line &&
                              f["function"] == "main" && f["code"] == "dist.all_reduce(t)");
  EXPECT_TRUE(call_site) << frames.dump(1);
  // The stopped rank's frames are read as well: gdb reads a stopped process.
  EXPECT_FALSE((*stopped)["python_frames"].empty()) << stopped->dump(1);
  EXPECT_EQ((*stopped)["state"], "T");
  // The check names it, and measures it.
  std::string reason = e2e::check(r, "no_hang")["reason"];
  std::string where = "rank 0 (pid " + std::to_string((*waiting)["pid"].get<int>()) +
                      ") is in all_reduce (distributed_c10d.py:";
  EXPECT_NE(reason.find(where), std::string::npos) << reason;
  EXPECT_NE(reason.find("called from ddp_plain.py:" + std::to_string(call_line)), std::string::npos)
      << reason;
  bool measured = false;
  const json no_hang = e2e::check(r, "no_hang");
  for (const auto& d : no_hang["measured"]["diagnosis"])
    if (d["rank"] == 0 && d["role"] == "rank")
      measured = d["python_where"].get<std::string>().find(
                     "called from ddp_plain.py:" + std::to_string(call_line)) != std::string::npos;
  EXPECT_TRUE(measured) << no_hang["measured"].dump(1);
}

}  // namespace
