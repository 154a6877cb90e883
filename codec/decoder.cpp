// codec::Decoder (codec/decoder.h): codecs 0 and 1, and codec 2's
// dispatch to v2::Decoder.
#include "codec/decoder.h"

#include <bit>

#include "codec/lz_model.h"
#include "codec/rank_decoder.h"

namespace parlot::codec {

Decoder::Decoder(bool lz) : lz_(lz) {}

Decoder::Decoder(format::Codec codec)
    : lz_(codec != format::Codec::kRawWords),
      v2_(codec == format::Codec::kLzRank ? std::make_unique<v2::Decoder>() : nullptr) {}

Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

void Decoder::set_format_version(unsigned version) {
  if (v2_) v2_->set_format_version(version);
}

void Decoder::reset() {
  if (v2_) {
    v2_->reset();  // codec 1's model is not used: not written
  } else {
    model_.reset();
  }
  state_ = State::kLength;
  high_pending_ = false;
  high_ = 0;
  match_left_ = 0;
  match_slot_ = 0;
  group_ = 0;
  group_left_ = 0;
  in_ = in_end_ = in_begin_ = nullptr;
  status_ = Status::kOk;
  error_ = "";
  error_offset_ = 0;
}

void Decoder::feed(const std::uint8_t* data, std::size_t n) {
  if (v2_) v2_->feed(data, n);
  in_ = data;
  in_end_ = data + n;
  in_begin_ = data;
}

// Returns true when a whole literal was completed (and emitted).
inline bool Decoder::literal_step(std::uint16_t w, std::uint32_t* out, std::size_t& n) {
  if (high_pending_) {
    high_pending_ = false;
    const std::uint32_t v = (high_ << 16) | w;
    if (lz_) model_.record(v);
    out[n++] = v;
    return true;
  }
  if (w & 0x8000) {
    high_ = w & 0x7fff;
    high_pending_ = true;
    if (lz_) state_ = State::kLiteralLow;
    return false;
  }
  if (lz_) model_.record(w);  // the raw codec has no model
  out[n++] = w;
  return true;
}

inline bool Decoder::next_word(std::uint16_t& w) {
  if (!lz_) {
    if (in_end_ - in_ < 2) {
      if (in_ != in_end_) return fail("odd byte at the end of a raw-word block");
      status_ = Status::kNeedInput;
      return false;
    }
    w = static_cast<std::uint16_t>(in_[0] | in_[1] << 8);
    in_ += 2;
    return true;
  }
  if (group_left_ == 0) {
    if (in_ == in_end_) {
      status_ = Status::kNeedInput;
      return false;
    }
    const unsigned bitmap = *in_;
    const std::size_t need = 1 + static_cast<std::size_t>(std::popcount(bitmap));
    if (static_cast<std::size_t>(in_end_ - in_) < need) {
      return fail("zero-elimination group cut short");
    }
    const std::uint8_t* p = in_ + 1;
    std::uint64_t g = 0;
    for (unsigned i = 0; i < 8; ++i) {
      if (bitmap >> i & 1) g |= static_cast<std::uint64_t>(*p++) << (8 * i);
    }
    in_ = p;
    group_ = g;
    group_left_ = 4;
  }
  w = static_cast<std::uint16_t>(group_);
  group_ >>= 16;
  --group_left_;
  return true;
}

inline bool Decoder::fail(const char* what) {
  status_ = Status::kError;
  error_ = what;
  error_offset_ = static_cast<std::size_t>(in_ - in_begin_);
  return false;
}

std::size_t Decoder::next(std::uint32_t* out, std::size_t cap) {
  if (v2_) {
    const std::size_t n = v2_->next(out, cap);
    status_ = v2_->status();
    error_ = v2_->error();
    error_offset_ = v2_->error_offset();
    return n;
  }
  status_ = Status::kOk;
  std::size_t n = 0;
  while (n < cap) {
    if (match_left_ != 0) {
      const std::size_t k = match_left_ < cap - n ? match_left_ : cap - n;
      match_left_ -= static_cast<std::uint32_t>(k);
      match_slot_ = model_.replay(match_slot_, k, out + n);
      n += k;
      continue;
    }
    std::uint16_t w;
    if (!next_word(w)) break;
    if (!lz_) {
      literal_step(w, out, n);
      continue;
    }
    switch (state_) {
      case State::kLength:
        if (w == 0) {
          state_ = State::kLiteral;
        } else {
          const std::uint32_t slot = model_.predicted_slot();
          match_slot_ = slot;
          match_left_ = w;
          state_ = w == kMaxMatch ? State::kLength : State::kLiteral;
        }
        break;
      case State::kLiteral:
      case State::kLiteralLow:
        if (literal_step(w, out, n)) state_ = State::kLength;
        break;
    }
  }
  return n;
}

bool Decoder::at_token_boundary() const {
  if (v2_) return v2_->at_token_boundary();
  return match_left_ == 0 && (lz_ ? state_ == State::kLength : !high_pending_);
}

}  // namespace parlot::codec
