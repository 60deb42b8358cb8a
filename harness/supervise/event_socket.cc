#include "harness/supervise/event_socket.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

namespace aftermath {

Status EventSocket::open() {
  static std::atomic<int> counter{0};
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return sys_error("cannot open the event socket");
  fd_ = UniqueFd(fd);
  int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0)
    return sys_error("cannot open the event socket: SO_PASSCRED");
  // Room for bursts of events from many workers.
  int buf = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  std::string name = "aftermath-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.data(), name.size());
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0)
    return sys_error("cannot open the event socket: bind @" + name);
  address_ = "@" + name;
  return {};
}

std::optional<EventSocket::Message> EventSocket::receive() {
  char data[8192];
  char control[CMSG_SPACE(sizeof(ucred))];
  Message m;
  iovec iov{data, sizeof data};
  msghdr h{};
  h.msg_name = &m.from;
  h.msg_namelen = sizeof m.from;
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  h.msg_control = control;
  h.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(fd_.get(), &h, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0) return std::nullopt;
  m.from_len = h.msg_namelen;
  m.text.assign(data, static_cast<size_t>(n));
  for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
      ucred cr;
      std::memcpy(&cr, CMSG_DATA(c), sizeof cr);
      m.pid = cr.pid;
    }
  }
  return m;
}

Status EventSocket::reply(const Message& to, std::string_view text) {
  if (to.from_len <= offsetof(sockaddr_un, sun_path))
    return sys_error("cannot reply: the message has no sender address", ENOTCONN);
  ssize_t n = ::sendto(fd_.get(), text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr*>(&to.from), to.from_len);
  if (n < 0) return sys_error("cannot reply to " + std::to_string(to.pid));
  return {};
}

}  // namespace aftermath
