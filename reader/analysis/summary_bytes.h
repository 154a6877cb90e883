// Byte encoding of the analyses' partial results (issue 9 §7): a member of
// an mpirun'd parlot-read serialises its partial result (call counts, class
// hashes, open stacks) with SummaryWriter, the leader reads it back with
// SummaryReader and merges exactly. Unsigned LEB128 varints and
// length-prefixed strings; the same machine type on both ends is not
// assumed.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace parlot::analysis {

class SummaryWriter {
 public:
  void number(std::uint64_t v) {
    do {
      const auto byte = static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      bytes_.push_back(byte);
      v >>= 7;
    } while (v != 0);
  }
  void text(std::string_view s) {
    number(s.size());
    bytes_.append(s);
  }
  /// The bytes written so far (moved out).
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Reads what SummaryWriter wrote. Throws std::runtime_error when the bytes
/// end early or a varint is malformed.
class SummaryReader {
 public:
  explicit SummaryReader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t number() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size()) fail();
      const auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail();
  }
  std::string text() {
    const std::uint64_t n = number();
    if (n > bytes_.size() - pos_) fail();
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  [[noreturn]] void fail() const {
    throw std::runtime_error("partial result from another rank is cut short or malformed");
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace parlot::analysis
