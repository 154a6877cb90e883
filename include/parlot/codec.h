// The Parlot event codec: the one compressor and the one decompressor, shared
// by the runtime (libparlotrt) and the reader. docs/FORMAT.md ("Event stream")
// is the normative description of the bytes produced here.
//
// Algorithm (ParLoT paper §3.2-§3.3, context-hash reading; see
// shared/notes/codec-reading.md for why the context hash and not the value
// hash):
//   1. Events are function IDs, 0 = exit (paper §3.1), IDs < 2^31.
//   2. Word LZ (an LZP-style LZ77 variant): a 4096-entry table maps a hash of
//      the three preceding events to the history position that followed the
//      same three events last time; the event stored there is the prediction.
//      A match is the run of consecutive events that equal the predicted ones,
//      counted one event at a time. The decoder computes the same prediction
//      from what it already decoded, so a match costs only its length.
//      History: a 64K-entry circular buffer of past events.
//   3. Token grammar (16-bit words). At a decision point the encoder emits a
//      length word L in [0, 65535]: L events follow the prediction. If
//      L < 65535 a literal follows (L > 0: the match ended on a mismatch;
//      L == 0: no match). If L == 65535 the next token is a decision point.
//      Literal v: one word v if v < 0x8000, else two words
//      (0x8000 | v >> 16, v & 0xffff).
//   4. Zero elimination (paper §3.3): the word stream, as little-endian bytes,
//      is cut into groups of 8 bytes; each group is written as a bitmap byte
//      (bit i set = byte i non-zero) followed by its non-zero bytes.
// Work per event is bounded (a hash, two table/array writes, at most one
// 9-byte group flush): no block compression ever runs on the traced thread.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "parlot/format.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define PARLOT_CODEC_AVX2 1
#endif

namespace parlot::codec {

/// log2 of the history window (events). Paper §3.3: 64K entries.
inline constexpr unsigned kHistoryBits = 16;
/// log2 of the context hash table (entries). Paper §3.3: 4096 entries.
inline constexpr unsigned kTableBits = 12;
/// log2 of the long-context table (entries; codec 2 from format version 5,
/// docs/FORMAT.md "Long context").
inline constexpr unsigned kLongTableBits = 14;
/// Most events the long context's prediction and the 3-event one are
/// compared over, backwards from their slots (docs/FORMAT.md "Long context").
inline constexpr unsigned kLongCompare = 8;
/// Longest match one length word carries (events).
inline constexpr std::uint32_t kMaxMatch = 0xffff;
/// Largest event value (function ID) the literal encoding carries.
inline constexpr std::uint32_t kMaxValue = 0x7fffffff;
/// Bytes one zero-elimination group can take in the output: bitmap + 8.
inline constexpr std::size_t kMaxGroupBytes = 9;

/// Bytes an event value takes in the uncompressed word stream (2 or 4).
/// This is the "raw bytes" unit of the paper's compression ratio (§4.2).
constexpr std::size_t raw_bytes_of(std::uint32_t value) {
  return value < 0x8000 ? 2 : 4;
}

/// Tag of the constructors that take storage of all zero bytes (see
/// LzModel(ZeroedStorage), v2::Encoder).
struct ZeroedStorage {};

/// Prediction state mirrored exactly by encoder and decoder (paper §3.3).
class LzModel {
 public:
  static constexpr std::uint32_t kHistoryMask = (1u << kHistoryBits) - 1;

  LzModel() { reset(); }
  /// For storage known to be all zero bytes (a fresh anonymous mapping):
  /// the history and the table keep those bytes (their initial state)
  /// instead of being written, so their pages are touched only when used.
  explicit LzModel(ZeroedStorage) : c1_(0), c2_(0), c3_(0), pos_(0), hash_(hash_of(0, 0, 0)) {}

  void reset() { reset_after(history_.size()); }

  /// reset() of a model that recorded `events` events since it was
  /// constructed or last reset (the caller counts them): clears only the
  /// history slots those events wrote, as the others still hold zero.
  void reset_after(std::uint64_t events) {
    std::fill_n(history_.begin(), events < history_.size() ? events : history_.size(), 0u);
    table_.fill(0);
    long_table_.fill(0);
    c1_ = c2_ = c3_ = 0;
    pos_ = 0;
    hash_ = hash_of(0, 0, 0);
  }

