#include "harness/inject/network_cut.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/os/find_program.h"
#include "harness/os/pidfd.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace {

constexpr Nanos kNftDeadline = 10 * kSecond;

std::string nft_path() {
  for (const char* path : {"/usr/sbin/nft", "/sbin/nft"})
    if (is_executable_file(path)) return path;
  return find_program("nft").value_or("");
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return trimmed(ss.str());
}

}  // namespace

NftNetworkCut::NftNetworkCut(std::string table, KeptPeer keep, std::string scratch_dir)
    : table_(std::move(table)), keep_(std::move(keep)), scratch_dir_(std::move(scratch_dir)) {}

NftNetworkCut::~NftNetworkCut() { end_holder(); }

std::string NftNetworkCut::ruleset() const {
  const std::string peer = keep_.address;
  const std::string port = std::to_string(keep_.port);
  return "table inet " + table_ + " { flags owner; " +
         "chain in { type filter hook input priority -10; policy accept; iif \"lo\" accept; ip "
         "saddr " +
         peer + " tcp sport " + port + " accept; drop; }; " +
         "chain out { type filter hook output priority -10; policy accept; oif \"lo\" accept; ip "
         "daddr " +
         peer + " tcp dport " + port + " accept; drop; }; }";
}

Status NftNetworkCut::cut() {
  if (is_cut()) return {};
  std::string nft = nft_path();
  if (nft.empty()) return Error{"nft is not installed (Debian package nftables)"};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return sys_error("pipe");
  UniqueFd read_end(fds[0]);
  to_holder_ = UniqueFd(fds[1]);
  std::string errors = scratch_dir_ + "/" + table_ + ".err";
  UniqueFd err(::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  SpawnOptions so;
  so.argv = {nft, "-i"};
  so.stdin_fd = read_end.get();
  so.stderr_fd = err ? err.get() : -1;
  so.die_with_parent = true;
  auto pid = spawn(so);
  if (!pid) {
    to_holder_ = UniqueFd();
    return Error{"cannot run nft: " + pid.error().what};
  }
  holder_ = *pid;
  (void)pidfd_open(holder_, holder_pidfd_);
  std::string line = ruleset() + "\n";
  if (::write(to_holder_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    end_holder();
    return sys_error("cannot write to nft");
  }
  // The table is in place once nft lists it (bounded polling: nft -i
  // answers nothing on success).
  Nanos deadline = monotonic_now() + kNftDeadline;
  while (monotonic_now() < deadline) {
    CommandOutcome listed = run_command({nft, "list", "table", "inet", table_}, kNftDeadline, 4096);
    if (listed.exited_zero()) return {};
    int status = 0;
    if (::waitpid(holder_, &status, WNOHANG) == holder_) {
      holder_ = -1;
      end_holder();
      return Error{"nft refused the cut: " + read_text(errors)};
    }
    pollfd none{-1, 0, 0};
    ::poll(&none, 0, 20);
  }
  end_holder();
  return Error{"nft did not make the cut within 10 s: " + read_text(errors)};
}

Status NftNetworkCut::heal() {
  if (!is_cut()) return {};
  end_holder();
  return {};
}

void NftNetworkCut::end_holder() {
  to_holder_ = UniqueFd();  // EOF: nft exits, and the kernel removes its table
  if (holder_ <= 0) return;
  Nanos deadline = monotonic_now() + kNftDeadline;
  int status = 0;
  while (::waitpid(holder_, &status, WNOHANG) == 0) {
    if (monotonic_now() >= deadline) {
      if (holder_pidfd_) (void)pidfd_signal(holder_pidfd_.get(), SIGKILL);
      ::waitpid(holder_, &status, 0);
      break;
    }
    pollfd p{holder_pidfd_ ? holder_pidfd_.get() : -1, POLLIN, 0};
    ::poll(&p, 1, 20);
  }
  holder_ = -1;
  holder_pidfd_ = UniqueFd();
  // nft's error output, kept only when it said something.
  std::error_code ec;
  std::string errors = scratch_dir_ + "/" + table_ + ".err";
  if (std::filesystem::exists(errors, ec) && std::filesystem::file_size(errors, ec) == 0)
    std::filesystem::remove(errors, ec);
}

}  // namespace aftermath
