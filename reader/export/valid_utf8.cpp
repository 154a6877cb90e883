#include "valid_utf8.h"

namespace parlot::exporter {
namespace {

constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

/// Length of the well-formed UTF-8 sequence at the start of `s`, or 0.
std::size_t sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    if (b0 == 0xe0) lo = 0xa0;  // no overlong form
    if (b0 == 0xed) hi = 0x9f;  // no surrogate
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    if (b0 == 0xf0) lo = 0x90;  // no overlong form
    if (b0 == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return n;
}

/// The text with invalid sequences and, with `controls`, control
/// characters replaced by U+FFFD.
std::string replace_bad(std::string_view text, bool controls) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t n = sequence_length(text);
    const auto b0 = static_cast<unsigned char>(text[0]);
    const bool control =
        controls &&
        (n == 1 ? (b0 < 0x20 || b0 == 0x7f)
                : (n == 2 && b0 == 0xc2 && static_cast<unsigned char>(text[1]) <= 0x9f));
    if (n == 0 || control) {
      out += kReplacement;
      text.remove_prefix(n == 0 ? 1 : n);
      continue;
    }
    out += text.substr(0, n);
    text.remove_prefix(n);
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view text) {
  return replace_bad(text, false);
}

std::string printable_utf8(std::string_view text) {
  return replace_bad(text, true);
}

}  // namespace parlot::exporter
