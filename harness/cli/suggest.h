// "Did you mean": the nearest known name to a mistyped option or command, so
// `aftermath run --timout 5s` says which option was meant instead of only
// that the word was not expected.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace aftermath {

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, or "" when none is near enough to be a
// typo of it: at most 2 edits, and at most half the word's length. On a
// tie, the first in `candidates`.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// For a command line CLI11 refused (`words`: argv without the program, up to
// any `--`): "--timout: no such option of `aftermath run`; did you mean
// --timeout?" for the first mistyped long option of the chosen command, or
// "rn: no such command; did you mean `aftermath run`?" for a mistyped
// command. "" when no word is near a known one (CLI11's message stands).
std::string mistyped_hint(CLI::App& app, const std::vector<std::string>& words);

}  // namespace aftermath
