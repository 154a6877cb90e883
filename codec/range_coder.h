// Codec 2's adaptive binary range coder (LZMA's scheme: 32-bit range,
// 12-bit probabilities, carry propagation through a cached byte), bit-exact
// in encoder and decoder. codec/FORMAT.md "Binary coder" states it.
#pragma once

#include <cstdint>

namespace parlot::codec::v2 {

/// Probability (of a 0 bit) in 1/4096, adapted by 1/32 of the error.
using Prob = std::uint16_t;
inline constexpr unsigned kProbBits = 12;
inline constexpr Prob kProbInit = 1u << (kProbBits - 1);
inline constexpr unsigned kAdaptShift = 5;
inline constexpr std::uint32_t kTop = 1u << 24;

/// Adaptive binary range encoder (LZMA's scheme), writing into a raw byte
/// pointer the caller keeps in bounds (see Encoder's reserve).
class RangeEncoder {
 public:
  void start(std::uint8_t* out) {
    low_ = 0;
    range_ = 0xffffffffu;
    cache_ = 0;
    cache_size_ = 1;
    out_ = out;
  }
  std::uint8_t* out() const { return out_; }
  /// Bytes produced but not yet written (a carry may still change them).
  std::uint64_t pending() const { return cache_size_; }

  void bit(Prob& p, unsigned b) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    if (b == 0) {
      range_ = bound;
      p = static_cast<Prob>(p + (((1u << kProbBits) - p) >> kAdaptShift));
    } else {
      low_ += bound;
      range_ -= bound;
      p = static_cast<Prob>(p - (p >> kAdaptShift));
    }
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }

  /// Bit `b` with probability `p` (of a 0, in 1/4096, 1 .. 4095), which
  /// the caller adapts.
  void bit_at(std::uint32_t p, unsigned b) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    if (b == 0) {
      range_ = bound;
    } else {
      low_ += bound;
      range_ -= bound;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }

  /// `n` bits of `v`, most significant first, each with probability 1/2.
  void direct(std::uint32_t v, unsigned n) {
    while (n-- != 0) {
      range_ >>= 1;
      if (v >> n & 1) low_ += range_;
      while (range_ < kTop) {
        range_ <<= 8;
        shift_low();
      }
    }
  }

  /// Writes the bytes that make everything coded so far decodable.
  void flush() {
    for (int i = 0; i < 5; ++i) shift_low();
  }

 private:
  void shift_low() {
    if (static_cast<std::uint32_t>(low_) < 0xff000000u || (low_ >> 32) != 0) {
      const auto carry = static_cast<std::uint8_t>(low_ >> 32);
      std::uint8_t b = cache_;
      do {
        *out_++ = static_cast<std::uint8_t>(b + carry);
        b = 0xff;
      } while (--cache_size_ != 0);
      cache_ = static_cast<std::uint8_t>(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00ffffffu) << 8;
  }

  std::uint64_t low_ = 0;
  std::uint32_t range_ = 0xffffffffu;
  std::uint8_t cache_ = 0;
  std::uint64_t cache_size_ = 1;
  std::uint8_t* out_ = nullptr;
};

/// The decoder half of RangeEncoder. Reads only inside [in, end); reading
/// past the end yields zero bytes and sets overrun().
class RangeDecoder {
 public:
  void start(const std::uint8_t* in, const std::uint8_t* end) {
    in_ = in;
    end_ = end;
    overrun_ = false;
    range_ = 0xffffffffu;
    code_ = 0;
    for (int i = 0; i < 5; ++i) code_ = code_ << 8 | next_byte();
  }
  const std::uint8_t* in() const { return in_; }
  bool overrun() const { return overrun_; }

  unsigned bit(Prob& p) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    unsigned b;
    if (code_ < bound) {
      range_ = bound;
      p = static_cast<Prob>(p + (((1u << kProbBits) - p) >> kAdaptShift));
      b = 0;
    } else {
      code_ -= bound;
      range_ -= bound;
      p = static_cast<Prob>(p - (p >> kAdaptShift));
      b = 1;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = code_ << 8 | next_byte();
    }
    return b;
  }

  /// The decoding of RangeEncoder::bit_at.
  unsigned bit_at(std::uint32_t p) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    unsigned b = 0;
    if (code_ < bound) {
      range_ = bound;
    } else {
      code_ -= bound;
      range_ -= bound;
      b = 1;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = code_ << 8 | next_byte();
    }
    return b;
  }

  std::uint32_t direct(unsigned n) {
    std::uint32_t v = 0;
    while (n-- != 0) {
      range_ >>= 1;
      const std::uint32_t b = code_ >= range_ ? 1 : 0;
      code_ -= range_ & (0u - b);
      v = v << 1 | b;
      while (range_ < kTop) {
        range_ <<= 8;
        code_ = code_ << 8 | next_byte();
      }
    }
    return v;
  }

 private:
  std::uint32_t next_byte() {
    if (in_ != end_) return *in_++;
    overrun_ = true;
    return 0;
  }

  std::uint32_t range_ = 0xffffffffu;
  std::uint32_t code_ = 0;
  const std::uint8_t* in_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  bool overrun_ = false;
};

}  // namespace parlot::codec::v2