  /// How many events before history slot `a` of the ring `history` equal
  /// those before slot `b`, going back from the newest, at most
  /// kLongCompare (the long context's comparison; slots mod the ring).
  /// `vector`: with AVX2 when the windows do not wrap the ring (the
  /// caller checked the CPU); the same answer as without (tested).
  static unsigned agreement_in(const std::uint32_t* history, std::uint32_t a, std::uint32_t b,
                               bool vector);

  /// Turns the long context on or off (off at construction; codec 2 turns
  /// it on from format version 5, docs/FORMAT.md "Long context"): each
  /// record()ed position then also enters a second table under its last 6
  /// events, and predicted_slot() picks the better of two slots. Kept by
  /// reset(). Set before the first event.
  void set_long_context(bool on) { long_ = on; }

  /// Same history, table, context and position (tests of catch_up()).
  bool operator==(const LzModel&) const = default;

  /// Events recorded so far (mod 2^32).
  std::uint32_t position() const { return pos_; }
  /// History slot predicted to hold the next event: the slot that followed
  /// the last 3 events when they were last seen. With the long context on,
  /// the slot that followed the last 6 events when they were last
  /// record()ed instead, if the events before it agree with the newest
  /// ones further back (at most kLongCompare) than those before the first.
  /// Issue 12: on lua's stream 41% fewer decision points, on sqlite3's 23%.
  std::uint32_t predicted_slot() const {
    const std::uint32_t short_slot = table_[hash_];
    if (!long_) return short_slot;
    const std::uint32_t long_slot = long_table_[long_hash()];
    if (long_slot == 0 || long_slot == short_slot) return short_slot;
    return agreement(long_slot) > agreement(short_slot) ? long_slot : short_slot;
  }
  /// Event stored in history slot `slot` (any value; masked).
  std::uint32_t at(std::uint32_t slot) const { return history_[slot & kHistoryMask]; }
  /// The history ring (1 << kHistoryBits events; slot s holds the event of
  /// every position p with p & kHistoryMask == s), for bulk reads.
  const std::uint32_t* history() const { return history_.data(); }

