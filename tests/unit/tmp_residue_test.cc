// Unit tests for harness/observe/tmp_residue: naming, the bounded scan, the
// diff, /proc/net/unix parsing, and who holds an entry, on planted temp dirs
// with a fake /proc, and for real with a child of this test that binds a
// socket in a planted pymp-* folder (taken down and reaped by the test).
#include "harness/observe/tmp_residue.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "tests/support/children.h"
#include "tests/unit/device_fixtures.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using testing::FakeProc;
using testing::TempDir;
using testing_children::OwnedChild;
using testing_children::readable_within;

// A socket file left by a process that bound it and is gone: bind, close.
void stale_socket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  ::close(fd);
}

TEST(TmpResidue, KindsByName) {
  EXPECT_EQ(classify_tmp_name("pymp-k2x9ab"), TmpKind::Pymp);
  EXPECT_EQ(classify_tmp_name("torch-shm-dir-AbC123"), TmpKind::TorchShmDir);
  EXPECT_EQ(classify_tmp_name("torchelastic_3y_8a"), TmpKind::Torchelastic);
  // The torchrun shim's folder where its agent was SIGKILLed outside aftermath.
  EXPECT_EQ(classify_tmp_name("aftermath-torchrun-k2j4"), TmpKind::TorchrunShim);
  EXPECT_EQ(classify_tmp_name("pytorch-errorfile-3y5g37zm.pickle"), TmpKind::SpawnErrorFile);
  EXPECT_TRUE(known_residue(TmpKind::SpawnErrorFile));
  EXPECT_EQ(to_string(TmpKind::SpawnErrorFile), "spawn-errorfile");
  EXPECT_EQ(classify_tmp_name("pytorch-errorfile-3y5g37zm.txt"), TmpKind::Other);
  EXPECT_EQ(classify_tmp_name("pytorch-errorfile-"), TmpKind::Other);
  EXPECT_TRUE(known_residue(TmpKind::TorchrunShim));
  EXPECT_EQ(to_string(TmpKind::TorchrunShim), "torchrun-shim");
  EXPECT_EQ(classify_tmp_name("pymp-"), TmpKind::Other);  // the bare prefix is not mkdtemp's
  EXPECT_EQ(classify_tmp_name("tmpab12cd"), TmpKind::Other);
  EXPECT_EQ(classify_tmp_name("my-pymp-1"), TmpKind::Other);
  EXPECT_EQ(to_string(TmpKind::TorchShmDir), "torch-shm-dir");
  EXPECT_TRUE(known_residue(TmpKind::Torchelastic));
  EXPECT_FALSE(known_residue(TmpKind::Other));
}

TEST(TmpResidue, ScanSumsSizesUnderEachEntryWithinItsBound) {
  TempDir d("aftermath-tmpres");
  d.write("t/torchelastic_ab/attempt_0/0/error.json", std::string(100, 'x'));
  d.write("t/torchelastic_ab/attempt_0/1/stdout.log", std::string(50, 'y'));
  d.write("t/out.bin", std::string(7, 'z'));
  fs::create_directories(d / "t/pymp-q1");
  stale_socket(d / "t/pymp-q1/listener-zz");
  for (int i = 0; i < 5; ++i)
    d.write(
        "t/big_"
        "/f" +
            std::to_string(i),
        std::string(10, 'b'));
  auto t = scan_tmp(d / "t");
  ASSERT_TRUE(t) << t.error().what;
  ASSERT_EQ(t->size(), 4u);
  const TmpEntry& elastic = t->at("torchelastic_ab");
  EXPECT_EQ(elastic.kind, TmpKind::Torchelastic);
  EXPECT_TRUE(elastic.dir);
  EXPECT_EQ(elastic.bytes, 150);
  EXPECT_FALSE(elastic.bytes_partial);
  EXPECT_EQ(elastic.uid, ::getuid());
  EXPECT_GT(elastic.inode, 0u);
  EXPECT_EQ(t->at("out.bin").bytes, 7);
  EXPECT_EQ(t->at("pymp-q1").sockets, std::vector<std::string>{"listener-zz"});
  EXPECT_TRUE(elastic.sockets.empty());
  // The newest mtime under it, not the folder's own.
  struct stat st;
  ASSERT_EQ(::stat((d / "t/torchelastic_ab/attempt_0/1/stdout.log").c_str(), &st), 0);
  EXPECT_GE(elastic.mtime_ns, static_cast<std::int64_t>(st.st_mtim.tv_sec) * kSecond);

  // Bounded: a lower bound, and said so.
  auto small = scan_tmp(d / "t", TmpScanLimits{3, 8});
  ASSERT_TRUE(small);
  EXPECT_TRUE(small->at("big_").bytes_partial);
  EXPECT_LE(small->at("big_").bytes, 30);
  auto shallow = scan_tmp(d / "t", TmpScanLimits{100, 2});
  EXPECT_TRUE(shallow->at("torchelastic_ab").bytes_partial);
  EXPECT_EQ(shallow->at("torchelastic_ab").bytes, 0);

  auto missing = scan_tmp(d / "missing");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().what.find("missing"), std::string::npos) << missing.error().what;
  EXPECT_EQ(stat_tmp(d / "t", "out.bin")->bytes, 7);
  EXPECT_FALSE(stat_tmp(d / "t", "../t"));
  EXPECT_FALSE(stat_tmp(d / "t", "nope"));
}

