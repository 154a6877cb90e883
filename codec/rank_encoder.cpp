// Codec 2's encoder, everything but its inline fast path (that is in
// include/parlot/codec_v2.h): decisions, tokens, segments.
#include <algorithm>
#include <new>
#include <type_traits>

#include "codec/lz_model.h"
#include "codec/range_coder.h"
#include "codec/rank_model.h"
#include "codec/segments.h"
#include "codec/token_coding.h"
#include "parlot/codec.h"

namespace parlot::codec::v2 {

/// The encoder's state that its fast path does not read: the rank model,
/// the table tail and the range coder. Lives in Encoder::coder_.
struct Encoder::Coder {
  RankModel rank;
  std::uint32_t table_tail = kTableTail;
  RangeEncoder rc;

  Coder() { rank.reset(); }
  /// In storage of all zero bytes: writes about 11 KB of probabilities;
  /// the candidate slots and the probabilities of each last width only
  /// when the stream first uses them.
  explicit Coder(ZeroedStorage z) : rank(z) { rank.reset(); }
};

namespace {

// Encoder::kCoderBytes, the size of Coder's storage, must be exactly its
// size (a mismatch is a compile error here, not a silent layout change).
template <std::size_t Declared, std::size_t Actual>
constexpr bool coder_bytes_match() {
  static_assert(Declared == Actual, "Encoder::kCoderBytes must be sizeof(Encoder::Coder)");
  return true;
}

// The model's parts as one ModelRef.
ModelRef model_of(LzModel& lz, RankModel& rank, std::uint32_t& table_tail) {
  return {lz, rank, table_tail};
}

// try_extend may append up to kAppendMax events past a match's record()ed
// ones (the history ring must still hold them at the catch-up).
constexpr std::uint32_t kAppendMax = LzModel::kHistoryMask;

}  // namespace

// The Coder the constructors created in coder_ (placement new), used
// through a plain cast: it has no const or reference members and no
// vtable, which is what std::launder is for, and launder made gcc assume
// that the coder's stores may alias the encoder's other fields (+0.4%
// instructions per event of a traced quicksort, callgrind).
Encoder::Coder& Encoder::coder() {
  static_assert(coder_bytes_match<kCoderBytes, sizeof(Coder)>());
  static_assert(alignof(Coder) <= 8 && std::is_trivially_destructible_v<Coder>);
  return *reinterpret_cast<Coder*>(coder_);
}

Encoder::Encoder(Sink sink, OutputWindow window, unsigned format_version)
    : sink_(sink), out_(window) {
  new (coder_) Coder();
  model_of(lz_, coder().rank, coder().table_tail).set_format_version(format_version);
  begin_segment();
}

Encoder::Encoder(Sink sink, OutputWindow window, ZeroedStorage z, unsigned format_version)
    : sink_(sink), out_(window), lz_(z) {
  new (coder_) Coder(z);
  model_of(lz_, coder().rank, coder().table_tail).set_format_version(format_version);
  begin_segment();
}

const std::uint8_t* Encoder::output_position() {
  return coder().rc.out();
}

void Encoder::flush() {
  flush_segment();
}

void Encoder::flush_segment() {
  end_segment();
  sink_.drain(out_);
  begin_segment();
}

void Encoder::finish() {
  end_segment();
}

void Encoder::begin_segment() {
  seg_start_ = out_.cur;
  seg_events_ = 0;
  coder().rc.start(out_.cur + kSegmentHeaderBytes);
}

void Encoder::end_segment() {
  if (match_len() != 0) {  // not a match armed with no event yet
    code_cut_match();
  }
  if (seg_events_ == 0) {
    out_.cur = seg_start_;  // nothing coded, nothing written
    return;
  }
  RangeEncoder& rc = coder().rc;
  rc.flush();
  const auto n = static_cast<std::uint32_t>(seg_events_);
  for (unsigned i = 0; i < kSegmentHeaderBytes; ++i) {
    seg_start_[i] = static_cast<std::uint8_t>(n >> (8 * i));
  }
  out_.cur = rc.out();
}

// The LZ table and context of the match's events that try_extend only
// append()ed (LzModel::append: the table is read only at a decision),
// before anything reads them or the match length resets
// (ModelRef::catch_up_match). With a table tail (format version 4) the
// match's first event is its only record()ed one (recorded_len_ 1) and
// this runs only at the match's end, as in the decoder (copy_match).
// A match that arm_next() opened has its first event's record() still
// to do (first_pending_): done here first, so the model ends as if it
// had been record()ed (LzModel::record_deferred).
void Encoder::catch_up_match() {
  if (first_pending_) {
    lz_.record_deferred(first_keys_, match_start_, first_event_);
    first_pending_ = false;
  }
  model_of(lz_, coder().rank, coder().table_tail)
      .catch_up_match(match_len() - recorded_len_, recorded_len_, distance_);
}

// The next decision's prediction, made at the end of one that leaves no
// match open (formats with a table tail): the predicted slot, the
// structural context and the token context, as that decision would
// compute them (the model does not change in between: a flush codes no
// match of no events), and a match of no events yet from that slot. An
// event the slot predicts then continues it in try_extend(), and the
// runtime's entry hook predicts it, instead of taking a decision of its
// own (about half the decisions were such match starts); its record()
// waits for the match's catch-up (first_pending_). The same model, the
// same bytes.
void Encoder::arm_next() {
  make_room();  // where the next decision would check: the same segments
  predict();
  first_event_ = lz_.at(lz_.position() - distance_);
  first_keys_ = lz_.record_keys();
  first_pending_ = true;
  in_match_ = true;
  match_start_ = lz_.position();
  set_recorded_len(1);  // counting the pending first event
}

// A decision's prediction at the position now: the LZ model's slot (then
// position - distance_), the structural context's candidate slot, the
// length context of the token that starts here.
void Encoder::predict() {
  Coder& c = coder();
  // The structural context first: a cache miss on its slot then overlaps
  // the LZ prediction's loads (they are independent).
  slot_ = &model_of(lz_, c.rank, c.table_tail).candidates();
  const std::uint32_t slot = lz_.predicted_slot();
  distance_ = lz_.position() - slot;
  token_ctx_ = c.rank.len_ctx * 2 + (slot_->events[0] == lz_.at(slot));
}

// Ends the segment when it has no room for one more decision (or too
// many events): at every decision, before anything is coded.
void Encoder::make_room() {
  const RangeEncoder& rc = coder().rc;
  const auto free = static_cast<std::uint64_t>(out_.end - rc.out());
  if (free < rc.pending() + kReserveBytes || seg_events_ + match_len() >= kMaxSegmentEvents)
      [[unlikely]] {
    flush_segment();  // codes an open match as cut
  }
}

// After a literal ended a decision: arms the next (formats with a table
// tail) or leaves no match open.
void Encoder::after_literal() {
  end_match();
  if (coder().table_tail != 0) arm_next();
}

// The match's first `len` events are record()ed (its first, or after a
// catch-up): try_extend may append up to kAppendMax more, as the history
// ring must still hold them at the catch-up, and the match up to
// kMaxMatch. With a table tail the catch-up needs only the last
// table_tail (or period) events: no cap but kMaxMatch.
void Encoder::set_recorded_len(std::uint32_t len) {
  recorded_len_ = len;
  cap_end_ =
      match_start_ + (coder().table_tail != 0 ? kMaxMatch : std::min(kMaxMatch, len + kAppendMax));
  update_fast_end();
}

// A match with no literal after it (cut at kMaxMatch or at a segment end).
void Encoder::code_cut_match() {
  catch_up_match();
  Coder& c = coder();
  EncodeBits bits{c.rc};
  const std::uint32_t len = match_len();
  code_length(bits, c.rank, token_ctx_, len, *slot_);
  bits.commit(c.rc);
  seg_events_ += len;
  end_match();
  c.rank.len_ctx = 2;
}

void Encoder::code_token_literal(std::uint32_t len, std::uint32_t v) {
  Coder& c = coder();
  EncodeBits bits{c.rc};
  RankModel& r = c.rank;
  // The literal's candidates first (the same slot either way: the length
  // changes neither the history nor another slot), so that a cache miss
  // on them overlaps the length's coding.
  const ModelRef model = model_of(lz_, r, c.table_tail);
  RankModel::Slot& candidates = len == 0 ? *slot_ : model.candidates();
  code_length(bits, r, token_ctx_, len, *slot_);
  unsigned kind = 0;
  code_literal(bits, r, candidates, lz_.at(lz_.position() - distance_), model.after_exit(), v,
               kind);
  bits.commit(c.rc);
  if (v > r.max_id) r.max_id = v;
  r.len_ctx = (len == 0 ? 3 : 0) + (kind < 2 ? kind : 2);
  seg_events_ += len + 1;
}

void Encoder::encode_decision(std::uint32_t v) {
  if (const std::uint32_t len = match_len();
      len - 1 < kMaxMatch - 1 && v == lz_.at(lz_.position() - distance_)) {
    // The match goes on, but try_extend appended all it may (or the
    // event limit stopped it): catch up (as try_extend, no flush check
    // here). With a table tail only the event limit stops it, and the
    // match's table stores wait for its end.
    if (coder().table_tail != 0) {
      lz_.append(v);
      update_fast_end();
      return;
    }
    catch_up_match();
    lz_.record(v);
    set_recorded_len(len + 1);
    return;
  }
  make_room();
  if (const std::uint32_t len = match_len(); len != 0) {
    if (len != kMaxMatch) {
      // The match ended on a mismatch: its length, then the literal.
      catch_up_match();
      code_token_literal(len, v);
      lz_.record(v);
      after_literal();
      return;
    }
    code_cut_match();
  }
  if (!in_match_) predict();  // else arm_next() predicted this event already
  if (lz_.at(lz_.position() - distance_) == v) {
    in_match_ = true;
    first_pending_ = false;
    match_start_ = lz_.position();
    lz_.record(v);
    set_recorded_len(1);
    return;
  }
  code_token_literal(0, v);
  lz_.record(v);
  after_literal();
}

}  // namespace parlot::codec::v2
