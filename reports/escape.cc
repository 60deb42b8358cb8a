#include "reports/escape.h"

namespace aftermath {

namespace {

bool xml_char_allowed(char32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

}  // namespace

std::size_t decode_utf8(std::string_view s, std::size_t i, char32_t& cp) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  std::size_t len;
  char32_t min;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string truncate_chars(std::string_view s, std::size_t max_chars) {
  std::size_t chars = 0, i = 0;
  while (i < s.size()) {
    if (chars == max_chars) return std::string(s.substr(0, i)) + "\u2026";
    char32_t cp;
    std::size_t len = decode_utf8(s, i, cp);
    i += len ? len : 1;
    ++chars;
  }
  return std::string(s);
}

std::size_t char_count(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp;
    std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += "\uFFFD";
      ++i;
      continue;
    }
    i += len;
    switch (cp) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      case '\t':
      case '\n':
      case '\r':
        out += static_cast<char>(cp);
        continue;
      default:
        break;
    }
    if (cp < 0x20) {
      append_utf8(out, 0x2400 + cp);
    } else if (cp == 0x7F) {
      append_utf8(out, 0x2421);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) {
      out += "\uFFFD";
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

std::string xml_escape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp;
    std::size_t len = decode_utf8(text, i, cp);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += 1;
      continue;
    }
    if (!xml_char_allowed(cp)) {
      // Dropped: there is no way to represent these in XML 1.0, not even as
      // character references.
    } else {
      switch (cp) {
        case '&':
          out += "&amp;";
          break;
        case '<':
          out += "&lt;";
          break;
        case '>':
          out += "&gt;";
          break;
        // Quotes only matter inside attribute values; in text they stay
        // literal so measured JSON in a <failure> reads as JSON in the raw file.
        case '"':
          out += attribute ? "&quot;" : "\"";
          break;
        case '\'':
          out += attribute ? "&apos;" : "'";
          break;
        case '\t':
          out += attribute ? "&#9;" : "\t";
          break;
        case '\n':
          out += attribute ? "&#10;" : "\n";
          break;
        // A literal CR is normalised away by parsers even in text.
        case '\r':
          out += "&#13;";
          break;
        default:
          out.append(text.substr(i, len));
      }
    }
    i += len;
  }
  return out;
}

}  // namespace aftermath