  /// Replays a match: for k events, reads the event at history slot
  /// `slot` (then the next slots), records it and stores it in `out`.
  /// The same as k times `out[i] = at(slot + i); record(out[i]);`, with the
  /// model in registers (`out` may not alias the model), for a model
  /// without the long context (codec 1; codec 2 before format version 4,
  /// which replays whole matches). Returns the slot after the last one read.
  std::uint32_t replay(std::uint32_t slot, std::size_t k, std::uint32_t* __restrict out) {
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

  /// replay() without the table and the context: copies k events from
  /// history slot `slot` on to the position (and `out`), as k append()s;
  /// a catch_up() must follow before the next prediction. Returns the slot
  /// after the last one read.
  std::uint32_t copy(std::uint32_t slot, std::size_t k, std::uint32_t* __restrict out) {
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

  /// record(v)'s history part alone: stores `v` and advances the position;
  /// the context table and the context (what predicted_slot() reads) stay
  /// as they were until catch_up(). For an encoder inside a match, whose
  /// events need no prediction until the match ends (issue 12: the hot
  /// path's store, shifts and hash move to the match's end, in a loop).
  [[gnu::always_inline]] inline void append(std::uint32_t v) {
    history_[pos_ & kHistoryMask] = v;
    ++pos_;
  }

  /// Brings the table and the context up to date after the last `n`
  /// events were append()ed (n < 1 << kHistoryBits): the state is then
  /// exactly as if they had been record()ed.
  ///
  /// `period` (0: none): the n events are a match copied from `period`
  /// positions back (each equals the event `period` before it) and the
  /// events up to 3 before them too (3 <= the match's record()ed events
  /// + period). Then the context before each of the n events but the last
  /// `period` recurs `period` events later, whose table store overwrites
  /// its own: only the last `period` events are replayed, their context
  /// read from the history. The same table, fewer stores and hashes on
  /// a long match of a short loop.
  ///
  /// `tail` (0: none; codec 2 from format version 4): when the period rule
  /// does not apply and n > tail, only the last `tail` events enter the
  /// table (the context still ends as after all n): a long match that does
  /// not repeat itself leaves the table's older entries for its other
  /// contexts (docs/FORMAT.md "Context table in a match"). Then the state
  /// is no longer the one record() would leave; encoder and decoder call
  /// it the same way.
  void catch_up(std::uint32_t n, std::uint32_t period = 0, std::uint32_t tail = 0) {
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

  /// Where record() of the event at the position now would store it: the
  /// context table's index and the long context's (for record_deferred).
  struct RecordKeys {
    std::uint32_t short_key;
    std::uint32_t long_key;
  };
  RecordKeys record_keys() const { return {hash_, long_ ? long_hash() : 0}; }

  /// record(v) of the event at position `p`, done later: `v` was append()ed
  /// at `p`, `keys` were record_keys() then, and every event since was only
  /// append()ed (no record(), no catch_up()). The state is then exactly as
  /// if `v` had been record()ed and the events after it append()ed (the
  /// table stores in the same order), however long ago `p` is.
  void record_deferred(RecordKeys keys, std::uint32_t p, std::uint32_t v) {
    const std::uint32_t slot = p & kHistoryMask;
    table_[keys.short_key] = static_cast<std::uint16_t>(slot);
    if (long_) long_table_[keys.long_key] = static_cast<std::uint16_t>(slot);
    shift_context(v);
  }

  /// Appends event `v`: remembers that the current context was followed by
  /// this position (in the long context's table too, when on), stores `v`
  /// in the history, shifts the context.
  [[gnu::always_inline]] inline void record(std::uint32_t v) {
    const std::uint32_t slot = pos_ & kHistoryMask;
    table_[hash_] = static_cast<std::uint16_t>(slot);
    if (long_) long_table_[long_hash()] = static_cast<std::uint16_t>(slot);
    history_[slot] = v;
    ++pos_;
    shift_context(v);
  }

 private:
  static constexpr std::uint32_t kHashA = 0x9e3779b1u, kHashB = 0x85ebca77u, kHashC = 0xc2b2ae3du,
                                 kHashMix = 0x2c1b3c6du;
  static std::uint32_t hash_of(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    const std::uint32_t x = a * kHashA ^ b * kHashB ^ c * kHashC;
    return (x ^ (x >> 15)) * kHashMix >> (32 - kTableBits);
  }
  // The context after event `v`: the last 3 events and their hash.
  [[gnu::always_inline]] inline void shift_context(std::uint32_t v) {
    c3_ = c2_;
    c2_ = c1_;
    c1_ = v;
    hash_ = hash_of(c1_, c2_, c3_);
  }
  // The long context of the position: its last 3 events' hash (hash_) and
  // the hash of the 3 before them, from the history. Always inlined: as a
  // call it made the runtime's out-of-line entry path (raw words, codec 1)
  // save 4 registers per entry (issue 12).
  [[gnu::always_inline]] inline std::uint32_t long_hash() const {
    const std::uint32_t older = hash_of(at(pos_ - 4), at(pos_ - 5), at(pos_ - 6));
    return ((hash_ << kTableBits | older) * kHashA) >> (32 - kLongTableBits);
  }
  // agreement_in() of history slot `slot` and the position.
  unsigned agreement(std::uint32_t slot) const {
    bool vector = false;
#ifdef PARLOT_CODEC_AVX2
    vector = cpu_has_avx2();
#endif
    return agreement_in(history_.data(), slot, pos_, vector);
  }

  // catch_up()'s table stores for positions p, p + 1, ... (before pos_),
  // 8 at a time with AVX2 (the 4 multiplies of each context hash in
  // vector lanes, the stores in order) while 8 remain and their contexts
  // do not wrap the ring; returns the first position not done. Without
  // AVX2 (the CPU's or the compiler's) returns p.
  std::uint32_t table_stores_avx2(std::uint32_t p) {
#ifdef PARLOT_CODEC_AVX2
    if (pos_ - p < 16 || !cpu_has_avx2()) return p;
    return table_stores_8(history_.data(), table_.data(), p, pos_);
#else
    return p;
#endif
  }

#ifdef PARLOT_CODEC_AVX2
  // True when the CPU runs AVX2 (cpuid once; racy first calls compute the
  // same answer). No lock, no syscall: callable inside the runtime's hooks.
  static bool cpu_has_avx2() {
    static std::atomic<int> known{-1};
    int k = known.load(std::memory_order_relaxed);
    if (k < 0) {
      __builtin_cpu_init();
      k = __builtin_cpu_supports("avx2") ? 1 : 0;
      known.store(k, std::memory_order_relaxed);
    }
    return k != 0;
  }

  // agreement() over two windows of 8 events that do not wrap the ring,
  // their newest last: how many of the newest are equal, in one compare.
  [[gnu::target("avx2")]] static unsigned agreement_8(const std::uint32_t* x,
                                                      const std::uint32_t* y) {
    const __m256i eq = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)),
                                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y)));
    const unsigned differ =
        ~static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(eq))) & 0xffu;
    return differ == 0 ? 8 : 7 - static_cast<unsigned>(std::bit_width(differ) - 1);
  }

  [[gnu::target("avx2")]] static std::uint32_t table_stores_8(const std::uint32_t* history,
                                                              std::uint16_t* table, std::uint32_t p,
                                                              std::uint32_t end) {
    const __m256i ka = _mm256_set1_epi32(static_cast<int>(kHashA));
    const __m256i kb = _mm256_set1_epi32(static_cast<int>(kHashB));
    const __m256i kc = _mm256_set1_epi32(static_cast<int>(kHashC));
    const __m256i km = _mm256_set1_epi32(static_cast<int>(kHashMix));
    alignas(32) std::uint32_t h[8];
    while (end - p >= 8) {
      const std::uint32_t s = p & kHistoryMask;
      if (s < 3 || s > kHistoryMask + 1 - 8) break;  // the 11 events would wrap the ring
      const auto* at = history + s;
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at - 1));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at - 2));
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at - 3));
      __m256i x = _mm256_xor_si256(_mm256_mullo_epi32(a, ka), _mm256_mullo_epi32(b, kb));
      x = _mm256_xor_si256(x, _mm256_mullo_epi32(c, kc));
      x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
      x = _mm256_srli_epi32(_mm256_mullo_epi32(x, km), 32 - kTableBits);
      _mm256_store_si256(reinterpret_cast<__m256i*>(h), x);
      // Unrolled: 3 instructions a store, not 6 (lua's encoder alone 3% faster).
