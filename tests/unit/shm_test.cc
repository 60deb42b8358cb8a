// Unit tests for harness/observe/shm: scan_shm on a scratch directory standing
// in for /dev/shm, and the pure diff_shm.
#include "harness/observe/shm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace aftermath {
namespace {

namespace fs = std::filesystem;

class ScanShm : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aftermath_shm_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  void write(const std::string& rel, size_t bytes) {
    std::ofstream(fs::path(dir_) / rel, std::ios::binary) << std::string(bytes, 'x');
  }
  std::string dir_;
};

TEST_F(ScanShm, FilesWithSizes) {
  write("psm_abc", 100);
  write("nccl-shm-1", 8192);
  write("empty", 0);
  auto t = scan_shm(dir_);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at("psm_abc").name, "psm_abc");
  EXPECT_EQ(t.at("psm_abc").bytes, 100);
  EXPECT_EQ(t.at("nccl-shm-1").bytes, 8192);
  EXPECT_GT(t.at("nccl-shm-1").allocated, 0);
  EXPECT_EQ(t.at("empty").bytes, 0);
  EXPECT_EQ(t.at("empty").allocated, 0);
  EXPECT_EQ(t.at("psm_abc").uid, static_cast<unsigned>(getuid()));
  EXPECT_GT(t.at("psm_abc").mtime_ns, 0);
}

TEST_F(ScanShm, SparseFileReportsItsSizeNotItsBlocks) {
  int fd = ::open((dir_ + "/sparse").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  ::close(fd);
  auto t = scan_shm(dir_);
  ASSERT_EQ(t.count("sparse"), 1u);
  EXPECT_EQ(t.at("sparse").bytes, 1 << 20);
  EXPECT_LT(t.at("sparse").allocated, 1 << 20);
}

TEST_F(ScanShm, SubdirectoryListedByNameWithZeroBytes) {
  fs::create_directory(fs::path(dir_) / "torch-shm-dir-1234");
  write("torch-shm-dir-1234/inner", 4096);  // not listed on its own
  write("top", 10);
  auto t = scan_shm(dir_);
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(t.count("torch-shm-dir-1234"), 1u);
  EXPECT_EQ(t.at("torch-shm-dir-1234").bytes, 0);
  EXPECT_EQ(t.at("torch-shm-dir-1234").allocated, 0);
  EXPECT_EQ(t.count("inner"), 0u);
  EXPECT_EQ(t.at("top").bytes, 10);
}

TEST_F(ScanShm, FifoIsListed) {
  ASSERT_EQ(::mkfifo((dir_ + "/sem.fifo").c_str(), 0600), 0);
  auto t = scan_shm(dir_);
  ASSERT_EQ(t.count("sem.fifo"), 1u);
  EXPECT_EQ(t.at("sem.fifo").bytes, 0);
}

TEST_F(ScanShm, EmptyAndMissingDirectory) {
  EXPECT_TRUE(scan_shm(dir_).empty());
  EXPECT_TRUE(scan_shm(dir_ + "/nope").empty());
}

TEST_F(ScanShm, ScanThenDiffSeesTheJobsChanges) {
  write("baseline", 10);
  write("gone", 20);
  auto before = scan_shm(dir_);
  fs::remove(fs::path(dir_) / "gone");
  write("baseline", 30);
  write("new", 40);
  auto d = diff_shm(before, scan_shm(dir_));
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].name, "new");
  EXPECT_EQ(d.added[0].bytes, 40);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].name, "gone");
  ASSERT_EQ(d.resized.size(), 1u);
  EXPECT_EQ(d.resized[0].name, "baseline");
  EXPECT_EQ(d.resized[0].bytes, 30);
}

// ---------------------------------------------------------------- diff_shm

ShmEntry entry(const std::string& name, std::int64_t bytes, std::int64_t allocated = 0) {
  ShmEntry e;
  e.name = name;
  e.bytes = bytes;
  e.allocated = allocated;
  return e;
}

ShmTable table_of(const std::vector<ShmEntry>& entries) {
  ShmTable t;
  for (const auto& e : entries) t[e.name] = e;
  return t;
}

std::vector<std::string> names(const std::vector<ShmEntry>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.name);
  return out;
}

TEST(DiffShm, AddedRemovedResizedUnchanged) {
  auto before = table_of({entry("a", 10), entry("b", 20), entry("c", 30), entry("e", 50)});
  auto after = table_of({entry("b", 20), entry("c", 35), entry("d", 40), entry("e", 50)});
  auto d = diff_shm(before, after);
  EXPECT_EQ(names(d.added), std::vector<std::string>{"d"});
  EXPECT_EQ(d.added[0].bytes, 40);
  EXPECT_EQ(names(d.removed), std::vector<std::string>{"a"});
  EXPECT_EQ(d.removed[0].bytes, 10);  // the entry as it was
  EXPECT_EQ(names(d.resized), std::vector<std::string>{"c"});
  EXPECT_EQ(d.resized[0].bytes, 35);  // the new entry
}

