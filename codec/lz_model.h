// LzModel's slow paths (include/parlot/codec.h declares them inline): the
// prediction, the decoders' replays and copies, the catch-up of a match's
// table stores. Internal to the codec library and its tests; the runtime's
// hot path never calls them (codec/FORMAT.md "Codec 1" states the model).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "parlot/codec.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PARLOT_CODEC_AVX2 1
#endif

namespace parlot::codec::detail {

#ifdef PARLOT_CODEC_AVX2
/// True when the CPU runs AVX2 (cpuid once; racy first calls compute the
/// same answer). No lock, no syscall: callable inside the runtime's hooks.
inline bool cpu_has_avx2() {
  static std::atomic<int> known{-1};
  int k = known.load(std::memory_order_relaxed);
  if (k < 0) {
    __builtin_cpu_init();
    k = __builtin_cpu_supports("avx2") ? 1 : 0;
    known.store(k, std::memory_order_relaxed);
  }
  return k != 0;
}

/// LzModel::agreement_in over two windows of 8 events that do not wrap the
/// ring, their newest last (`x`, `y` point at the oldest): how many of the
/// newest are equal (0 .. 8), in one compare. AVX2 only (cpu_has_avx2()).
unsigned agreement_8(const std::uint32_t* x, const std::uint32_t* y);

/// LzModel::catch_up's table stores of positions p, p + 1, ... (< end), 8
/// at a time (the 4 multiplies of each context hash in vector lanes, the
/// stores in order), while 8 remain and their contexts do not wrap the
/// ring `history`; returns the first position not done. AVX2 only.
std::uint32_t table_stores_8(const std::uint32_t* history, std::uint16_t* table, std::uint32_t p,
                             std::uint32_t end);
#endif

}  // namespace parlot::codec::detail

namespace parlot::codec {

inline std::uint32_t LzModel::predicted_slot() const {
  const std::uint32_t short_slot = table_[hash_];
  if (!long_) return short_slot;
  const std::uint32_t long_slot = long_table_[long_hash()];
  if (long_slot == 0 || long_slot == short_slot) return short_slot;
  return agreement(long_slot) > agreement(short_slot) ? long_slot : short_slot;
}

inline std::uint32_t LzModel::replay(std::uint32_t slot, std::size_t k,
                                     std::uint32_t* __restrict out) {
  std::uint32_t c1 = c1_, c2 = c2_, c3 = c3_, pos = pos_, h = hash_;
  std::uint32_t* __restrict history = history_.data();
  std::uint16_t* __restrict table = table_.data();
  for (std::size_t i = 0; i < k; ++i) {
    const std::uint32_t v = history[slot++ & kHistoryMask];
    table[h] = static_cast<std::uint16_t>(pos & kHistoryMask);
    history[pos & kHistoryMask] = v;
    c3 = c2;
    c2 = c1;
    c1 = v;
    ++pos;
    h = hash_of(c1, c2, c3);
    out[i] = v;
  }
  c1_ = c1;
  c2_ = c2;
  c3_ = c3;
  pos_ = pos;
  hash_ = h;
  return slot;
}

inline std::uint32_t LzModel::copy(std::uint32_t slot, std::size_t k,
                                   std::uint32_t* __restrict out) {
  std::uint32_t pos = pos_;
  std::uint32_t* __restrict history = history_.data();
  for (std::size_t i = 0; i < k; ++i) {
    const std::uint32_t v = history[slot++ & kHistoryMask];
    history[pos++ & kHistoryMask] = v;
    out[i] = v;
  }
  pos_ = pos;
  return slot;
}

inline void LzModel::catch_up(std::uint32_t n, std::uint32_t period, std::uint32_t tail) {
  std::uint32_t p = pos_ - n;
  if (period != 0 && n > period + 3) {
    p = pos_ - period;
  } else if (tail != 0 && n > tail) {
    p = pos_ - tail;
  }
  if (p == pos_) return;
  // The context before position q is always the history's 3 events
  // before q (record() keeps c1_ = the event at pos_ - 1, ...; the
  // history starts zeroed like the context): replays read it there.
  p = table_stores_avx2(p);
  const std::uint32_t* __restrict history = history_.data();
  std::uint16_t* __restrict table = table_.data();
  std::uint32_t c1 = history[(p - 1) & kHistoryMask];
  std::uint32_t c2 = history[(p - 2) & kHistoryMask];
  std::uint32_t c3 = history[(p - 3) & kHistoryMask];
  std::uint32_t h = hash_of(c1, c2, c3);
  for (; p != pos_; ++p) {
    table[h] = static_cast<std::uint16_t>(p & kHistoryMask);
    c3 = c2;
    c2 = c1;
    c1 = history[p & kHistoryMask];
    h = hash_of(c1, c2, c3);
  }
  c1_ = c1;
  c2_ = c2;
  c3_ = c3;
  hash_ = h;
}

inline unsigned LzModel::agreement(std::uint32_t slot) const {
  bool vector = false;
#ifdef PARLOT_CODEC_AVX2
  vector = detail::cpu_has_avx2();
#endif
  return agreement_in(history_.data(), slot, pos_, vector);
}

inline std::uint32_t LzModel::table_stores_avx2(std::uint32_t p) {
#ifdef PARLOT_CODEC_AVX2
  if (pos_ - p < 16 || !detail::cpu_has_avx2()) return p;
  return detail::table_stores_8(history_.data(), table_.data(), p, pos_);
#else
  return p;
#endif
}

inline unsigned LzModel::agreement_in(const std::uint32_t* history, std::uint32_t a,
                                      std::uint32_t b, bool vector) {
#ifdef PARLOT_CODEC_AVX2
  static_assert(kLongCompare == 8);
  const std::uint32_t first_a = (a - kLongCompare) & kHistoryMask;
  const std::uint32_t first_b = (b - kLongCompare) & kHistoryMask;
  if (vector && first_a <= kHistoryMask + 1 - kLongCompare &&
      first_b <= kHistoryMask + 1 - kLongCompare) {
    return detail::agreement_8(history + first_a, history + first_b);
  }
#endif
  (void)vector;
  unsigned k = 0;
  while (k < kLongCompare &&
         history[(a - 1 - k) & kHistoryMask] == history[(b - 1 - k) & kHistoryMask])
    ++k;
  return k;
}

}  // namespace parlot::codec
