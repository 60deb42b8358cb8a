// The harness's points socket: abstract address, kernel-attested sender pids,
// replies to autobound senders, and the error paths.
#include "harness/supervise/event_socket.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>

#include "tests/support/children.h"

namespace aftermath {
namespace {

using ::testing::StartsWith;

// The socket address an "@name" string stands for.
socklen_t abstract_addr(const std::string& at_name, sockaddr_un* a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  std::memcpy(a->sun_path + 1, at_name.data() + 1, at_name.size() - 1);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + at_name.size());
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// A datagram client; `autobind` gives it an address replies can reach.
int client_socket(bool autobind) {
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && autobind) {
    sockaddr_un self{};
    self.sun_family = AF_UNIX;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&self), sizeof(sa_family_t)) != 0) {
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

bool send_to(int fd, const std::string& address, const std::string& text) {
  sockaddr_un a;
  socklen_t len = abstract_addr(address, &a);
  return ::sendto(fd, text.data(), text.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&a),
                  len) == static_cast<ssize_t>(text.size());
}

using testing_children::readable_within;
using testing_children::reap_within;

// The next message, waiting up to `timeout_ms` for one to be queued.
std::optional<EventSocket::Message> receive_within(EventSocket& s, int timeout_ms = 5000) {
  if (!readable_within(s.fd(), timeout_ms)) return std::nullopt;
  return s.receive();
}

TEST(EventSocketOpen, AbstractAddressNamedAfterUs) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  EXPECT_GE(s.fd(), 0);
  EXPECT_THAT(s.address(), StartsWith("@aftermath-" + std::to_string(::getpid()) + "-"));
  EventSocket t;
  ASSERT_TRUE(t.open());
  EXPECT_NE(s.address(), t.address());
  // Non-blocking and close-on-exec.
  EXPECT_TRUE(::fcntl(s.fd(), F_GETFL) & O_NONBLOCK);
  EXPECT_TRUE(::fcntl(s.fd(), F_GETFD) & FD_CLOEXEC);
}

TEST(EventSocketReceive, NothingQueued) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  EXPECT_FALSE(s.receive().has_value());
}

TEST(EventSocketReceive, TextAndOurPid) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(false));
  ASSERT_GE(c.get(), 0);
  ASSERT_TRUE(send_to(c.get(), s.address(), R"({"t":"event","name":"x"})"));
  auto m = receive_within(s);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text, R"({"t":"event","name":"x"})");
  EXPECT_EQ(m->pid, ::getpid());
  EXPECT_FALSE(s.receive().has_value());
}

TEST(EventSocketReceive, MessagesInOrder) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(false));
  ASSERT_GE(c.get(), 0);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(send_to(c.get(), s.address(), "m" + std::to_string(i)));
  for (int i = 0; i < 5; ++i) {
    auto m = receive_within(s);
    ASSERT_TRUE(m.has_value()) << i;
    EXPECT_EQ(m->text, "m" + std::to_string(i));
  }
  EXPECT_FALSE(s.receive().has_value());
}

TEST(EventSocketReceive, ForkedSenderPidIsTheChilds) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = client_socket(false);
    // The text claims another pid; the kernel's word is what counts.
    bool ok = fd >= 0 && send_to(fd, s.address(), "I am pid 1");
    ::_exit(ok ? 0 : 1);
  }
  auto m = receive_within(s);
  int status = reap_within(child, 5000);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text, "I am pid 1");
  EXPECT_EQ(m->pid, child);
  EXPECT_NE(m->pid, ::getpid());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(EventSocketReceive, InheritedSocketSendsWithTheSendersPid) {
  // A client socket made before fork (as a fixture's fire-and-forget socket
  // may be) carries the pid of whichever process sends on it.
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(false));
  ASSERT_GE(c.get(), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(send_to(c.get(), s.address(), "from child") ? 0 : 1);
  auto m = receive_within(s);
  int status = reap_within(child, 5000);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->pid, child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_TRUE(send_to(c.get(), s.address(), "from parent"));
  m = receive_within(s);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->text, "from parent");
  EXPECT_EQ(m->pid, ::getpid());
}

TEST(EventSocketReply, ReachesAnAutoboundClient) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(true));
  ASSERT_GE(c.get(), 0);
  ASSERT_TRUE(send_to(c.get(), s.address(), R"({"t":"point","name":"step","hit":1,"sync":1})"));
  auto m = receive_within(s);
  ASSERT_TRUE(m.has_value());
  EXPECT_GT(m->from_len, offsetof(sockaddr_un, sun_path));
  EXPECT_EQ(m->from.sun_path[0], '\0');  // an autobound (abstract) address
  EXPECT_TRUE(s.reply(*m, "continue"));
  ASSERT_TRUE(readable_within(c.get(), 5000));
  char buf[64];
  ssize_t n = ::recv(c.get(), buf, sizeof buf, MSG_DONTWAIT);
  ASSERT_EQ(n, 8);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "continue");
}

TEST(EventSocketReply, ToAForkedChildBlockedOnIt) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(out[0]);
    int fd = client_socket(true);
    if (fd < 0 || !send_to(fd, s.address(), "point")) ::_exit(1);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) != 1) ::_exit(2);
    char buf[64];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0 || ::write(out[1], buf, static_cast<size_t>(n)) != n) ::_exit(3);
    ::_exit(0);
  }
  ::close(out[1]);
  auto m = receive_within(s);
  if (m) {
    EXPECT_EQ(m->pid, child);
    EXPECT_TRUE(s.reply(*m, "delay 5"));
  }
  std::string got;
  if (readable_within(out[0], 5000)) {
    char buf[64];
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n > 0) got.assign(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = reap_within(child, 5000);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(got, "delay 5");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(EventSocketReply, ToAClosedClientIsAnError) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(true));
  ASSERT_GE(c.get(), 0);
  ASSERT_TRUE(send_to(c.get(), s.address(), "point"));
  auto m = receive_within(s);
  ASSERT_TRUE(m.has_value());
  c.reset();  // the sender died meanwhile
  Status replied = s.reply(*m, "continue");
  ASSERT_FALSE(replied);
  EXPECT_EQ(replied.error().errnum, ECONNREFUSED) << replied.error().what;
}

TEST(EventSocketReply, ToAnUnboundSenderIsAnError) {
  EventSocket s;
  ASSERT_TRUE(s.open());
  Fd c(client_socket(false));
  ASSERT_GE(c.get(), 0);
  ASSERT_TRUE(send_to(c.get(), s.address(), "event"));
  auto m = receive_within(s);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(s.reply(*m, "continue"));
  // A message never received has no sender at all.
  Status none = s.reply(EventSocket::Message{}, "continue");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().errnum, ENOTCONN);
}

TEST(EventSocketReceive, AnAddressNobodyIsBoundToRefusesAtOnce) {
  // What a fixture sees when the harness is gone: the send fails, it does not block.
  Fd c(client_socket(false));
  ASSERT_GE(c.get(), 0);
  std::string nobody = "@aftermath-test-nobody-" + std::to_string(::getpid());
  sockaddr_un a;
  socklen_t len = abstract_addr(nobody, &a);
  errno = 0;
  EXPECT_LT(::sendto(c.get(), "x", 1, MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&a), len), 0);
  EXPECT_EQ(errno, ECONNREFUSED);
}

}  // namespace
}  // namespace aftermath
