// Running an event loop under test until a condition holds, with a deadline.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "harness/os/clock.h"

namespace aftermath::testing {

// Runs `ctx` in 50 ms slices until pred() holds or `bound` has passed;
// whether pred() holds at the end.
template <typename Pred>
bool run_loop_until(boost::asio::io_context& ctx, Pred pred, Nanos bound = 10 * kSecond) {
  Nanos until = monotonic_now() + bound;
  while (!pred() && monotonic_now() < until) {
    if (ctx.stopped()) ctx.restart();
    ctx.run_one_for(std::chrono::milliseconds(50));
  }
  return pred();
}

}  // namespace aftermath::testing
