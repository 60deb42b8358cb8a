#include "harness/os/clock.h"

#include <time.h>

namespace aftermath {

Nanos monotonic_now() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos(ts.tv_sec) * kSecond + ts.tv_nsec;
}

}  // namespace aftermath
