#include "harness/cluster/link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "harness/core/types.h"

namespace aftermath {

namespace {

// The largest message a peer may send: a run's facts with job output.
constexpr size_t kMaxLine = 64 << 20;

int ms_left(Nanos deadline) {
  Nanos left = deadline - monotonic_now();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<Nanos>(left / kMilli + 1, 60 * 1000));
}

Expected<sockaddr_in> resolve(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1) return a;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) return Error{"cannot resolve '" + host + "': " + ::gai_strerror(rc)};
  a.sin_addr = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

std::string address_of(const sockaddr_in& a) {
  char buf[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof buf);
  return buf;
}

}  // namespace

Status Link::send(const nlohmann::json& message, Nanos timeout) {
  if (!fd_) return Error{"the connection is closed"};
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  Nanos deadline = monotonic_now() + timeout;
  size_t off = 0;
  while (off < line.size()) {
    ssize_t n =
        ::send(fd_.get(), line.data() + off, line.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return sys_error("send");
    pollfd p{fd_.get(), POLLOUT, 0};
    int ms = ms_left(deadline);
    if (ms == 0) return Error{"the peer took nothing for " + format_duration(timeout)};
    ::poll(&p, 1, ms);
  }
  return {};
}

bool Link::read_available(std::vector<nlohmann::json>& out) {
  for (auto& q : queued_) out.push_back(std::move(q));
  queued_.clear();
  if (!fd_) return false;
  char buf[65536];
  bool open = true;
  for (;;) {
    ssize_t n = ::recv(fd_.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      in_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    open = false;  // closed, or failed
    break;
  }
  size_t start = 0;
  for (size_t nl; (nl = in_.find('\n', start)) != std::string::npos; start = nl + 1) {
    auto j = nlohmann::json::parse(in_.begin() + static_cast<long>(start),
                                   in_.begin() + static_cast<long>(nl), nullptr,
                                   /*allow_exceptions=*/false);
    if (!j.is_discarded()) out.push_back(std::move(j));
  }
  in_.erase(0, start);
  if (in_.size() > kMaxLine) open = false;
  if (!open) fd_ = UniqueFd();
  return open;
}

Expected<nlohmann::json> Link::receive(Nanos timeout) {
  Nanos deadline = monotonic_now() + timeout;
  for (;;) {
    std::vector<nlohmann::json> got;
    bool open = read_available(got);
    if (!got.empty()) {
      nlohmann::json first = std::move(got.front());
      queued_.assign(std::make_move_iterator(got.begin() + 1), std::make_move_iterator(got.end()));
      return first;
    }
    if (!open) return Error{"the connection closed"};
    int ms = ms_left(deadline);
    if (ms == 0) return Error{"no message within " + format_duration(timeout)};
    pollfd p{fd_.get(), POLLIN, 0};
    ::poll(&p, 1, ms);
  }
}

Expected<UniqueFd> listen_tcp(const std::string& address, int* port) {
  auto a = resolve(address, 0);
  if (!a) return a.error();
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return sys_error("socket");
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a) != 0)
    return sys_error("cannot listen on " + address);
  if (::listen(fd.get(), 128) != 0) return sys_error("listen");
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  *port = ntohs(bound.sin_port);
  return fd;
}

Expected<UniqueFd> accept_tcp(int listener, Nanos timeout) {
  Nanos deadline = monotonic_now() + timeout;
  for (;;) {
    pollfd p{listener, POLLIN, 0};
    int ms = ms_left(deadline);
    if (ms == 0) return Error{"no connection within " + format_duration(timeout)};
    if (::poll(&p, 1, ms) <= 0) continue;
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return UniqueFd(fd);
    }
    if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) return sys_error("accept");
  }
}

Expected<UniqueFd> connect_tcp(const std::string& host, int port, Nanos timeout) {
  auto a = resolve(host, port);
  if (!a) return a.error();
  Nanos deadline = monotonic_now() + timeout;
  std::string last = "no attempt";
  while (monotonic_now() < deadline) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return sys_error("socket");
    int rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&*a), sizeof *a);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd.get(), POLLOUT, 0};
      ::poll(&p, 1, std::max(1, ms_left(deadline)));
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      rc = (p.revents & POLLOUT) && err == 0 ? 0 : -1;
      errno = err ? err : ETIMEDOUT;
    }
    if (rc == 0) {
      int flags = ::fcntl(fd.get(), F_GETFL);
      ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      int one = 1;
      ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    last = std::strerror(errno);
    // Refused: the coordinator is not listening yet; try again shortly.
    pollfd none{-1, 0, 0};
    ::poll(&none, 0, std::min(100, std::max(1, ms_left(deadline))));
  }
  return Error{"cannot connect to " + host + ":" + std::to_string(port) + " within " +
               format_duration(timeout) + ": " + last};
}

Expected<std::string> resolve_ipv4(const std::string& host) {
  auto a = resolve(host, 0);
  if (!a) return a.error();
  return address_of(*a);
}

std::string local_address(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return address_of(a);
}

std::string peer_address(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return "";
  return address_of(a);
}

}  // namespace aftermath
