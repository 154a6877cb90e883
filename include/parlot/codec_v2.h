// Codec 2's encoder state and its inline hot path (included by
// parlot/codec.h). The rest of codec 2, its rank model, range coder,
// segments and decoder, is the library in codec/; codec/FORMAT.md ("Codec
// 2") is the normative description of its bytes.
//
// Codec 2 keeps codec 1's match path (paper §3.3): an event that continues
// a match costs a few inline instructions and writes nothing. At a decision
// point (a match ends, or none starts) the match length and the literal
// that follows are coded with an adaptive binary range coder, the literal
// ranked among the events that followed the same (caller, previous
// sibling) before. Output is cut into segments, one per data block.
#pragma once
// Included by parlot/codec.h after LzModel, OutputWindow and Sink.

#include <cstddef>
#include <cstdint>

#include "parlot/format.h"

namespace parlot::codec::v2 {

/// Longest match one length token carries (events); a longer run is cut
/// and re-decided, as in codec 1.
inline constexpr std::uint32_t kMaxMatch = 1u << 24;
/// The length model of a thread file of format version `version`: 1 in
/// version 2 files, 2 since version 3 (codec/FORMAT.md "Length model 2").
constexpr unsigned length_model_of(unsigned version) {
  return version >= 3 ? 2 : 1;
}
/// Events at the end of a match that does not repeat itself whose
/// positions enter the LZ context table (format version 4; 0: all of them,
/// versions 2 and 3). codec/FORMAT.md "Context table in a match": on
/// sqlite3's stream 9% fewer bytes and 27% fewer decisions, and a fifth of
/// the encoder's time.
inline constexpr std::uint32_t kTableTail = 16;
/// The table tail (see kTableTail) of format version `version`.
constexpr std::uint32_t table_tail_of(unsigned version) {
  return version >= 4 ? kTableTail : 0;
}
/// Whether the LZ model of format version `version` has the long context
/// (LzModel::set_long_context; codec/FORMAT.md "Long context", version 5).
constexpr bool long_context_of(unsigned version) {
  return version >= 5;
}
/// Smallest output window an encoder may be given (and a sink must leave
/// free after drain): a segment header, one decision, the final flush.
inline constexpr std::size_t kMinWindowBytes = 256;

/// One structural context of the rank model (codec/rank_model.h).
struct ContextSlot;

/// Incremental compressor of codec 2. Its sink's drain() must consume the
/// bytes written so far and leave at least kMinWindowBytes free. Not
/// thread-safe: one encoder per thread stream. Holds its model inline
/// (about 1 MiB); trivially destructible.
class Encoder {
 public:
  /// An encoder writing into `window`, handing full windows to `sink`.
  /// `format_version`: the format version to write (its length model,
  /// table tail and long context); the default is the newest, what the
  /// runtime writes. Older ones are for tests and benchmarks of the old
  /// formats.
  Encoder(Sink sink, OutputWindow window, unsigned format_version = format::kVersion);
  /// The same, constructed in storage of all zero bytes (a fresh anonymous
  /// mapping, as the runtime's thread traces): most of the model's pages
  /// are then touched only as the stream uses them (about 11 KB written).
  Encoder(Sink sink, OutputWindow window, ZeroedStorage z,
          unsigned format_version = format::kVersion);

  /// Compresses one event (function ID, 0 = exit; must be <= kMaxValue).
  /// The common case, an event that extends the current match, is inlined
  /// and writes nothing (as codec 1); everything else is one out-of-line
  /// call that codes a length and a literal (tens of ns).
  [[gnu::always_inline]] inline void encode(std::uint32_t v) {
    if (!try_extend(v)) [[unlikely]]
      encode_decision(v);
  }

  /// encode(v)'s common case alone: when `v` extends the current match,
  /// records it and returns true; otherwise changes nothing and returns
  /// false (then call encode(v)). For a caller that keeps its out-of-line
  /// work in tail calls (the runtime's hooks).
  [[gnu::always_inline]] inline bool try_extend(std::uint32_t v) {
    // One position, one stored distance: the match's length and slot
    // follow from the position (two stores fewer per event).
    const std::uint32_t pos = lz_.position();
    if (pos != fast_end_ && v == lz_.at(pos - distance_)) [[likely]] {
      lz_.append(v);  // the LZ table catches up at the match's end
      return true;
    }
    return false;
  }

  /// What next_in_match() returns when try_extend() would take no event.
  static constexpr std::uint32_t kNoMatch = 0xffffffffu;

  /// The one event try_extend() would take now (the open match's next
  /// event), or kNoMatch (no match open, or its cap or the event limit
  /// reached). Read-only. With extend_match(), a caller that can check the
  /// predicted event more cheaply than it can compute its own (the
  /// runtime's entry hook: one load of the predicted function's address
  /// instead of a lookup of its ID) records it without computing it.
  [[gnu::always_inline]] inline std::uint32_t next_in_match() const {
    const std::uint32_t pos = lz_.position();
    return pos != fast_end_ ? lz_.at(pos - distance_) : kNoMatch;
  }

