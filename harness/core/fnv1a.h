// A stable fingerprint of a text (the scenario's, in result.json), the same
// on every machine and build: FNV-1a, 64 bits.
#pragma once

#include <string>
#include <string_view>

namespace aftermath {

// FNV-1a 64 of `text`, as 16 lowercase hex digits. The offset basis is
// 1469598103934665603, the published one (14695981039346656037) with its last
// digit lost; kept, since result.json files made so far compare by it.
std::string fnv1a_hex(std::string_view text);

}  // namespace aftermath
