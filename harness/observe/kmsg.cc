#include "harness/observe/kmsg.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace aftermath {

std::optional<KmsgRecord> parse_kmsg_record(std::string_view text) {
  auto semi = text.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  std::string_view head = text.substr(0, semi);
  // prio,seq,usec,flags (more fields may follow in newer kernels)
  std::uint64_t f[3] = {0, 0, 0};
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    size_t comma = head.find(',', pos);
    std::string_view field =
        head.substr(pos, comma == std::string_view::npos ? head.size() - pos : comma - pos);
    auto [p, ec] = std::from_chars(field.data(), field.data() + field.size(), f[i]);
    if (ec != std::errc() || p != field.data() + field.size() || field.empty()) return std::nullopt;
    if (comma == std::string_view::npos) {
      if (i < 2) return std::nullopt;
      break;
    }
    pos = comma + 1;
  }
  KmsgRecord r;
  r.level = static_cast<int>(f[0] & 7);
  r.seq = f[1];
  r.usec = f[2];
  std::string_view msg = text.substr(semi + 1);
  r.message = std::string(msg.substr(0, msg.find('\n')));
  return r;
}

std::optional<std::string> oom_kill_message(const std::vector<KmsgRecord>& records, int pid) {
  const std::string needle = "Killed process " + std::to_string(pid) + " ";
  for (auto it = records.rbegin(); it != records.rend(); ++it)
    if (it->message.find(needle) != std::string::npos) return it->message;
  return std::nullopt;
}

std::string KmsgTail::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "cannot open " + path + ": " + std::strerror(errno);
  UniqueFd owned(fd);
  if (::lseek(fd, 0, SEEK_END) < 0)
    return "cannot seek to the end of " + path + ": " + std::strerror(errno);
  fd_ = std::move(owned);
  return {};
}

std::vector<KmsgRecord> KmsgTail::drain() {
  std::vector<KmsgRecord> out;
  if (!fd_) return out;
  char buf[8192];  // a record is at most about 1 KiB; one read returns one record
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n > 0) {
      if (auto r = parse_kmsg_record(std::string_view(buf, static_cast<size_t>(n))))
        out.push_back(std::move(*r));
      continue;
    }
    if (n < 0 && errno == EPIPE) continue;  // records were overwritten: go on from the oldest left
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN: nothing more for now
  }
  return out;
}

}  // namespace aftermath
