// The one decoder of every codec, as the reader uses it: codec 0 (raw
// words) and codec 1 (LZ + zero elimination) here, codec 2 through
// v2::Decoder (codec/rank_decoder.h). codec/FORMAT.md states the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "parlot/codec.h"
#include "parlot/format.h"

namespace parlot::codec {

/// Outcome of a decoder's `next` call.
enum class DecodeStatus { kOk, kNeedInput, kError };

namespace v2 {
class Decoder;
}

/// Streaming decompressor for every codec. Feed it the payload of each data
/// block in order with `feed`, then pull events with `next` until it returns
/// 0. Memory is constant (the model plus one group) however long the stream.
/// It never reads outside the fed bytes; malformed input is reported through
/// `error()` with the offset (bytes from the start of the current feed).
class Decoder {
 public:
  using Status = DecodeStatus;

  /// `lz`: true for Codec::kLzZe, false for Codec::kRawWords.
  explicit Decoder(bool lz);
  /// A decoder for `codec` (any format::Codec value; codec 2 allocates its
  /// model, about 1 MiB).
  explicit Decoder(format::Codec codec);
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  /// The format version of the file whose stream this decodes (default:
  /// format::kVersion); codec 2 picks its model parts from it
  /// (v2::ModelRef::set_format_version). Set before the first next(); reset() keeps it.
  void set_format_version(unsigned version);

  /// Back to the state of a new decoder of the same codec (a new stream),
  /// keeping its memory (codec 2: the model, reset instead of allocated).
  void reset();
  /// The codec this decoder reads.
  format::Codec codec() const {
    return v2_ ? format::Codec::kLzRank : lz_ ? format::Codec::kLzZe : format::Codec::kRawWords;
  }

  /// Makes `n` bytes at `data` the current input. Must only be called after
  /// `next` reported kNeedInput (or before the first call). The bytes must stay
  /// valid until the next call to `feed`. Codec 2: a block's payload (whole
  /// segments).
  void feed(const std::uint8_t* data, std::size_t n);

  /// Decodes up to `cap` events into `out`. Returns how many it wrote; sets
  /// `status()`: kNeedInput when the current input is used up at a token or
  /// group boundary, kError on malformed input (see error()/error_offset()).
  std::size_t next(std::uint32_t* out, std::size_t cap);

  Status status() const { return status_; }
  const char* error() const { return error_; }
  /// Offset of the error in bytes from the start of the current input.
  std::size_t error_offset() const { return error_offset_; }
  /// True when the stream stands between two tokens (nothing half-decoded);
  /// a truncated stream is detected by the caller from this and the trailer.
  bool at_token_boundary() const;

 private:
  enum class State { kLength, kLiteral, kLiteralLow };

  // Returns true when a whole literal was completed (and emitted).
  inline bool literal_step(std::uint16_t w, std::uint32_t* out, std::size_t& n);
  inline bool next_word(std::uint16_t& w);
  inline bool fail(const char* what);

  bool lz_;
  std::unique_ptr<v2::Decoder> v2_;  // codec 2 (then the members below are unused)
  LzModel model_;
  State state_ = State::kLength;
  bool high_pending_ = false;
  std::uint32_t high_ = 0;
  std::uint32_t match_left_ = 0;
  std::uint32_t match_slot_ = 0;
  std::uint64_t group_ = 0;
  unsigned group_left_ = 0;
  const std::uint8_t* in_ = nullptr;
  const std::uint8_t* in_end_ = nullptr;
  const std::uint8_t* in_begin_ = nullptr;
  Status status_ = Status::kOk;
  const char* error_ = "";
  std::size_t error_offset_ = 0;
};

}  // namespace parlot::codec