  /// try_extend(v) for `v` = next_in_match() (not kNoMatch): records it.
  [[gnu::always_inline]] inline void extend_match(std::uint32_t v) { lz_.append(v); }

  /// Ends the current segment (everything encoded so far becomes
  /// decodable), hands it to the sink and starts the next. For a time-driven
  /// flush; bounded work.
  void flush();

  /// Ends the last segment. The stream then ends (the window holds its last
  /// bytes); no event may be encoded afterwards.
  void finish();

  /// Makes try_extend() return false once `n` more events are encoded
  /// (n = 0: at the next event), until the next call: a caller that counts
  /// events (the runtime's clock samples and flush checks) then needs no
  /// counter of its own on the fast path. Its events still go through
  /// encode(), which takes them as any other (same bytes).
  void set_event_limit(std::uint32_t n) {
    limited_ = true;
    stop_pos_ = lz_.position() + n;
    update_fast_end();
  }
  /// Events to encode before the limit of set_event_limit() (0: it is
  /// reached; try_extend() fails). Meaningful only after a set_event_limit().
  std::uint32_t events_to_limit() const { return stop_pos_ - lz_.position(); }

  OutputWindow& window() { return out_; }
  /// Where the open segment's coder writes next, in the window (window().cur
  /// moves only when a segment ends): the bytes coded so far end there,
  /// give or take the coder's few pending bytes. Out of line; for a caller
  /// that decides when to end a block (the runtime's flight recorder).
  const std::uint8_t* output_position();
  /// Events encoded but still held in the pending match (not yet in output).
  std::uint32_t pending_match() const { return match_len(); }
  /// Events coded in the open segment (not decodable before flush()).
  std::uint64_t segment_events() const { return seg_events_; }

 private:
  // The rest of the model (rank model, table tail) and the range coder:
  // codec/rank_encoder.cpp, in coder_.
  struct Coder;
  static constexpr std::size_t kCoderBytes = 709752;
  inline Coder& coder();

  // The slow path's steps (codec/rank_encoder.cpp), inline there as they
  // were when the encoder was all in headers.
  inline void begin_segment();
  inline void end_segment();
  inline void catch_up_match();
  inline void arm_next();
  inline void predict();
  inline void make_room();
  inline void flush_segment();  // flush()
  inline void after_literal();
  inline void set_recorded_len(std::uint32_t len);
  inline void code_cut_match();
  inline void code_token_literal(std::uint32_t len, std::uint32_t v);
  [[gnu::noinline]] void encode_decision(std::uint32_t v);

  // Events in the open match (0: none, or armed with none yet): from its
  // first event's position.
  std::uint32_t match_len() const { return in_match_ ? lz_.position() - match_start_ : 0; }
  // No match open: try_extend fails at once (its position is fast_end_).
  // After every change of position outside try_extend.
  void end_match() {
    in_match_ = false;
    first_pending_ = false;
    update_fast_end();
  }
  // fast_end_: the position when no match is open; in a match, its cap, or
  // the event limit if nearer.
  void update_fast_end() {
    const std::uint32_t pos = lz_.position();
    if (!in_match_) {
      fast_end_ = pos;
    } else {
      fast_end_ = limited_ && stop_pos_ - pos < cap_end_ - pos ? stop_pos_ : cap_end_;
    }
  }

  Sink sink_;
  OutputWindow out_;
  LzModel lz_;
  alignas(8) unsigned char coder_[kCoderBytes];
  std::uint8_t* seg_start_ = nullptr;
  std::uint64_t seg_events_ = 0;
  ContextSlot* slot_ = nullptr;  // structural context of the decision point
  unsigned token_ctx_ = 0;       // length context of the open token
  // The open match: its first event's position and how far back it copies
  // from (position - slot). try_extend appends while the position is not
  // fast_end_: the match's cap (cap_end_: kMaxMatch, or kAppendMax past its
  // record()ed events) or the event limit (stop_pos_) if nearer, or the
  // position itself when no match is open.
  std::uint32_t fast_end_ = 0;
  std::uint32_t cap_end_ = 0;
  std::uint32_t stop_pos_ = 0;
  bool limited_ = false;  // set_event_limit() was called
  std::uint32_t distance_ = 0;
  std::uint32_t match_start_ = 0;
  std::uint32_t recorded_len_ = 0;  // events of the match record()ed (the rest append()ed)
  bool in_match_ = false;
  // Set by arm_next(): the match's first event (first_event_, at
  // match_start_) was append()ed or is still to come, and its record()
  // (under first_keys_) waits for catch_up_match().
  bool first_pending_ = false;
  std::uint32_t first_event_ = 0;
  LzModel::RecordKeys first_keys_{};
};

}  // namespace parlot::codec::v2
