// A closed value's one text, from a table of (value, word) pairs: the single
// place both directions read, so a value's word cannot differ between the
// writer and the parser.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace aftermath {

template <typename E, std::size_t N>
using EnumWords = std::array<std::pair<E, std::string_view>, N>;

// The word of `e`; "?" for a value missing from the table.
template <typename E, std::size_t N>
std::string_view text_of(const EnumWords<E, N>& table, E e) {
  for (const auto& [k, text] : table)
    if (k == e) return text;
  return "?";
}

// The value whose word is `text`; nullopt for any other text.
template <typename E, std::size_t N>
std::optional<E> value_of(const EnumWords<E, N>& table, std::string_view text) {
  for (const auto& [k, t] : table)
    if (t == text) return k;
  return std::nullopt;
}

}  // namespace aftermath
