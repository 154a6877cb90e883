// Codec 2's coding of match lengths and literals: one template for both
// directions (the encoder's bits and the decoder's), so the decoder mirrors
// the encoder by construction. codec/FORMAT.md "Length", "Literal".
#pragma once

#include <bit>
#include <cstdint>

#include "codec/range_coder.h"
#include "codec/rank_model.h"

namespace parlot::codec::v2 {

/// Coding of lengths and literals, one template for both directions so the
/// decoder mirrors the encoder by construction. `Coder` is a RangeEncoder
/// (bit(p, b) codes b) wrapped or a RangeDecoder wrapped (bit(p, b) ignores
/// b and returns the decoded bit); see EncodeBits and DecodeBits.
/// The probability of a bit coded with a shared probability `shared` and
/// a finer one `fine` used `uses` times before: their average weighted by
/// min(uses / 4, 4) quarters for `fine` (length model 2).
inline std::uint32_t mixed_probability(Prob shared, Prob fine, Probabilities::Uses uses) {
  const std::uint32_t quarters = static_cast<std::uint32_t>(uses) >> 2;
  const std::uint32_t w = quarters < 4 ? quarters : 4;
  return (shared * (4 - w) + fine * w) / 4;
}
/// After a mixed bit `b`: `shared` adapts by 1/32 of its error, `fine` by
/// 1/16, and `uses` counts up to Probabilities::kFullWeightUses.
inline void adapt_mixed(Prob& shared, Prob& fine, Probabilities::Uses& uses, unsigned b) {
  if (b == 0) {
    shared = static_cast<Prob>(shared + (((1u << kProbBits) - shared) >> kAdaptShift));
    fine = static_cast<Prob>(fine + (((1u << kProbBits) - fine) >> (kAdaptShift - 1)));
  } else {
    shared = static_cast<Prob>(shared - (shared >> kAdaptShift));
    fine = static_cast<Prob>(fine - (fine >> (kAdaptShift - 1)));
  }
  if (const auto n = static_cast<std::uint8_t>(uses); n < Probabilities::kFullWeightUses) {
    uses = static_cast<Probabilities::Uses>(n + 1);
  }
}

/// The encoder's bits, on a copy of the range coder's state that the
/// caller commits back (commit()): a local object whose address never
/// escapes, so that with the coding functions inlined the compiler keeps
/// that state in registers between bits. Through a reference it went
/// through memory after every bit, as the coder's byte stores may alias it
/// (issue 12).
struct EncodeBits {
  RangeEncoder rc;
  void commit(RangeEncoder& to) const { to = rc; }
  unsigned bit(Prob& p, unsigned b) {
    rc.bit(p, b);
    return b;
  }
  unsigned mixed(Prob& shared, Prob& fine, Probabilities::Uses& uses, unsigned b) {
    rc.bit_at(mixed_probability(shared, fine, uses), b);
    adapt_mixed(shared, fine, uses, b);
    return b;
  }
  std::uint32_t direct(std::uint32_t v, unsigned n) {
    rc.direct(v, n);
    return v;
  }
};
struct DecodeBits {
  RangeDecoder& rc;
  unsigned bit(Prob& p, unsigned /*b*/) { return rc.bit(p); }
  unsigned mixed(Prob& shared, Prob& fine, Probabilities::Uses& uses, unsigned /*b*/) {
    const unsigned b = rc.bit_at(mixed_probability(shared, fine, uses));
    adapt_mixed(shared, fine, uses, b);
    return b;
  }
  std::uint32_t direct(std::uint32_t /*v*/, unsigned n) { return rc.direct(n); }
};

/// Codes the `width - 1` bits of `len` below its top bit (width >= 1): a
/// binary tree per width up to kLenTreeMax, bit by bit above; returns the
/// length those bits and the top one make.
template <class Bits>
[[gnu::always_inline]] inline std::uint32_t code_low_bits(Bits& bits, Probabilities& p,
                                                          unsigned width, std::uint32_t len) {
  std::uint32_t v = 1;
  if (width <= Probabilities::kLenTreeMax) {
    Prob* tree = p.len_tree + (1u << (width - 1)) - 1;
    for (unsigned i = width - 1; i-- != 0;) v = v << 1 | bits.bit(tree[v], len >> i & 1);
    return v;
  }
  for (unsigned i = width - 1; i-- != 0;) {
    v = v << 1 | bits.bit(p.len_mantissa[width - 1][i], len >> i & 1);
  }
  return v;
}

/// Codes the match length `len` (0 .. kMaxMatch) in context `ctx` as a
/// zero flag, a unary bit width and the bits below the top one; returns it
/// (decoded: possibly out of range on corrupt input, checked by the caller).
template <class Bits>
[[gnu::always_inline]] inline std::uint32_t code_length_plain(Bits& bits, Probabilities& p,
                                                              unsigned ctx, std::uint32_t len) {
  if (bits.bit(p.len_zero[ctx], len == 0) == 1) return 0;
  // len >= 1: its bit width w (1 .. 25) in unary, then its w - 1 low bits.
  const unsigned w = static_cast<unsigned>(std::bit_width(len));
  unsigned width = 1;
  while (width < Probabilities::kLenBits && bits.bit(p.len_width[ctx][width - 1], width < w) == 1) {
    ++width;
  }
  return code_low_bits(bits, p, width, len);
}

/// Length model 2's code_length_plain: the zero flag and the width bits
/// mix the shared context `ctx` with the finer one of (ctx's agreement bit,
/// `last_width`, `group`); the low bits of widths up to kLowTreeMax form a
/// tree in the context of (`last_width`, ctx); wider lengths as in model 1.
template <class Bits>
[[gnu::always_inline]] inline std::uint32_t code_length_by_slot(Bits& bits, Probabilities& p,
                                                                unsigned ctx, unsigned last_width,
                                                                unsigned group, std::uint32_t len) {
  const unsigned agree = ctx & 1;
  if (bits.mixed(p.len_zero[ctx], p.zero_by_last[agree][last_width],
                 p.zero_by_last_uses[agree][last_width], len == 0) == 1) {
    return 0;
  }
  const unsigned w = static_cast<unsigned>(std::bit_width(len));
  Probabilities::ByLastWidth& by = p.of_last_width(last_width);
  Prob* fine = by.width_by_slot[agree][group];
  Probabilities::Uses* uses = by.width_by_slot_uses[agree][group];
  unsigned width = 1;
  while (width < Probabilities::kLenBits && bits.mixed(p.len_width[ctx][width - 1], fine[width - 1],
                                                       uses[width - 1], width < w) == 1) {
    ++width;
  }
  if (width <= Probabilities::kLowTreeMax) {
    // Prefixes v of a width-w length are 1 .. 2^(w-1) - 1: nodes
    // 2^(w-1) .. 2^w - 2 of the context's array, one tree per width.
    Prob* tree = by.low[ctx] + (1u << (width - 1)) - 1;
    std::uint32_t v = 1;
    for (unsigned i = width - 1; i-- != 0;) v = v << 1 | bits.bit(tree[v], len >> i & 1);
    return v;
  }
  return code_low_bits(bits, p, width, len);
}

/// Codes the match length `len` of a token whose decision point had the
/// structural context `slot` (an entry of m.candidates): first whether it
/// repeats the slot's last length (when that is not 0), else
/// code_length_plain (length model 1) or code_length_by_slot (model 2);
/// remembers it in the slot. Returns the length (unchecked when decoding,
/// see above).
template <class Bits>
[[gnu::always_inline]] inline std::uint32_t code_length(Bits& bits, RankModel& m, unsigned ctx,
                                                        std::uint32_t len, RankModel::Slot& slot) {
  if (slot.last_len != 0) {
    if (bits.bit(slot.same, len == slot.last_len) == 1) return slot.last_len;
  }
  std::uint32_t res;
  if (m.length_model == 1) {
    res = code_length_plain(bits, m.probs, ctx, len);
  } else {
    const auto last_width = static_cast<unsigned>(std::bit_width(slot.last_len));
    const auto group =
        static_cast<unsigned>(&slot - m.candidates.data()) % Probabilities::kSlotGroups;
    res = code_length_by_slot(
        bits, m.probs, ctx,
        last_width < Probabilities::kLastWidths ? last_width : Probabilities::kLastWidths - 1,
        group, len);
  }
  slot.last_len = res;
  return res;
}

/// Codes literal `v`, which differs from the LZ prediction `lz_pred`, with
/// the candidate list `cand` of its structural context and the model's
/// largest ID; updates the candidate list (not the largest ID: the caller
/// does, after checking). Returns the literal and sets `kind` (0: rank 0,
/// 1: other rank, 2: exit or new function, 3: an ID seen before). Decoding
/// corrupt input, the literal may be out of range (a new one above
/// kMaxValue, an old one 0 or above max_id): the caller checks.
template <class Bits>
[[gnu::always_inline]] inline std::uint32_t code_literal(Bits& bits, RankModel& m,
                                                         RankModel::Slot& slot,
                                                         std::uint32_t lz_pred, unsigned after_exit,
                                                         std::uint32_t v, unsigned& kind) {
  Probabilities& p = m.probs;
  auto& cand = slot.events;
  unsigned rank = kCandidates;
  bool exit_tried = lz_pred == 0;
  for (unsigned i = 0; i < kCandidates; ++i) {
    const std::uint32_t c = cand[i];
    bool dup = c == lz_pred;
    for (unsigned j = 0; j < i; ++j) dup |= cand[j] == c;
    if (dup) continue;
    exit_tried |= c == 0;
    if (bits.bit(slot.rank[i], v == c) == 1) {
      rank = i;
      v = c;
      break;
    }
  }
  if (rank == kCandidates) {
    kind = 2;
    if (!exit_tried && bits.bit(p.is_exit[after_exit], v == 0) == 1) {
      v = 0;
    } else if (bits.bit(p.is_new[after_exit], v > m.max_id) == 1) {
      // A function not seen before: v - max_id (>= 1) as width + bits.
      const std::uint32_t d = v - m.max_id;
      const unsigned w = static_cast<unsigned>(std::bit_width(d));
      unsigned width = 1;
      while (width < 32 && bits.bit(p.new_width[width - 1], width < w) == 1) ++width;
      std::uint32_t x = 1;
      if (width > 1) {
        x = x << 1 | bits.bit(p.new_mantissa[width - 1], d >> (width - 2) & 1);
        x = x << (width - 2) | bits.direct(d & ((1u << (width - 2)) - 1), width - 2);
      }
      v = m.max_id + x;  // may overflow on corrupt input: checked by the caller
      if (v < m.max_id || x > 0x7fffffffu) v = 0xffffffffu;
    } else {
      // An ID seen before: its bits, as many as max_id has.
      const unsigned w = static_cast<unsigned>(std::bit_width(m.max_id));
      v = bits.direct(v, w);
      kind = 3;
    }
    for (unsigned i = kCandidates - 1; i != 0; --i) cand[i] = cand[i - 1];
    cand[0] = v;
  } else {
    kind = rank == 0 ? 0 : 1;
    for (unsigned i = rank; i != 0; --i) cand[i] = cand[i - 1];
    cand[0] = v;
  }
  return v;
}

}  // namespace parlot::codec::v2
