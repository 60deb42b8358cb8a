// UTF-8 and escaping for every report that writes markup: report.html and
// junit.xml. Captured stderr, command lines and scenario text are arbitrary
// bytes; each writer must emit a valid document whatever they hold, and both
// must decode UTF-8 the same way (one decoder, here).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aftermath {

// Decodes one UTF-8 character at s[i] (precondition: i < s.size()) into cp
// and returns its length in bytes, or 0 when the bytes there are malformed:
// a stray continuation byte, a truncated sequence, an overlong form, a
// surrogate or a code point past U+10FFFF. A caller replaces one byte and
// resynchronises at i + 1.
std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp);

// Appends cp (<= U+10FFFF, not a surrogate) as UTF-8.
void append_utf8(std::string& out, char32_t cp);

// At most max_chars characters of s, with "…" when cut; never splits a
// character (a malformed byte counts as one).
std::string truncate_chars(std::string_view s, std::size_t max_chars);

// The number of characters in s (bytes that are not UTF-8 continuation bytes).
std::size_t char_count(std::string_view s);

// Escapes text for HTML character data and quoted attribute values (& < > "
// '), and makes arbitrary bytes safe and visible: C0 control characters other
// than tab, newline and carriage return become their U+2400 "control
// picture" (so an ANSI escape in stderr shows as ␛[31m instead of vanishing),
// C1 controls and malformed UTF-8 become U+FFFD.
std::string html_escape(std::string_view text);

// Escapes text for XML character data (& < >) or a quoted attribute value
// (also " and '), and makes arbitrary bytes legal in an XML 1.0 UTF-8
// document: characters XML 1.0 forbids (control characters other than tab,
// newline, carriage return; U+FFFE, U+FFFF; surrogates) are dropped and
// malformed UTF-8 becomes U+FFFD.
// In attribute mode tab/newline/CR become character references, because a
// parser would otherwise normalise them to spaces.
std::string xml_escape(std::string_view text, bool attribute = false);

}  // namespace aftermath
