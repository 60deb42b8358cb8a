// Cutting a node's network, for the node faults of a multi-node run:
// node_loss (the node is gone: its peers must see silence, not the closed
// sockets of killed processes) and partition (cut for a while, then healed).
//
// The cut is an nftables table in the network namespace the agent runs in
// (on a real cluster, the node's; on the local test cluster, the node's
// namespace): every packet in or out is dropped but loopback and the agent's
// own connection to its coordinator, which keeps streaming what the node
// sees. The table is made with nftables' `owner` flag by an `nft -i` that
// the agent keeps running, its input a pipe from the agent: the kernel
// removes an owned table when its owner's socket closes, so the cut ends
// when heal() closes the pipe, and also when the agent dies any way at all
// (SIGKILL included: the pipe closes, nft reads its end and exits, or dies
// with its parent). A node is never left cut off.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/os/expected.h"
#include "harness/os/unique_fd.h"

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

// nftables, through the `nft` command (found in /usr/sbin, /sbin, PATH).
class NftNetworkCut : public NetworkCut {
 public:
  // `table`: a name unique to this agent (a letter first; letters, digits,
  // _); `scratch_dir`: where nft's error output goes.
  NftNetworkCut(std::string table, KeptPeer keep, std::string scratch_dir);
  ~NftNetworkCut() override;
  NftNetworkCut(const NftNetworkCut&) = delete;
  NftNetworkCut& operator=(const NftNetworkCut&) = delete;
  Status cut() override;
  Status heal() override;
  bool is_cut() const override { return holder_ > 0; }

  // The one line cut() gives `nft -i` (for tests and the report).
  std::string ruleset() const;

 private:
  void end_holder();
  std::string table_;
  KeptPeer keep_;
  std::string scratch_dir_;
  pid_t holder_ = -1;  // the `nft -i` that owns the table
  UniqueFd holder_pidfd_;
  UniqueFd to_holder_;  // its stdin
};

}  // namespace aftermath
