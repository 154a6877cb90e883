#include "visible_text.h"

#include <cstdint>
#include <nlohmann/json.hpp>

namespace parlot::tool {
namespace {

/// Length of the valid UTF-8 sequence starting at text[i] and its code
/// point, or 0 when the byte there does not start one.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length;
  char32_t min;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, min = 0x80, code_point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, min = 0x800, code_point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, min = 0x10000, code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code_point = code_point << 6 | (byte(i + k) & 0x3f);
  }
  if (code_point < min || code_point > 0x10ffff || (code_point >= 0xd800 && code_point <= 0xdfff)) {
    return 0;
  }
  return length;
}

void append_hex_escape(std::string& out, unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[b >> 4];
  out += kHex[b & 15];
}

}  // namespace

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_sequence(text, i, c);
    if (n == 0) {
      append_hex_escape(out, static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {
      for (std::size_t k = 0; k < n; ++k) {
        append_hex_escape(out, static_cast<unsigned char>(text[i + k]));
      }
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string quoted_visible_text(std::string_view text) {
  std::string out = "\"";
  for (const char c : visible_text(text)) {
    if (c == '"') out += '\\';
    out += c;
  }
  return out + '"';
}

std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parlot::tool
