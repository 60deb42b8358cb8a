// The units the tests write times and sizes in: one definition for every
// test file (the test binaries are unity builds: a file's helpers share a
// translation unit with its neighbours').
#pragma once

#include <cstdint>

#include "harness/os/clock.h"

namespace aftermath::testing_units {

constexpr Nanos msec(std::int64_t n) { return n * kMilli; }

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

}  // namespace aftermath::testing_units
