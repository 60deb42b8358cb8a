// Quoting an argument so a shell gives it back unchanged (the repro line).
#include "harness/core/shell_quote.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace aftermath {
namespace {

TEST(ShellQuote, PlainWordsStayAsTheyAre) {
  EXPECT_EQ(shell_quote("aftermath"), "aftermath");
  EXPECT_EQ(shell_quote("/usr/bin/python3"), "/usr/bin/python3");
  EXPECT_EQ(shell_quote("--grace=500ms,a:b+c@d%e"), "--grace=500ms,a:b+c@d%e");
}

TEST(ShellQuote, AnythingElseIsSingleQuoted) {
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("two words"), "'two words'");
  EXPECT_EQ(shell_quote("{action: SIGKILL}"), "'{action: SIGKILL}'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("a\nb"), "'a\nb'");
}

// The real test: a shell reads every quoted word back as it was.
TEST(ShellQuote, AShellReadsItBack) {
  const std::string words[] = {"",     "plain", "two words",   "it's", "'",         "''",
                               "a\"b", "$(id)", "back\\slash", "*",    "tab\there", "{x: [1, 2]}"};
  for (const auto& w : words) {
    std::string cmd = "printf %s " + shell_quote(w);
    FILE* f = ::popen(cmd.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string got;
    char buf[256];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) got.append(buf, n);
    EXPECT_EQ(::pclose(f), 0) << cmd;
    EXPECT_EQ(got, w) << cmd;
  }
}

}  // namespace
}  // namespace aftermath