#pragma GCC unroll 8
      for (unsigned i = 0; i < 8; ++i) table[h[i]] = static_cast<std::uint16_t>(s + i);
      p += 8;
    }
    return p;
  }
#endif

  std::array<std::uint32_t, 1u << kHistoryBits> history_;
  std::array<std::uint16_t, 1u << kTableBits> table_;
  // The long context's table (set_long_context); 0 = no entry.
  std::array<std::uint16_t, 1u << kLongTableBits> long_table_;
  std::uint32_t c1_, c2_, c3_;
  std::uint32_t pos_;
  std::uint32_t hash_;
  bool long_ = false;
};

inline unsigned LzModel::agreement_in(const std::uint32_t* history, std::uint32_t a,
                                      std::uint32_t b, bool vector) {
#ifdef PARLOT_CODEC_AVX2
  static_assert(kLongCompare == 8);
  const std::uint32_t first_a = (a - kLongCompare) & kHistoryMask;
  const std::uint32_t first_b = (b - kLongCompare) & kHistoryMask;
  if (vector && first_a <= kHistoryMask + 1 - kLongCompare &&
      first_b <= kHistoryMask + 1 - kLongCompare) {
    return agreement_8(history + first_a, history + first_b);
  }
#endif
  (void)vector;
  unsigned k = 0;
  while (k < kLongCompare &&
         history[(a - 1 - k) & kHistoryMask] == history[(b - 1 - k) & kHistoryMask])
    ++k;
  return k;
}

