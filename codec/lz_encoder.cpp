// Codec 1's encoder, everything but its inline fast path (that is in
// include/parlot/codec.h): decisions, token words, zero elimination.
#include "codec/lz_model.h"
#include "parlot/codec.h"

namespace parlot::codec {

Encoder::Encoder(Sink sink, OutputWindow window) : sink_(sink), out_(window) {}

inline void Encoder::put_literal(std::uint32_t v) {
  if (v < 0x8000) [[likely]] {
    put_word(static_cast<std::uint16_t>(v));
  } else {
    put_word(static_cast<std::uint16_t>(0x8000 | (v >> 16)));
    put_word(static_cast<std::uint16_t>(v & 0xffff));
  }
}

inline void Encoder::put_word(std::uint16_t w) {
  group_ |= static_cast<std::uint64_t>(w) << (16 * group_words_);
  if (++group_words_ == 4) flush_group();
}

inline void Encoder::flush_group() {
  if (static_cast<std::size_t>(out_.end - out_.cur) < kMaxGroupBytes) [[unlikely]] {
    sink_.drain(out_);
  }
  const std::uint64_t g = group_;
  std::uint8_t* p = out_.cur;
  std::uint8_t* q = p + 1;
  unsigned bitmap = 0;
  for (unsigned i = 0; i < 8; ++i) {
    const auto b = static_cast<std::uint8_t>(g >> (8 * i));
    *q = b;
    const unsigned nz = b != 0;
    bitmap |= nz << i;
    q += nz;
  }
  *p = static_cast<std::uint8_t>(bitmap);
  out_.cur = q;
  group_ = 0;
  group_words_ = 0;
}

void Encoder::encode_decision(std::uint32_t v) {
  if (match_len_ != 0) {
    const bool full = match_len_ == kMaxMatch;
    put_word(static_cast<std::uint16_t>(match_len_));
    match_len_ = 0;
    if (!full) {
      put_literal(v);
      model_.record(v);
      return;
    }
  }
  const std::uint32_t slot = model_.predicted_slot();
  if (model_.at(slot) == v) {
    match_len_ = 1;
    match_slot_ = slot + 1;
  } else {
    put_word(0);
    put_literal(v);
  }
  model_.record(v);
}

void Encoder::finish() {
  if (match_len_ != 0) {
    put_word(static_cast<std::uint16_t>(match_len_));
    match_len_ = 0;
  }
  while (group_words_ != 0) put_word(0);
}

}  // namespace parlot::codec