TEST(TmpResidue, NewEntriesAreNewNamesOrNewInodes) {
  auto entry = [](std::string name, TmpKind kind, bool dir, std::uint64_t inode) {
    TmpEntry e;
    e.name = std::move(name);
    e.kind = kind;
    e.dir = dir;
    e.inode = inode;
    return e;
  };
  TmpEntry a = entry("a", TmpKind::Other, false, 10);
  TmpEntry b = entry("pymp-b", TmpKind::Pymp, true, 20);
  TmpEntry b2 = b;
  b2.inode = 21;  // removed and made again under the same name
  TmpEntry c = entry("c", TmpKind::Other, false, 30);
  TmpTable before{{"a", a}, {"pymp-b", b}, {"gone", c}};
  TmpTable after{{"a", a}, {"pymp-b", b2}, {"c", c}};
  auto fresh = new_tmp_entries(before, after);
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_EQ(fresh[0].name, "c");
  EXPECT_EQ(fresh[1].name, "pymp-b");
  EXPECT_TRUE(new_tmp_entries(after, after).empty());
}

TEST(TmpResidue, ParsesBoundPathsOfProcNetUnix) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 23456 /tmp/pymp-ab/listener-cd\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 23457\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 23458 @/tmp/.X11-unix/X0\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 23459 /tmp/dir with space/s\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 99999999999 /run/x.sock\n";
  auto s = parse_proc_net_unix(text);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].inode, 23456u);
  EXPECT_EQ(s[0].path, "/tmp/pymp-ab/listener-cd");
  EXPECT_EQ(s[1].path, "/tmp/dir with space/s");
  EXPECT_EQ(s[2].inode, 99999999999u);
  EXPECT_TRUE(parse_proc_net_unix("").empty());
  EXPECT_TRUE(parse_proc_net_unix("garbage\n\n").empty());
}

TEST(TmpResidue, HoldersByFdCwdAndBoundSocket) {
  TempDir d("aftermath-tmpres");
  FakeProc proc(d);
  const std::string tmp = d / "tmp";
  fs::create_directories(tmp + "/pymp-a");
  fs::create_directories(tmp + "/torch-shm-dir-b");
  fs::create_directories(tmp + "/torchelastic_c");
  fs::create_directories(tmp + "/pymp-d");
  fs::create_directories(tmp + "/pymp-e");
  fs::create_directories(tmp + "/torch-shm-dir-f/sub");
  proc.add(100, 1, "python3");
  proc.fd(100, 3, tmp + "/torchelastic_c/attempt_0/0/stdout.log");  // an open file under it
  proc.fd(100, 4, "socket:[777]");                                  // the manager's socket
  proc.fd(100, 5, tmp + "/pymp-e/old (deleted)");                   // unlinked: holds nothing
  proc.add(200, 1, "sh");
  fs::create_symlink(tmp + "/pymp-a", d / "proc/200/cwd");  // working in it
  // Another run's scan, an ls: its directories open, nothing held.
  proc.add(300, 1, "aftermath");
  proc.fd(300, 3, tmp + "/torch-shm-dir-f");
  proc.fd(300, 4, tmp + "/torch-shm-dir-f/sub");
  d.write("proc/net/unix",
          "Num       RefCount Protocol Flags    Type St Inode Path\n"
          "0000000000000000: 00000002 00000000 00010000 0001 01 777 " +
              tmp +
              "/torch-shm-dir-b/manager.sock\n"
              "0000000000000000: 00000002 00000000 00010000 0001 01 888 " +
              tmp + "/pymp-d/listener-x\n");  // bound, by a process this /proc does not show
  auto h = find_tmp_holders(
      proc.root(), tmp,
      {"pymp-a", "torch-shm-dir-b", "torchelastic_c", "pymp-d", "pymp-e", "torch-shm-dir-f"});
  EXPECT_EQ(h["pymp-a"].pids, std::vector<int>{200});
  EXPECT_EQ(h["torch-shm-dir-b"].pids, std::vector<int>{100});
  EXPECT_EQ(h["torch-shm-dir-b"].bound,
            std::vector<std::string>{tmp + "/torch-shm-dir-b/manager.sock"});
  EXPECT_EQ(h["torchelastic_c"].pids, std::vector<int>{100});
  EXPECT_TRUE(h["pymp-d"].pids.empty());
  EXPECT_TRUE(h["pymp-d"].held()) << "a bound socket holds it, holder named or not";
  EXPECT_FALSE(h.count("pymp-e"));
  EXPECT_FALSE(h.count("torch-shm-dir-f")) << "an open directory is a look, not a hold";
  // Only some processes looked at (a job's); the bound sockets still count.
  std::vector<int> only{200};
  auto j = find_tmp_holders(proc.root(), tmp, {"torch-shm-dir-b", "pymp-a"}, &only);
  EXPECT_TRUE(j["torch-shm-dir-b"].pids.empty());
  EXPECT_FALSE(j["torch-shm-dir-b"].bound.empty());
  EXPECT_EQ(j["pymp-a"].pids, std::vector<int>{200});
  EXPECT_TRUE(find_tmp_holders(proc.root(), tmp, {}).empty());
}

