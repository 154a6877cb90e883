// Codec 2's decoder (codec/rank_decoder.h): segments, tokens, the model.
#include "codec/rank_decoder.h"

#include "codec/lz_model.h"
#include "codec/segments.h"
#include "codec/token_coding.h"

namespace parlot::codec::v2 {

void Decoder::reset() {
  model_.lz.reset_after(events_);
  events_ = 0;
  model_.rank.reset();
  rc_ = RangeDecoder{};
  slot_ = nullptr;
  seg_left_ = 0;
  match_left_ = 0;
  match_slot_ = 0;
  match_distance_ = 0;
  last_len_ = 0;
  literal_pending_ = false;
  in_ = in_end_ = in_begin_ = nullptr;
  status_ = DecodeStatus::kOk;
  error_ = "";
  error_offset_ = 0;
}

inline void Decoder::copy_match(std::size_t k, std::uint32_t* out) {
  LzModel& lz = model_.lz;
  std::size_t done = 0;
  if (match_left_ == last_len_) {
    out[0] = lz.at(match_slot_++);
    lz.record(out[0]);
    done = 1;
  }
  match_slot_ = lz.copy(match_slot_, k - done, out + done);
  if (k == match_left_) {
    model_.catch_up_match(last_len_ - 1, 1, match_distance_);
  }
}

std::size_t Decoder::next_events(std::uint32_t* out, std::size_t cap) {
  status_ = DecodeStatus::kOk;
  std::size_t n = 0;
  LzModel& lz = model_.lz;
  while (n < cap) {
    if (match_left_ != 0) {
      const std::size_t k = match_left_ < cap - n ? match_left_ : cap - n;
      if (model_.table_tail == 0) {
        match_slot_ = lz.replay(match_slot_, k, out + n);
      } else {
        copy_match(k, out + n);
      }
      match_left_ -= static_cast<std::uint32_t>(k);
      n += k;
      continue;
    }
    if (literal_pending_) {
      DecodeBits bits{rc_};
      RankModel& r = model_.rank;
      unsigned kind = 0;
      const std::uint32_t v = code_literal(bits, r, last_len_ == 0 ? *slot_ : model_.candidates(),
                                           lz.at(match_slot_), model_.after_exit(), 0, kind);
      if (rc_.overrun()) return fail_at_coder("literal cut short", n);
      if (kind == 3 ? v == 0 || v > r.max_id : v > kMaxValue) {
        return fail_at_coder("literal out of range", n);
      }
      if (v > r.max_id) r.max_id = v;
      r.len_ctx = (last_len_ == 0 ? 3 : 0) + (kind < 2 ? kind : 2);
      lz.record(v);
      out[n++] = v;
      literal_pending_ = false;
      if (--seg_left_ == 0) end_segment();
      continue;
    }
    if (seg_left_ == 0) {
      if (in_ == in_end_) {
        status_ = DecodeStatus::kNeedInput;
        break;
      }
      if (static_cast<std::size_t>(in_end_ - in_) < kSegmentHeaderBytes + 5) {
        fail("segment cut short", in_);
        break;
      }
      std::uint32_t count = 0;
      for (unsigned i = 0; i < kSegmentHeaderBytes; ++i) count |= std::uint32_t{in_[i]} << (8 * i);
      if (count == 0 || count > kMaxSegmentEvents) {
        fail("bad segment event count", in_);
        break;
      }
      seg_left_ = count;
      rc_.start(in_ + kSegmentHeaderBytes, in_end_);
    }
    DecodeBits bits{rc_};
    slot_ = &model_.candidates();
    const std::uint32_t predicted = lz.predicted_slot();
    const unsigned ctx = model_.rank.len_ctx * 2 + (slot_->events[0] == lz.at(predicted));
    const std::uint32_t len = code_length(bits, model_.rank, ctx, 0, *slot_);
    if (rc_.overrun()) return fail_at_coder("match length cut short", n);
    if (len > seg_left_ || len > kMaxMatch) {
      return fail_at_coder("match longer than its segment", n);
    }
    seg_left_ -= len;
    last_len_ = len;
    match_slot_ = predicted;
    match_distance_ = lz.position() - match_slot_;
    match_left_ = len;
    literal_pending_ = len < kMaxMatch && seg_left_ != 0;
    if (!literal_pending_) {
      model_.rank.len_ctx = 2;
      if (seg_left_ == 0) end_segment();
    }
  }
  return n;
}

}  // namespace parlot::codec::v2