TEST(DiffShm, IdenticalTablesHaveNoDifference) {
  auto t = table_of({entry("a", 1), entry("b", 2)});
  auto d = diff_shm(t, t);
  EXPECT_TRUE(d.added.empty());
  EXPECT_TRUE(d.removed.empty());
  EXPECT_TRUE(d.resized.empty());
}

TEST_F(ScanShm, StatOneEntryAsTheScanListsIt) {
  write("psm_abc", 100);
  auto e = stat_shm(dir_, "psm_abc");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->bytes, 100);
  EXPECT_EQ(e->bytes, scan_shm(dir_).at("psm_abc").bytes);
  EXPECT_EQ(stat_shm(dir_, "absent"), std::nullopt);
  EXPECT_EQ(stat_shm(dir_, "../etc"), std::nullopt);  // names only, never paths
}

TEST_F(ScanShm, WatchReportsChangedNamesAndNothingWhenIdle) {
  ShmWatch w;
  ASSERT_TRUE(w.watch(dir_)) << "inotify unavailable";
  std::set<std::string> changed;
  ASSERT_TRUE(w.poll(&changed));
  EXPECT_TRUE(changed.empty());
  write("torch_1_0", 10);  // created
  int fd = ::open((dir_ + "/nccl-shm-1").c_str(), O_CREAT | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(w.poll(&changed));
  EXPECT_EQ(changed, (std::set<std::string>{"nccl-shm-1", "torch_1_0"}));
  changed.clear();
  ASSERT_EQ(::ftruncate(fd, 8192), 0);  // resized
  ::close(fd);
  fs::rename(fs::path(dir_) / "torch_1_0", fs::path(dir_) / "torch_1_1");
  ASSERT_TRUE(w.poll(&changed));
  EXPECT_EQ(changed, (std::set<std::string>{"nccl-shm-1", "torch_1_0", "torch_1_1"}));
  changed.clear();
  fs::remove(fs::path(dir_) / "nccl-shm-1");
  ASSERT_TRUE(w.poll(&changed));
  EXPECT_EQ(changed, (std::set<std::string>{"nccl-shm-1"}));
  changed.clear();
  ASSERT_TRUE(w.poll(&changed));
  EXPECT_TRUE(changed.empty());
  // The directory itself goes: from now on the caller must scan.
  fs::remove_all(dir_);
  EXPECT_FALSE(w.poll(&changed));
  EXPECT_FALSE(w.active());
  EXPECT_FALSE(w.poll(&changed));
}

TEST_F(ScanShm, WatchOfAMissingDirectoryAsksForScans) {
  ShmWatch w;
  EXPECT_FALSE(w.watch(dir_ + "/absent"));
  std::set<std::string> changed;
  EXPECT_FALSE(w.poll(&changed));
}

TEST(DiffShm, OnlyAllocationChangedIsNotAResize) {
  auto d = diff_shm(table_of({entry("a", 4096, 0)}), table_of({entry("a", 4096, 4096)}));
  EXPECT_TRUE(d.resized.empty());
}

TEST(DiffShm, FromAndToEmpty) {
  auto t = table_of({entry("x", 1), entry("y", 2), entry("z", 3)});
  auto up = diff_shm({}, t);
  EXPECT_EQ(names(up.added), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_TRUE(up.removed.empty());
  auto down = diff_shm(t, {});
  EXPECT_EQ(names(down.removed), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_TRUE(down.added.empty());
  auto none = diff_shm({}, {});
  EXPECT_TRUE(none.added.empty() && none.removed.empty() && none.resized.empty());
}

TEST(DiffShm, InterleavedNamesAndTails) {
  // Removals and additions on both ends of the sorted order.
  auto before = table_of({entry("a", 1), entry("c", 3), entry("e", 5), entry("g", 7)});
  auto after = table_of({entry("b", 2), entry("c", 4), entry("f", 6), entry("h", 8)});
  auto d = diff_shm(before, after);
  EXPECT_EQ(names(d.added), (std::vector<std::string>{"b", "f", "h"}));
  EXPECT_EQ(names(d.removed), (std::vector<std::string>{"a", "e", "g"}));
  EXPECT_EQ(names(d.resized), std::vector<std::string>{"c"});
}

}  // namespace
}  // namespace aftermath
