// The one clock: CLOCK_MONOTONIC in nanoseconds. Every timestamp in a
// timeline, a deadline or a report is read from here.
#pragma once

#include <cstdint>

namespace aftermath {

// Nanoseconds on CLOCK_MONOTONIC. In a timeline, relative to the run's start.
using Nanos = std::int64_t;

constexpr Nanos kMilli = 1'000'000;
constexpr Nanos kSecond = 1'000'000'000;

// Reads CLOCK_MONOTONIC. Async-signal-safe.
Nanos monotonic_now() noexcept;

}  // namespace aftermath
