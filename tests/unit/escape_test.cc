// Tests for the one UTF-8 decoder and the two escapers built on it
// (reports/escape.h): report.html and junit.xml must survive arbitrary bytes.
#include "reports/escape.h"

#include <gtest/gtest.h>

#include <string>

namespace aftermath {
namespace {

TEST(Escape, DecodesWellFormedCharactersOfEveryLength) {
  char32_t cp = 0;
  EXPECT_EQ(decode_utf8("a", 0, cp), 1u);
  EXPECT_EQ(cp, U'a');
  EXPECT_EQ(decode_utf8("x\xC3\xA9", 1, cp), 2u);
  EXPECT_EQ(cp, U'\u00E9');
  EXPECT_EQ(decode_utf8("\xE2\x9C\x93", 0, cp), 3u);
  EXPECT_EQ(cp, U'\u2713');
  EXPECT_EQ(decode_utf8("\xF0\x9F\x92\xA5", 0, cp), 4u);
  EXPECT_EQ(cp, U'\U0001F4A5');
  EXPECT_EQ(decode_utf8(std::string("\0", 1), 0, cp), 1u);
  EXPECT_EQ(cp, U'\0');
}

TEST(Escape, RejectsMalformedSequences) {
  char32_t cp = 0;
  EXPECT_EQ(decode_utf8("\x80", 0, cp), 0u);              // stray continuation byte
  EXPECT_EQ(decode_utf8("\xFF", 0, cp), 0u);              // never valid
  EXPECT_EQ(decode_utf8("\xE2\x82", 0, cp), 0u);          // truncated at the end
  EXPECT_EQ(decode_utf8("\xE2\x28\xA1", 0, cp), 0u);      // bad continuation
  EXPECT_EQ(decode_utf8("\xC0\xAF", 0, cp), 0u);          // overlong '/'
  EXPECT_EQ(decode_utf8("\xE0\x80\xAF", 0, cp), 0u);      // overlong, 3 bytes
  EXPECT_EQ(decode_utf8("\xED\xA0\x80", 0, cp), 0u);      // surrogate
  EXPECT_EQ(decode_utf8("\xF4\x90\x80\x80", 0, cp), 0u);  // past U+10FFFF
}

TEST(Escape, AppendUtf8RoundTrips) {
  for (char32_t cp :
       {U'\x01', U'~', U'\u00E9', U'\u07FF', U'\u0800', U'\uFFFD', U'\U00010000', U'\U0010FFFF'}) {
    std::string s;
    append_utf8(s, cp);
    char32_t back = 0;
    ASSERT_EQ(decode_utf8(s, 0, back), s.size()) << static_cast<unsigned>(cp);
    EXPECT_EQ(back, cp);
  }
}

TEST(Escape, TruncatesByCharactersNeverInsideOne) {
  EXPECT_EQ(truncate_chars("abc", 3), "abc");
  EXPECT_EQ(truncate_chars("abcd", 3), "abc\u2026");
  // Three two-byte characters cut to two: four bytes and the ellipsis.
  EXPECT_EQ(truncate_chars("\xC3\xA9\xC3\xA9\xC3\xA9", 2), "\xC3\xA9\xC3\xA9\u2026");
  // A malformed byte counts as one character and is kept as it is.
  EXPECT_EQ(truncate_chars("\xFF\xFFx", 2), "\xFF\xFF\u2026");
  EXPECT_EQ(truncate_chars("", 0), "");
}

TEST(Escape, CountsCharactersNotBytes) {
  EXPECT_EQ(char_count(""), 0u);
  EXPECT_EQ(char_count("abc"), 3u);
  EXPECT_EQ(char_count("caf\xC3\xA9 \xE2\x9C\x93"), 6u);
}

TEST(Escape, Html) {
  EXPECT_EQ(html_escape("<a href='x'>&</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(html_escape("tab\tnl\ncr\r"), "tab\tnl\ncr\r");
  EXPECT_EQ(html_escape(std::string("nul\0x", 5)), "nul\u2400x");
  EXPECT_EQ(html_escape("\x1b"), "\u241B");
  EXPECT_EQ(html_escape("\xff\xfe"), "\uFFFD\uFFFD");                              // not UTF-8
  EXPECT_EQ(html_escape("\xc3"), "\uFFFD");                                        // truncated
  EXPECT_EQ(html_escape("\xc0\xaf"), "\uFFFD\uFFFD");                              // overlong '/'
  EXPECT_EQ(html_escape("\xed\xa0\x80"), "\uFFFD\uFFFD\uFFFD");                    // a surrogate
  EXPECT_EQ(html_escape("\xc2\x85"), "\uFFFD");                                    // C1 control
  EXPECT_EQ(html_escape("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93");  // kept
}

TEST(Escape, Xml) {
  EXPECT_EQ(xml_escape("a&b<c>d\"e'f", true), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  EXPECT_EQ(xml_escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d\"e'f");
  EXPECT_EQ(xml_escape("x\x01y\x1fz\x7f"), "xyz\x7f");
  EXPECT_EQ(xml_escape("tab\there\nline"), "tab\there\nline");
  EXPECT_EQ(xml_escape("tab\there\nline\r", true), "tab&#9;here&#10;line&#13;");
  EXPECT_EQ(xml_escape("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x92\xA5"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x92\xA5");
  EXPECT_EQ(xml_escape("bad\xff!"), "bad\xEF\xBF\xBD!");                // U+FFFD
  EXPECT_EQ(xml_escape("cut\xE2\x82"), "cut\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");        // overlong '/'
  EXPECT_EQ(xml_escape("\xEF\xBF\xBE"), "");                            // U+FFFE is not a Char
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

}  // namespace
}  // namespace aftermath