/// Output window of an encoder: bytes [cur, end) are free. When fewer than
/// kMaxGroupBytes remain the encoder calls `sink.drain(*this)`, which must
/// consume the bytes written so far and leave at least kMaxGroupBytes free.
struct OutputWindow {
  std::uint8_t* cur = nullptr;
  std::uint8_t* end = nullptr;
};

/// Incremental compressor: word LZ + zero elimination (paper §3.3).
/// `Sink` provides `void drain(OutputWindow&)`. Not thread-safe: one encoder
/// per thread stream.
template <class Sink>
class Encoder {
 public:
  Encoder(Sink& sink, OutputWindow window) : sink_(sink), out_(window) {}

  /// Compresses one event (function ID, 0 = exit; must be <= kMaxValue).
  /// Bounded work; calls the sink only when the output window is full.
  /// The common case, an event that extends the current match, is inlined
  /// into the caller; everything else is one out-of-line call.
  [[gnu::always_inline]] inline void encode(std::uint32_t v) {
    if (!try_extend(v)) [[unlikely]]
      encode_decision(v);
  }

  /// encode(v)'s common case alone: when `v` extends the current match,
  /// records it and returns true; otherwise changes nothing and returns
  /// false (then call encode(v)).
  [[gnu::always_inline]] inline bool try_extend(std::uint32_t v) {
    if (match_len_ - 1 < kMaxMatch - 1 && v == model_.at(match_slot_)) [[likely]] {
      ++match_len_;  // 1 <= match_len_ < kMaxMatch before: the match goes on
      ++match_slot_;
      model_.record(v);
      return true;
    }
    return false;
  }

  /// Emits the pending match and pads the last zero-elimination group with
  /// zero bytes. The stream then ends; a decoder stops at the event count
  /// recorded beside it (docs/FORMAT.md). No event may be encoded afterwards.
  void finish() {
    if (match_len_ != 0) {
      put_word(static_cast<std::uint16_t>(match_len_));
      match_len_ = 0;
    }
    while (group_words_ != 0) put_word(0);
  }

  OutputWindow& window() { return out_; }
  /// Events encoded but still held in the pending match (not yet in output).
  std::uint32_t pending_match() const { return match_len_; }

 private:
  // Every event that does not extend a match: ends a match (length word,
  // then a literal unless the match was full) and/or starts a new one.
  [[gnu::noinline]] void encode_decision(std::uint32_t v) {
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

  inline void put_literal(std::uint32_t v) {
    if (v < 0x8000) [[likely]] {
      put_word(static_cast<std::uint16_t>(v));
    } else {
      put_word(static_cast<std::uint16_t>(0x8000 | (v >> 16)));
      put_word(static_cast<std::uint16_t>(v & 0xffff));
    }
  }

  inline void put_word(std::uint16_t w) {
    group_ |= static_cast<std::uint64_t>(w) << (16 * group_words_);
    if (++group_words_ == 4) flush_group();
  }

  inline void flush_group() {
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

  Sink& sink_;
  OutputWindow out_;
  LzModel model_;
  std::uint64_t group_ = 0;
  unsigned group_words_ = 0;
  std::uint32_t match_len_ = 0;
  std::uint32_t match_slot_ = 0;
};

/// Uncompressed writer (paper's ParLoT-NC): each event as its literal words,
/// little-endian, no LZ, no zero elimination.
template <class Sink>
class RawEncoder {
 public:
  RawEncoder(Sink& sink, OutputWindow window) : sink_(sink), out_(window) {}

  inline void encode(std::uint32_t v) {
    if (static_cast<std::size_t>(out_.end - out_.cur) < 4) [[unlikely]]
      sink_.drain(out_);
    if (v < 0x8000) [[likely]] {
      store(static_cast<std::uint16_t>(v));
    } else {
      store(static_cast<std::uint16_t>(0x8000 | (v >> 16)));
      store(static_cast<std::uint16_t>(v & 0xffff));
    }
  }
  /// encode(v) when `v` takes one word and the window has room: true;
  /// otherwise changes nothing and returns false (then call encode(v)).
  [[gnu::always_inline]] inline bool try_put(std::uint32_t v) {
    if (static_cast<std::size_t>(out_.end - out_.cur) < 4 || v >= 0x8000) [[unlikely]]
      return false;
    store(static_cast<std::uint16_t>(v));
    return true;
  }
  void finish() {}
  OutputWindow& window() { return out_; }
  std::uint32_t pending_match() const { return 0; }

 private:
  inline void store(std::uint16_t w) {
    out_.cur[0] = static_cast<std::uint8_t>(w);
    out_.cur[1] = static_cast<std::uint8_t>(w >> 8);
    out_.cur += 2;
  }
  Sink& sink_;
  OutputWindow out_;
};

/// Outcome of a decoder's `next` call.
enum class DecodeStatus { kOk, kNeedInput, kError };

}  // namespace parlot::codec

#include "parlot/codec_v2.h"

namespace parlot::codec {

/// Streaming decompressor for every codec. Feed it the payload of each data
/// block in order with `feed`, then pull events with `next` until it returns
/// 0. Memory is constant (the model plus one group) however long the stream.
/// It never reads outside the fed bytes; malformed input is reported through
/// `error()` with the offset (bytes from the start of the current feed).
class Decoder {
 public:
  using Status = DecodeStatus;

