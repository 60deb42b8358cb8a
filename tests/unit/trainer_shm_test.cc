// Unit tests for the trainer's shared memory and loader
// (fixtures/cpp/shm.h, shm_manager.h, loader.h), in a temporary segment
// directory so leaks are counted exactly: both sharing strategies read back
// what the worker wrote, a clean run leaves no segment, the reference count
// unlinks at zero, the manager reclaims a dead client's segments after its
// delay, and a killed worker is reported. No sleeps: every wait is a
// handshake or bounded polling.
#ifdef AFTERMATH_HAVE_TRAINER

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fixtures/cpp/channel.h"
#include "fixtures/cpp/dataset.h"
#include "fixtures/cpp/loader.h"
#include "fixtures/cpp/shm.h"
#include "fixtures/cpp/shm_manager.h"

namespace trainer {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ShmDir {
 public:
  ShmDir() {
    char tmpl[] = "/tmp/aftermath-shm-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ShmDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(path_)) v.push_back(e.path().filename());
    return v;
  }

 private:
  std::string path_;
};

template <typename F>
bool within(std::chrono::milliseconds bound, F f) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    ::poll(nullptr, 0, 10);
  }
  return f();
}

// Pids of live processes whose command line mentions `marker` (our temp
// dir): the managers the loader's workers started.
std::vector<int> processes_mentioning(const std::string& marker) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline");
    std::stringstream s;
    s << f.rdbuf();
    std::string stat;
    std::ifstream st(e.path() / "stat");
    std::getline(st, stat);
    auto rp = stat.rfind(')');
    bool zombie = rp != std::string::npos && rp + 2 < stat.size() && stat[rp + 2] == 'Z';
    if (!zombie && s.str().find(marker) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

std::vector<Batch> make_plan(int batches, int batch_size, std::int64_t first = 0) {
  std::vector<Batch> plan;
  for (int b = 0; b < batches; ++b) {
    Batch x;
    for (int i = 0; i < batch_size; ++i) x.push_back(first + b * batch_size + (i * 7) % batch_size);
    plan.push_back(x);
  }
  return plan;
}

LoaderConfig config(const ShmDir& d, Sharing s, bool manager) {
  LoaderConfig c;
  c.workers = 3;
  c.prefetch = 2;
  c.sharing = s;
  c.shm_manager = manager;
  c.manager_delay = Millis(100);
  c.watchdog = Watchdog::Pdeathsig;
  c.inherit = false;
  c.worker_join_timeout = Millis(5000);
  c.shm_dir = d.path();
  c.manager_path = std::string(AFTERMATH_TRAINER_BIN_DIR) + "/aftermath-shm-manager";
  c.sample_bytes = 256;
  c.features = 8;
  c.max_life = Millis(60000);
  return c;
}

// Runs a loader over `plan` and checks every batch against the dataset.
void read_all_and_verify(const LoaderConfig& c, const std::vector<Batch>& plan) {
  Loader loader(c, plan, 0);
  std::vector<std::uint8_t> want;
  size_t n = 0;
  while (loader.has_next()) {
    LoadedBatch b = loader.next();
    ASSERT_EQ(b.id(), static_cast<std::int64_t>(n));  // in plan order, whatever the workers' order
    ASSERT_EQ(b.indices(), plan[n]);
    want.assign(b.bytes(), 0);
    fill_batch(want.data(), plan[n], c.sample_bytes, c.features, c.data_seed);
    ASSERT_EQ(b.bytes(), plan[n].size() * static_cast<size_t>(c.sample_bytes));
    EXPECT_EQ(std::memcmp(b.data(), want.data(), b.bytes()), 0) << "batch " << n;
    ++n;
  }
  loader.shutdown();
  EXPECT_EQ(n, plan.size());
  EXPECT_EQ(loader.stats().batches, static_cast<std::int64_t>(plan.size()));
  std::int64_t served = 0;
  for (auto s : loader.stats().per_worker) served += s;
  EXPECT_EQ(served, static_cast<std::int64_t>(plan.size()));
}

TEST(TrainerShm, FileDescriptorBatchesReadBackAndLeaveNothing) {
  ShmDir d;
  read_all_and_verify(config(d, Sharing::FileDescriptor, false), make_plan(10, 5));
  EXPECT_TRUE(d.entries().empty());
}

TEST(TrainerShm, FileSystemBatchesReadBackAndLeaveNothing) {
  ShmDir d;
  read_all_and_verify(config(d, Sharing::FileSystem, false), make_plan(10, 5));
  EXPECT_TRUE(d.entries().empty());  // every segment unlinked by its reference count
}

TEST(TrainerShm, FileSystemWithManagersLeavesNothingAndTheManagersExit) {
  ShmDir d;
  read_all_and_verify(config(d, Sharing::FileSystem, true), make_plan(10, 5));
  EXPECT_TRUE(d.entries().empty());
  // One manager per worker, each gone once its clients are (delay 100 ms).
  EXPECT_TRUE(
      within(std::chrono::seconds(10), [&] { return processes_mentioning(d.path()).empty(); }));
}

TEST(TrainerShm, SpawnedWorkersServeTheSameBytes) {
  ShmDir d;
  auto c = config(d, Sharing::FileDescriptor, false);
  c.start_method = StartMethod::Spawn;
  c.workers = 2;
  c.program = std::string(AFTERMATH_TRAINER_BIN_DIR) + "/aftermath-trainer";
  c.worker_args = {"--features", "8",      "--sample-bytes", "256",
                   "--shm-dir",  d.path(), "--watchdog",     "pdeathsig"};
  read_all_and_verify(c, make_plan(4, 3));
  EXPECT_TRUE(d.entries().empty());
}

TEST(TrainerShm, InProcessLoadingWithoutWorkers) {
  ShmDir d;
  auto c = config(d, Sharing::FileDescriptor, false);
  c.workers = 0;
  read_all_and_verify(c, make_plan(3, 4));
}

TEST(TrainerShm, NamedSegmentIsUnlinkedByTheLastReference) {
  ShmDir d;
  std::string err;
  auto a = create_named(d.path(), 100, &err);
  ASSERT_TRUE(a) << err;
  EXPECT_THAT(a->name, ::testing::StartsWith("torch_" + std::to_string(getpid()) + "_"));
  std::memset(a->payload(), 0x5a, 100);
  a->header()->refcount.fetch_add(1);  // a second holder (as a receiver's incref)
  auto b = open_named(d.path(), a->name, &err);
  ASSERT_TRUE(b) << err;
  EXPECT_EQ(b->payload()[99], 0x5a);
  EXPECT_FALSE(release_named(*a));
  EXPECT_EQ(d.entries().size(), 1u);
  EXPECT_TRUE(release_named(*b));
  EXPECT_TRUE(d.entries().empty());
}

TEST(TrainerShm, FdSegmentHasNoNameAndTravelsOverAUnixSocket) {
  ShmDir d;
  std::string err;
  auto seg = create_fd_segment(d.path(), 4096, &err);
  ASSERT_TRUE(seg) << err;
  EXPECT_TRUE(d.entries().empty());  // unlinked at once
  std::memset(seg->map.data(), 0x33, 4096);
  UniqueFd a, b;
  ASSERT_FALSE(seqpacket_pair(&a, &b));
  int fd = seg->fd.get();
  ASSERT_EQ(send_message(a.get(), "x", 1, &fd, 1), 0);
  seg.reset();  // the sender lets go; the memory lives on in the fd in flight
  char c;
  std::vector<UniqueFd> fds;
  ASSERT_EQ(recv_message(b.get(), &c, 1, &fds), 1);
  ASSERT_EQ(fds.size(), 1u);
  auto got = map_fd_segment(std::move(fds[0]), &err);
  ASSERT_TRUE(got) << err;
  EXPECT_EQ(got->map.size(), 4096u);
  EXPECT_EQ(got->map.data()[4095], 0x33);
}

// No name ever appears for a file_descriptor segment, so a worker killed at
// any moment of making one (SIGKILL, PDEATHSIG with its rank) leaves nothing
// in /dev/shm: the directory sees no entry created at all.
TEST(TrainerShm, FdSegmentNeverHasANameToLeave) {
  ShmDir d;
  UniqueFd watch(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  ASSERT_TRUE(watch.valid());
  ASSERT_GE(::inotify_add_watch(watch.get(), d.path().c_str(), IN_CREATE | IN_DELETE), 0);
  std::string err;
  auto seg = create_fd_segment(d.path(), 8192, &err);
  ASSERT_TRUE(seg) << err;
  alignas(inotify_event) char buf[4096];
  ssize_t n = ::read(watch.get(), buf, sizeof buf);
  EXPECT_EQ(n, -1) << "an entry was created and removed: a SIGKILL between could leave it";
  EXPECT_EQ(errno, EAGAIN);
}

TEST(TrainerShm, ManagerReclaimsADeadClientsSegmentsAfterItsDelay) {
  ShmDir d;
  ManagerOptions mo;
  mo.shm_dir = d.path();
  mo.delay = Millis(200);
  mo.max_life = Millis(30000);
  std::string err;
  auto m = ManagerClient::start(std::string(AFTERMATH_TRAINER_BIN_DIR) + "/aftermath-shm-manager",
                                mo, Millis(10000), &err);
  ASSERT_TRUE(m) << err;
  const pid_t manager = m->pid();
  UniqueFd pidfd(pidfd_open(manager));
  // A segment whose message was never received: refcount 1, nobody to drop it.
  auto seg = create_named(d.path(), 64, &err);
  ASSERT_TRUE(seg) << err;
  m->register_segment(seg->name);
  seg->map.reset();
  auto t0 = std::chrono::steady_clock::now();
  m.reset();  // the client hangs up (as if killed)
  ASSERT_TRUE(pidfd_wait_exit(pidfd.get(), Millis(10000)));
  double took =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  int status = 0;
  ASSERT_EQ(::waitpid(manager, &status, 0), manager);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GE(took, 150);  // not before its delay (a loose lower bound)
  EXPECT_TRUE(d.entries().empty());
}

TEST(TrainerShm, AKilledWorkerIsReportedAndOnlyItsUnsentSegmentsCanLeak) {
  // file_system without a manager, a worker SIGKILLed mid-epoch: the rank
  // reports the death as PyTorch words it; shutdown releases whatever was
  // sent; a segment the dead worker created but never sent has nobody to
  // unlink it (that is the leak the manager exists for).
  ShmDir d;
  auto c = config(d, Sharing::FileSystem, false);
  c.workers = 2;
  Loader loader(c, make_plan(8, 2), 0);
  LoadedBatch first = loader.next();
  first.release();
  auto pids = loader.worker_pids();
  UniqueFd fd(pidfd_open(pids[1]));
  ASSERT_EQ(pidfd_signal(fd.get(), SIGKILL), 0);
  ASSERT_TRUE(pidfd_wait_exit(fd.get(), Millis(5000)));
  std::string error;
  try {
    while (loader.has_next()) loader.next().release();
  } catch (const LoaderError& e) {
    error = e.what();
  }
  EXPECT_THAT(error, HasSubstr("DataLoader worker (pid " + std::to_string(pids[1]) +
                               ") is killed by signal: SIGKILL"));
  loader.shutdown();
  for (const auto& name : d.entries())
    EXPECT_THAT(name, ::testing::StartsWith("torch_" + std::to_string(pids[1]) + "_"));
}

}  // namespace
}  // namespace trainer

#endif  // AFTERMATH_HAVE_TRAINER
