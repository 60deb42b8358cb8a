#include "harness/inject/network_cut.h"

#include <fstream>

#include "harness/os/find_program.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace {

constexpr Nanos kNftDeadline = 10 * kSecond;

std::string nft_path() {
  for (const char* dir : {"/usr/sbin/nft", "/sbin/nft"})
    if (is_executable_file(dir)) return dir;
  return find_program("nft").value_or("");
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

NftNetworkCut::NftNetworkCut(std::string table, KeptPeer keep, std::string scratch_dir)
    : table_(std::move(table)), keep_(std::move(keep)), scratch_dir_(std::move(scratch_dir)) {}

NftNetworkCut::~NftNetworkCut() {
  if (cut_) (void)heal();
}

std::string NftNetworkCut::ruleset() const {
  const std::string peer = keep_.address;
  const std::string port = std::to_string(keep_.port);
  return "table inet " + table_ + " {\n"
         "  chain in {\n"
         "    type filter hook input priority -10; policy accept;\n"
         "    iif \"lo\" accept\n"
         "    ip saddr " + peer + " tcp sport " + port + " accept\n"
         "    drop\n"
         "  }\n"
         "  chain out {\n"
         "    type filter hook output priority -10; policy accept;\n"
         "    oif \"lo\" accept\n"
         "    ip daddr " + peer + " tcp dport " + port + " accept\n"
         "    drop\n"
         "  }\n"
         "}\n";
}

Status NftNetworkCut::nft(const std::vector<std::string>& args) {
  std::string path = nft_path();
  if (path.empty()) return Error{"nft is not installed (Debian package nftables)"};
  std::vector<std::string> argv{path};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOutcome out = run_command(argv, kNftDeadline, 16 * 1024);
  if (!out.started) return Error{"cannot run nft: " + trimmed(out.output)};
  if (out.timed_out) return Error{"nft did not answer within 10 s"};
  if (!out.exited_zero()) return Error{"nft " + args.front() + " failed: " + trimmed(out.output)};
  return {};
}

Status NftNetworkCut::cut() {
  if (cut_) return {};
  std::string file = scratch_dir_ + "/" + table_ + ".nft";
  {
    std::ofstream f(file);
    f << ruleset();
    if (!f) return Error{"cannot write " + file};
  }
  Status s = nft({"-f", file});
  std::remove(file.c_str());
  if (!s) return s;
  cut_ = true;
  return {};
}

Status NftNetworkCut::heal() {
  if (!cut_) return {};
  Status s = nft({"delete", "table", "inet", table_});
  if (s) cut_ = false;
  return s;
}

std::optional<std::string> network_cut_unavailable() {
  std::string path = nft_path();
  if (path.empty()) return "nft is not installed (Debian package nftables)";
  CommandOutcome out = run_command({path, "list", "tables"}, kNftDeadline, 16 * 1024);
  if (!out.exited_zero()) return "nft cannot list tables here: " + trimmed(out.output);
  return std::nullopt;
}

}  // namespace aftermath