  /// `lz`: true for Codec::kLzZe, false for Codec::kRawWords.
  explicit Decoder(bool lz) : lz_(lz) {}
  /// A decoder for `codec` (any format::Codec value; codec 2 allocates its
  /// model, about 1 MiB).
  explicit Decoder(format::Codec codec)
      : lz_(codec != format::Codec::kRawWords),
        v2_(codec == format::Codec::kLzRank ? std::make_unique<v2::Decoder>() : nullptr) {}

  /// The format version of the file whose stream this decodes (default:
  /// format::kVersion); codec 2 picks its model parts from it
  /// (v2::Model::set_format_version). Set before the first next(); reset() keeps it.
  void set_format_version(unsigned version) {
    if (v2_) v2_->set_format_version(version);
  }

  /// Back to the state of a new decoder of the same codec (a new stream),
  /// keeping its memory (codec 2: the model, reset instead of allocated).
  void reset() {
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
  /// The codec this decoder reads.
  format::Codec codec() const {
    return v2_ ? format::Codec::kLzRank : lz_ ? format::Codec::kLzZe : format::Codec::kRawWords;
  }

  /// Makes `n` bytes at `data` the current input. Must only be called after
  /// `next` reported kNeedInput (or before the first call). The bytes must stay
  /// valid until the next call to `feed`. Codec 2: a block's payload (whole
  /// segments).
  void feed(const std::uint8_t* data, std::size_t n) {
    if (v2_) v2_->feed(data, n);
    in_ = data;
    in_end_ = data + n;
    in_begin_ = data;
  }

  /// Decodes up to `cap` events into `out`. Returns how many it wrote; sets
  /// `status()`: kNeedInput when the current input is used up at a token or
  /// group boundary, kError on malformed input (see error()/error_offset()).
  std::size_t next(std::uint32_t* out, std::size_t cap) {
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

  Status status() const { return status_; }
  const char* error() const { return error_; }
  /// Offset of the error in bytes from the start of the current input.
  std::size_t error_offset() const { return error_offset_; }
  /// True when the stream stands between two tokens (nothing half-decoded);
  /// a truncated stream is detected by the caller from this and the trailer.
  bool at_token_boundary() const {
    if (v2_) return v2_->at_token_boundary();
    return match_left_ == 0 && (lz_ ? state_ == State::kLength : !high_pending_);
  }

 private:
  enum class State { kLength, kLiteral, kLiteralLow };

  // Returns true when a whole literal was completed (and emitted).
  bool literal_step(std::uint16_t w, std::uint32_t* out, std::size_t& n) {
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

  bool next_word(std::uint16_t& w) {
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

  bool fail(const char* what) {
    status_ = Status::kError;
    error_ = what;
    error_offset_ = static_cast<std::size_t>(in_ - in_begin_);
    return false;
  }

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
