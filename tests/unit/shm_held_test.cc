// Shared memory a process still maps or holds (harness/observe/shm_held.h):
// the maps parser on planted text, and the real reader on this process with a
// planted unlinked /dev/shm mapping and a memfd.
#include "harness/observe/shm_held.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

namespace aftermath {
namespace {

TEST(ShmHeld, MapsLinesOfSharedMemory) {
  std::string maps =
      "7f0000000000-7f0000010000 rw-s 00000000 00:1a 123 /dev/shm/torch_9_2_0 (deleted)\n"
      "7f0000010000-7f0000011000 rw-s 00000000 00:1a 124 /dev/shm/psm_a\n"
      "7f0000011000-7f0000012000 rw-s 00001000 00:1a 124 /dev/shm/psm_a\n"
      "7f0000020000-7f0000021000 rw-s 00000000 00:01 9 /memfd:cache (deleted)\n"
      "7f0000030000-7f0000031000 r-xp 00000000 08:01 7 /usr/lib/libc.so.6\n";
  auto held = parse_maps_shm(maps);
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(held[0].path, "/dev/shm/torch_9_2_0");
  EXPECT_TRUE(held[0].deleted);
  EXPECT_EQ(held[0].bytes, 0x10000);
  EXPECT_EQ(held[1].path, "/dev/shm/psm_a");
  EXPECT_FALSE(held[1].deleted);
  EXPECT_EQ(held[1].bytes, 0x2000);  // two mappings of one file
  EXPECT_TRUE(held[2].memfd);
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

TEST(ShmHeld, ThisProcessHoldsAnUnlinkedSegmentAndAMemfd) {
  std::string name = "/dev/shm/aftermath-test-held-" + std::to_string(::getpid());
  int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 16), 0);
  void* p = ::mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  ::unlink(name.c_str());  // what PyTorch's file_descriptor strategy does at once
  int mfd = ::memfd_create("aftermath-test", MFD_CLOEXEC);
  ASSERT_GE(mfd, 0);
  ASSERT_EQ(::ftruncate(mfd, 4096), 0);
  auto held = shm_held_by("/proc", ::getpid());
  const HeldShm* seg = nullptr;
  const HeldShm* mem = nullptr;
  for (const auto& h : held) {
    if (h.path == name) seg = &h;
    if (h.path == "/memfd:aftermath-test") mem = &h;
  }
  ASSERT_NE(seg, nullptr);
  EXPECT_TRUE(seg->deleted);
  EXPECT_TRUE(seg->mapped);
  EXPECT_TRUE(seg->open);
  EXPECT_EQ(seg->bytes, 1 << 16);
  ASSERT_NE(mem, nullptr);
  EXPECT_TRUE(mem->memfd);
  EXPECT_TRUE(mem->open);
  EXPECT_EQ(mem->bytes, 4096);
  ::munmap(p, 1 << 16);
  ::close(fd);
  ::close(mfd);
  // Released: nothing of it is held any more.
  for (const auto& h : shm_held_by("/proc", ::getpid())) EXPECT_NE(h.path, name);
}

}  // namespace
}  // namespace aftermath
