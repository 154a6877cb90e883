// Codec 2's decoder, the mirror of v2::Encoder (include/parlot/codec_v2.h,
// codec/rank_encoder.cpp): segments, tokens, the model. codec::Decoder
// (codec/decoder.h) is how the reader uses it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/decoder.h"
#include "codec/range_coder.h"
#include "codec/rank_model.h"

namespace parlot::codec::v2 {

/// Streaming decompressor of codec 2, the mirror of Encoder. Feed it each
/// data block's payload (zero or more whole segments) in order, then pull
/// events with `next`. Memory is constant (the model, about 1 MiB). Never
/// reads outside the fed bytes; malformed input gives kError with a message
/// and the offset from the start of the current feed.
class Decoder {
 public:
  /// The format version of the file whose stream this decodes (Model::
  /// set_format_version; the newest by default); kept by reset(). Set
  /// before the first next().
  void set_format_version(unsigned version) { model_.set_format_version(version); }

  /// Makes `n` bytes at `data` the current input (a block's payload:
  /// whole segments), valid until the next feed().
  void feed(const std::uint8_t* data, std::size_t n) {
    in_ = data;
    in_end_ = data + n;
    in_begin_ = data;
  }

  /// Decodes up to `cap` events into `out`; returns how many. Fewer than
  /// `cap` when the fed bytes are used up (status() kNeedInput) or on
  /// malformed input (kError).
  std::size_t next(std::uint32_t* out, std::size_t cap) {
    const std::size_t n = next_events(out, cap);
    events_ += n;
    return n;
  }

  /// Back to the state of a new decoder (a new stream), keeping the
  /// model's memory: cheaper than another Decoder (no allocation, no page
  /// faults, and only the parts of the model this stream used are
  /// cleared), for a reader going through many threads.
  void reset();

  /// kOk, kNeedInput (the fed bytes are used up) or kError.
  DecodeStatus status() const { return status_; }
  /// What was malformed (kError), a static string.
  const char* error() const { return error_; }
  /// Offset of the error in bytes from the start of the current input.
  std::size_t error_offset() const { return error_offset_; }
  /// True when nothing is half-decoded (between segments).
  bool at_token_boundary() const { return seg_left_ == 0 && match_left_ == 0 && !literal_pending_; }

 private:
  std::size_t next_events(std::uint32_t* out, std::size_t cap);
  void end_segment() { in_ = rc_.in(); }

  // `k` more events of the match (<= match_left_) with a table tail, as the
  // encoder: its first event record()ed, the others copied, and at its end
  // the encoder's catch-up (Model::catch_up_match, 1 event record()ed).
  inline void copy_match(std::size_t k, std::uint32_t* out);

  std::size_t fail_at_coder(const char* what, std::size_t n) {
    fail(what, rc_.in());
    return n;
  }
  void fail(const char* what, const std::uint8_t* at) {
    status_ = DecodeStatus::kError;
    error_ = what;
    error_offset_ = static_cast<std::size_t>(at - in_begin_);
  }

  Model model_;
  std::uint64_t events_ = 0;  // decoded since construction or reset()
  RangeDecoder rc_;
  RankModel::Slot* slot_ = nullptr;  // structural context of the decision point
  std::uint64_t seg_left_ = 0;
  std::uint32_t match_left_ = 0;
  std::uint32_t match_slot_ = 0;
  std::uint32_t match_distance_ = 0;  // position - slot at the match's decision point
  std::uint32_t last_len_ = 0;
  bool literal_pending_ = false;
  const std::uint8_t* in_ = nullptr;
  const std::uint8_t* in_end_ = nullptr;
  const std::uint8_t* in_begin_ = nullptr;
  DecodeStatus status_ = DecodeStatus::kOk;
  const char* error_ = "";
  std::size_t error_offset_ = 0;
};

}  // namespace parlot::codec::v2
