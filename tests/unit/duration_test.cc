// The one duration grammar (harness/core/duration.h), against the table the
// Python fixtures' parser is tested with too (tests/python/duration_test.py),
// so the two cannot drift apart.
#include "harness/core/duration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/core/types.h"

namespace aftermath {
namespace {

TEST(Duration, SharedTable) {
  std::ifstream in(std::string(AFTERMATH_TEST_DATA) + "/durations.json");
  ASSERT_TRUE(in) << "tests/data/durations.json";
  nlohmann::json table = nlohmann::json::parse(in);
  ASSERT_GT(table.size(), 10u);
  for (const auto& row : table) {
    std::string text = row[0].get<std::string>();
    std::optional<std::int64_t> got = parse_duration_ns(text);
    if (row[1].is_null()) {
      EXPECT_FALSE(got) << "'" << text << "' was accepted as " << got.value_or(0);
    } else {
      EXPECT_EQ(got, row[1].get<std::int64_t>()) << "'" << text << "'";
    }
    // The harness's parse_duration is the same function.
    EXPECT_EQ(parse_duration(text), got) << "'" << text << "'";
  }
}

TEST(Duration, BareNumberAndUnknownUnitAreRejected) {
  EXPECT_FALSE(parse_duration_ns("5"));
  EXPECT_FALSE(parse_duration_ns("5d"));
  EXPECT_EQ(parse_duration_ns("5s"), 5 * kSecond);
}

}  // namespace
}  // namespace aftermath
