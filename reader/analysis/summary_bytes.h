// Byte encoding of the analyses' partial results (issue 9 §7): a member of
// an mpirun'd parlot-read serialises its partial result (call counts, class
// hashes, open stacks) with SummaryWriter, the leader reads it back with
// SummaryReader and merges exactly. Unsigned LEB128 varints and
// length-prefixed strings; the same machine type on both ends is not
// assumed.
#pragma once

#include <cstddef>
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

/// Reads what SummaryWriter wrote. The bytes come from another process:
/// every read checks them, and throws std::runtime_error when they end
/// early, a varint is malformed (more than 64 bits) or a count cannot be
/// right (count() is what bounds allocations by the size of the input).
class SummaryReader {
 public:
  explicit SummaryReader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t number() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size()) fail();
      const auto b = static_cast<std::uint8_t>(bytes_[pos_++]);
      // The tenth byte holds bit 63 only.
      if (shift == 63 && b > 1) fail();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    fail();
  }
  /// A count of items that take at least `min_bytes` bytes each (>= 1):
  /// throws when the bytes left cannot hold that many, so a caller may
  /// reserve or resize to the count without trusting it.
  std::uint64_t count(std::size_t min_bytes) {
    const std::uint64_t n = number();
    if (n > (bytes_.size() - pos_) / min_bytes) fail();
    return n;
  }
  std::string text() {
    const std::uint64_t n = number();
    if (n > bytes_.size() - pos_) fail();
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  bool done() const { return pos_ == bytes_.size(); }
  /// Throws unless every byte was read (trailing bytes are malformed).
  void expect_done() const {
    if (!done()) fail();
  }

 private:
  [[noreturn]] void fail() const {
    throw std::runtime_error(
        "partial result from another rank is cut short or malformed (at byte " +
        std::to_string(pos_) + " of " + std::to_string(bytes_.size()) + ")");
  }
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

}  // namespace parlot::analysis
