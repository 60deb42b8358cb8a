// Unit tests for the owned file descriptor (harness/os/unique_fd): closed
// exactly once, by whichever owner holds it last; close() reports the error
// the destructor swallows.
#include "harness/os/unique_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

namespace aftermath {
namespace {

// Whether fd names an open descriptor of this process.
bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// A fresh descriptor: the read end of a pipe whose write end is closed.
int fresh_fd() {
  int p[2];
  if (::pipe(p) != 0) return -1;
  ::close(p[1]);
  return p[0];
}

TEST(UniqueFd, EmptyByDefault) {
  UniqueFd fd;
  EXPECT_EQ(fd.get(), -1);
  EXPECT_FALSE(fd);
  EXPECT_TRUE(fd.close());  // nothing to close is no error
}

TEST(UniqueFd, ClosesWhatItOwnsWhenItGoes) {
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_TRUE(fd);
    EXPECT_EQ(fd.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, ReleaseHandsOwnershipBack) {
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_EQ(fd.release(), raw);
    EXPECT_FALSE(fd);
    EXPECT_EQ(fd.release(), -1);
  }
  EXPECT_TRUE(is_open(raw));
  ::close(raw);
}

TEST(UniqueFd, MoveConstructionLeavesTheSourceEmptyAndClosesOnce) {
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  {
    UniqueFd a(raw);
    UniqueFd b(std::move(a));
    EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
    EXPECT_EQ(b.get(), raw);
    {
      UniqueFd gone(std::move(a));
    }  // destroying an emptied owner closes nothing
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, MoveAssignmentClosesWhatTheTargetHeld) {
  int first = fresh_fd();
  int second = fresh_fd();
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  UniqueFd a(first);
  UniqueFd b(second);
  a = std::move(b);
  EXPECT_FALSE(is_open(first));
  EXPECT_TRUE(is_open(second));
  EXPECT_EQ(a.get(), second);
  EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move)
}

TEST(UniqueFd, SelfMoveAssignmentKeepsTheDescriptor) {
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  UniqueFd a(raw);
  UniqueFd& alias = a;
  a = std::move(alias);
  EXPECT_EQ(a.get(), raw);
  EXPECT_TRUE(is_open(raw));
}

TEST(UniqueFd, CloseClosesNowAndOnlyOnce) {
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  EXPECT_TRUE(fd.close());
  EXPECT_FALSE(is_open(raw));
  EXPECT_FALSE(fd);
  // The number is free again: the next descriptor may take it, and neither a
  // second close() nor the destructor may close that one.
  int next = fresh_fd();
  ASSERT_GE(next, 0);
  EXPECT_TRUE(fd.close());
  {
    UniqueFd gone(std::move(fd));
  }
  EXPECT_TRUE(is_open(next));
  ::close(next);
}

TEST(UniqueFd, CloseReportsTheErrorTheKernelGave) {
  // A descriptor closed behind the owner's back: close() says EBADF.
  int raw = fresh_fd();
  ASSERT_GE(raw, 0);
  UniqueFd fd(raw);
  ::close(raw);
  Status closed = fd.close();
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error().errnum, EBADF) << closed.error().what;
  EXPECT_FALSE(fd);  // given up either way: it is not closed a second time

  UniqueFd bogus(1 << 30);  // no such descriptor
  closed = bogus.close();
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error().errnum, EBADF);
}

}  // namespace
}  // namespace aftermath
