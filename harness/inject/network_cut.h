// Cutting a node's network, for the node faults of a multi-node run:
// node_loss (the node is gone: its peers must see silence, not the closed
// sockets of killed processes) and partition (cut for a while, then healed).
//
// The cut is an nftables table in the network namespace the agent runs in
// (on a real cluster, the node's; on the local test cluster, the node's
// namespace): every packet in or out is dropped but loopback and the agent's
// own connection to its coordinator, which keeps streaming what the node
// sees. heal() deletes the table; so does the destructor, so an agent that
// ends any way short of SIGKILL never leaves its node cut off.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

class NetworkCut {
 public:
  virtual ~NetworkCut() = default;
  // Drops the node's traffic (idempotent); why not, when it cannot.
  virtual Status cut() = 0;
  // Lets it through again (idempotent).
  virtual Status heal() = 0;
  virtual bool is_cut() const = 0;
};

// The connection that stays open through a cut.
struct KeptPeer {
  std::string address;  // the coordinator's IPv4 address
  int port = 0;         // its port
};

// nftables, through the `nft` command (found in PATH, /usr/sbin, /sbin).
class NftNetworkCut : public NetworkCut {
 public:
  // `table`: a name unique to this agent (a letter first; letters, digits, _).
  NftNetworkCut(std::string table, KeptPeer keep, std::string scratch_dir);
  ~NftNetworkCut() override;
  Status cut() override;
  Status heal() override;
  bool is_cut() const override { return cut_; }

  // The ruleset cut() loads (for tests and the report).
  std::string ruleset() const;

 private:
  Status nft(const std::vector<std::string>& args);
  std::string table_;
  KeptPeer keep_;
  std::string scratch_dir_;
  bool cut_ = false;
};

// Why this machine cannot cut a network namespace's traffic (no nft binary,
// not allowed); nullopt when it can. Asks nft to list its tables.
std::optional<std::string> network_cut_unavailable();

}  // namespace aftermath
