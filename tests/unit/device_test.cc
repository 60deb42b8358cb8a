// Unit tests for the device value types' words and numbers
// (harness/core/device): the probe status names both ways, byte counts for
// people, and the byte sizes scenarios may write.
#include "harness/core/device.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "tests/support/units.h"

namespace aftermath {
namespace {

using testing_units::kGiB;
using testing_units::kKiB;
using testing_units::kMiB;
constexpr std::int64_t kTiB = 1024 * kGiB;

TEST(ProbeStatusNames, EveryStatusHasANameThatParsesBack) {
  for (auto s : {ProbeStatus::Ok, ProbeStatus::Failed, ProbeStatus::TimedOut,
                 ProbeStatus::Unavailable, ProbeStatus::Error}) {
    auto back = parse_probe_status(to_string(s));
    ASSERT_TRUE(back.has_value()) << to_string(s);
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(to_string(ProbeStatus::TimedOut), "timed_out");
  EXPECT_EQ(to_string(ProbeStatus::Ok), "ok");
}

TEST(ProbeStatusNames, AnUnknownNameIsNotGuessed) {
  EXPECT_EQ(parse_probe_status(""), std::nullopt);
  EXPECT_EQ(parse_probe_status("OK"), std::nullopt);  // names are exact
  EXPECT_EQ(parse_probe_status("timed out"), std::nullopt);
  EXPECT_EQ(parse_probe_status("ok "), std::nullopt);
}

TEST(FormatBytes, BytesBelowAKibibyteAreCountedExactly) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(17), "17 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
}

TEST(FormatBytes, OneDecimalBelowTenThenWholeUnits) {
  EXPECT_EQ(format_bytes(kKiB), "1.0 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(12 * kKiB), "12 KiB");
  EXPECT_EQ(format_bytes(512 * kMiB), "512 MiB");
  EXPECT_EQ(format_bytes(kGiB + kGiB / 2), "1.5 GiB");
  EXPECT_EQ(format_bytes(3 * kTiB), "3.0 TiB");
}

TEST(FormatBytes, TebibytesAreTheLargestUnit) { EXPECT_EQ(format_bytes(2048 * kTiB), "2048 TiB"); }

TEST(FormatBytes, ANegativeCountIsUnknown) {
  EXPECT_EQ(format_bytes(-1), "?");  // NVML's "not available", stored as -1
}

TEST(ParseBytes, BinaryAndDecimalUnits) {
  EXPECT_EQ(parse_bytes("64MiB"), 64 * kMiB);
  EXPECT_EQ(parse_bytes("1.5GiB"), kGiB + kGiB / 2);
  EXPECT_EQ(parse_bytes("2KiB"), 2 * kKiB);
  EXPECT_EQ(parse_bytes("1TiB"), kTiB);
  EXPECT_EQ(parse_bytes("100MB"), 100'000'000);
  EXPECT_EQ(parse_bytes("3kB"), 3000);
  EXPECT_EQ(parse_bytes("3KB"), 3000);
  EXPECT_EQ(parse_bytes("2GB"), 2'000'000'000);
  EXPECT_EQ(parse_bytes("1TB"), 1'000'000'000'000);
}

TEST(ParseBytes, PlainNumbersAreBytes) {
  EXPECT_EQ(parse_bytes("4096"), 4096);
  EXPECT_EQ(parse_bytes("4096B"), 4096);
  EXPECT_EQ(parse_bytes("0"), 0);
}

TEST(ParseBytes, OneSpaceBeforeTheUnitIsAllowed) {
  EXPECT_EQ(parse_bytes("64 MiB"), 64 * kMiB);
  EXPECT_EQ(parse_bytes("64  MiB"), std::nullopt);
}

TEST(ParseBytes, AnythingElseIsRefused) {
  for (const char* bad : {"", "MiB", "64mib", "64 XB", "64MiBs", "-1MiB", "+1MiB", " 64MiB", "inf",
                          "nan", "64 GiB extra"})
    EXPECT_EQ(parse_bytes(bad), std::nullopt) << "'" << bad << "'";
}

TEST(ParseBytes, ASizeBeyondA64BitCountIsRefused) {
  EXPECT_EQ(parse_bytes("9000000TB"), 9'000'000'000'000'000'000);
  EXPECT_EQ(parse_bytes("10000000TB"), std::nullopt);
  EXPECT_EQ(parse_bytes("100000000TiB"), std::nullopt);
}

}  // namespace
}  // namespace aftermath
