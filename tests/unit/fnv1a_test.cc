// The scenario fingerprint: FNV-1a 64 with the basis result.json files have
// always used (see fnv1a.h), pinned so it never changes under them.
#include "harness/core/fnv1a.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

TEST(Fnv1a, PinnedValues) {
  EXPECT_EQ(fnv1a_hex(""), "14650fb0739d0383");  // the offset basis
  EXPECT_EQ(fnv1a_hex("a"), "44bd8ad473cd9906");
  EXPECT_EQ(fnv1a_hex("foobar"), "88fad7c0a8ff07f2");
}

TEST(Fnv1a, SixteenHexDigitsAndByteSensitive) {
  std::string a = fnv1a_hex("name: x\n");
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, fnv1a_hex("name: y\n"));
  EXPECT_EQ(a, fnv1a_hex(std::string("name: x\n")));
  // Bytes above 0x7f hash as unsigned (no sign extension).
  EXPECT_NE(fnv1a_hex("\xff"), fnv1a_hex("\x7f"));
  EXPECT_EQ(fnv1a_hex(std::string_view("\0", 1)), "44bd2bd473ccf799");
}

}  // namespace
}  // namespace aftermath