// For real: a child binds a listener in a planted pymp-* folder, as
// multiprocessing does; held while it lives, its maker provably gone after.
TEST(TmpResidue, ARealListenerHoldsItsFolderUntilItsProcessIsGone) {
  TempDir d("aftermath-tmpres");
  const std::string dir = d / "pymp-real";
  fs::create_directories(dir);
  const std::string sock = dir + "/listener-1";
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, sock.c_str(), sizeof a.sun_path - 1);
  int ready[2], life[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(life, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only: the test process may have threads.
    ::alarm(30);
    ::close(life[1]);  // else the lifeline never reads EOF
    ::close(ready[0]);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd, 1) != 0)
      ::_exit(2);
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(3);
    while (::read(life[0], &c, 1) < 0 && errno == EINTR) {
    }
    ::_exit(0);
  }
  OwnedChild child(pid);
  ::close(ready[1]);
  ::close(life[0]);
  ASSERT_GT(child.pid(), 0);
  char c;
  ASSERT_TRUE(readable_within(ready[0], 10000));
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);

  auto t = scan_tmp(d.path());
  ASSERT_TRUE(t);
  const TmpEntry& e = t->at("pymp-real");
  EXPECT_EQ(e.sockets, std::vector<std::string>{"listener-1"});
  auto held = find_tmp_holders("/proc", d.path(), {"pymp-real"});
  ASSERT_TRUE(held.count("pymp-real"));
  EXPECT_EQ(held["pymp-real"].pids, std::vector<int>{child.pid()});
  EXPECT_FALSE(tmp_maker_gone(e, &held["pymp-real"]));

  ::close(life[1]);  // the child exits; its socket is unbound, the file stays
  int status = 0;
  ASSERT_TRUE(child.exited_within(10000, &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // This process looking into it (the folder open, as a scan has it) holds
  // nothing either.
  int look = ::open((d.path() + "/pymp-real").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(look, 0);
  auto after = find_tmp_holders("/proc", d.path(), {"pymp-real"});
  ::close(look);
  EXPECT_FALSE(after.count("pymp-real"));
  EXPECT_TRUE(fs::exists(sock));
  EXPECT_TRUE(tmp_maker_gone(e, nullptr));
  // Without sockets in it nothing proves its maker gone.
  TmpEntry plain = e;
  plain.sockets.clear();
  EXPECT_FALSE(tmp_maker_gone(plain, nullptr));
}

TEST(TmpResidue, TheJobsTempDirIsTmpdirElseTmp) {
  EXPECT_EQ(job_tmp_dir(std::string("/scratch/t")), "/scratch/t");
  EXPECT_EQ(job_tmp_dir(std::string()), "/tmp");
  EXPECT_EQ(job_tmp_dir(std::nullopt), "/tmp");
}

}  // namespace
}  // namespace aftermath
