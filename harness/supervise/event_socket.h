// The harness's end of the points protocol: an abstract-namespace Unix
// datagram socket. The kernel attaches each sender's credentials
// (SO_PASSCRED), so the pid of a message is the kernel's word, translated to
// our PID namespace, not the sender's claim.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <optional>
#include <string>
#include <string_view>

#include "harness/os/pidfd.h"

namespace aftermath {

class EventSocket {
 public:
  struct Message {
    int pid = 0;  // the sender, in our PID namespace
    std::string text;
    sockaddr_un from{};
    socklen_t from_len = 0;
  };

  // Binds "@aftermath-<our pid>-<n>", non-blocking, close-on-exec.
  Status open();
  // For AFTERMATH_EVENTS: "@" + the abstract name.
  const std::string& address() const { return address_; }
  int fd() const { return fd_.get(); }
  // Next queued message, or nullopt when none is queued.
  std::optional<Message> receive();
  // Answers a sender (a blocking point call). Errors are returned (ENOTCONN
  // for a message with no sender address): a sender that died meanwhile is
  // not a problem of ours.
  Status reply(const Message& to, std::string_view text);

 private:
  UniqueFd fd_;
  std::string address_;
};

}  // namespace aftermath
