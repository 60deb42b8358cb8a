// The connection between a multi-node run's coordinator and one of its
// agents: TCP, one JSON message per line, the agent connecting to the
// coordinator. Every wait has a deadline; nothing here throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/os/clock.h"
#include "harness/os/expected.h"
#include "harness/os/unique_fd.h"

namespace aftermath {

class Link {
 public:
  Link() = default;
  explicit Link(UniqueFd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }
  bool open() const { return static_cast<bool>(fd_); }

  // Writes one message (one line), waiting at most `timeout` for the peer to
  // take it.
  Status send(const nlohmann::json& message, Nanos timeout = 10 * kSecond);
  // Reads what has arrived without waiting; complete messages are appended to
  // `out`. False once the peer has closed (or the connection failed), after
  // the last complete messages are appended.
  bool read_available(std::vector<nlohmann::json>& out);
  // Waits at most `timeout` for the next message.
  Expected<nlohmann::json> receive(Nanos timeout);
  void close() { fd_ = UniqueFd(); }

 private:
  UniqueFd fd_;
  std::string in_;                      // bytes of an incomplete line
  std::vector<nlohmann::json> queued_;  // read ahead by receive()
};

// A listening socket on `address` (IPv4 dotted or a host name), port 0: the
// kernel picks one, written to *port.
Expected<UniqueFd> listen_tcp(const std::string& address, int* port);
// The next connection on `listener`, waiting at most `timeout`.
Expected<UniqueFd> accept_tcp(int listener, Nanos timeout);
// A connection to host:port, trying for at most `timeout`.
Expected<UniqueFd> connect_tcp(const std::string& host, int port, Nanos timeout);
// The IPv4 address `host` resolves to (a dotted address is its own).
Expected<std::string> resolve_ipv4(const std::string& host);
// The local and peer IPv4 addresses of a connected socket ("" when unknown).
std::string local_address(int fd);
std::string peer_address(int fd);

}  // namespace aftermath
