// UTF-8, as text that leaves the program (a report, a log line, a CSV header) must be: where a
// name is read (the scenario's names) and where text from a file is shown (relaysim report) the
// same rule decides what is valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace relaysim {

// The length of the valid UTF-8 sequence that starts at s[at] (1 to 4), or 0 when the bytes there
// are none: a stray continuation byte, a sequence cut short, an overlong form, a surrogate, or a
// code point past U+10FFFF.
constexpr std::size_t utf8_length(std::string_view s, std::size_t at) {
  if (at >= s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[at]);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07u;
  } else {
    return 0;
  }
  if (at + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[at + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (cc & 0x3Fu);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// The code point of the valid sequence at s[at] (utf8_length(s, at) > 0).
constexpr std::uint32_t utf8_code_point(std::string_view s, std::size_t at) {
  const std::size_t n = utf8_length(s, at);
  const auto c = static_cast<unsigned char>(s[at]);
  if (n <= 1) return c;
  std::uint32_t cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
  for (std::size_t k = 1; k < n; ++k) cp = cp << 6 | (static_cast<unsigned char>(s[at + k]) & 0x3Fu);
  return cp;
}

constexpr bool valid_utf8(std::string_view s) {
  for (std::size_t at = 0; at < s.size();) {
    const std::size_t n = utf8_length(s, at);
    if (n == 0) return false;
    at += n;
  }
  return true;
}

static_assert(valid_utf8("plain") && valid_utf8("\xE2\x82\xAC") && !valid_utf8("\xFF") && !valid_utf8("\xC0\xAF") &&
              !valid_utf8("\xED\xA0\x80") && !valid_utf8("\xE2\x82"));

}  // namespace relaysim
