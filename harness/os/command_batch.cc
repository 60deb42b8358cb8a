#include "harness/os/command_batch.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>

namespace aftermath {

namespace {

struct Running {
  size_t index;
  StartedCommand cmd;
  Nanos started;
  Nanos deadline;
};

}  // namespace

std::vector<BatchedCommand> run_commands(const std::vector<std::vector<std::string>>& argvs,
                                         const CommandBatchOptions& o) {
  std::vector<BatchedCommand> out(argvs.size());
  const size_t parallel = static_cast<size_t>(std::max(1, o.parallel));
  const Nanos end = monotonic_now() + o.total;
  std::vector<Running> running;
  size_t next = 0;
  auto finish = [&](Running& r, bool kill) {
    BatchedCommand& b = out[r.index];
    b.outcome = finish_command(r.cmd, kill, o.max_output);
    b.took = monotonic_now() - r.started;
  };
  for (;;) {
    // Fill the free slots, in order.
    while (running.size() < parallel && next < argvs.size()) {
      Nanos now = monotonic_now();
      Nanos left = end - now;
      if (left <= 0 || left < o.min_start) {
        for (; next < argvs.size(); ++next)
          out[next].outcome.output = "not started: the time budget ran out";
        break;
      }
      BatchedCommand& b = out[next];
      b.ran = true;
      auto started = start_command(argvs[next]);
      if (!started) {
        b.outcome.output = started.error().what;
        ++next;
        continue;
      }
      Running r{next++, *started, now, now + std::min(o.per_command, left)};
      if (r.cmd.pidfd < 0) {  // no way to wait with a deadline: do not wait at all
        finish(r, true);
        continue;
      }
      running.push_back(r);
    }
    if (running.empty()) break;
    Nanos now = monotonic_now();
    Nanos first_deadline = running.front().deadline;
    for (const auto& r : running) first_deadline = std::min(first_deadline, r.deadline);
    Nanos slice = std::max<Nanos>(0, first_deadline - now);
    if (o.while_waiting) slice = std::min<Nanos>(slice, 50 * kMilli);
    std::vector<pollfd> fds;
    for (const auto& r : running) fds.push_back(pollfd{r.cmd.pidfd, POLLIN, 0});
    int n = ::poll(fds.data(), fds.size(), static_cast<int>((slice + kMilli - 1) / kMilli));
    if (n < 0 && errno != EINTR) {
      // Cannot wait any more: end them all now, start no more.
      for (auto& r : running) finish(r, true);
      for (; next < argvs.size(); ++next)
        out[next].outcome.output = "not started: cannot wait for commands";
      break;
    }
    now = monotonic_now();
    std::vector<Running> still;
    for (size_t i = 0; i < running.size(); ++i) {
      bool exited = n > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      if (exited)
        finish(running[i], false);
      else if (now >= running[i].deadline)
        finish(running[i], true);
      else
        still.push_back(running[i]);
    }
    running = std::move(still);
    if (o.while_waiting) o.while_waiting();
  }
  return out;
}

}  // namespace aftermath
