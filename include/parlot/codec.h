// The Parlot event codec's inline hot path: what the runtime's per-event
// encode step inlines. The codec itself (the models' slow paths, the range
// coder, the decoders, the block framing of codec 2) is the library in
// codec/ (parlot::codec, a static library the runtime and the reader link);
// codec/FORMAT.md is the normative description of the bytes it produces.
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
//   3. Codec 1 writes tokens as 16-bit words and zero-eliminates them; codec
//      2 (codec_v2.h) range-codes them with a model of the call structure.
// An event that continues a match is handled here, inline; everything else
// is one out-of-line call into the library. Work per event is bounded: no
// block compression ever runs on the traced thread.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "parlot/format.h"

namespace parlot::codec {

/// log2 of the history window (events). Paper §3.3: 64K entries.
inline constexpr unsigned kHistoryBits = 16;
/// log2 of the context hash table (entries). Paper §3.3: 4096 entries.
inline constexpr unsigned kTableBits = 12;
/// log2 of the long-context table (entries; codec 2 from format version 5,
/// codec/FORMAT.md "Long context").
inline constexpr unsigned kLongTableBits = 14;
/// Most events the long context's prediction and the 3-event one are
/// compared over, backwards from their slots (codec/FORMAT.md "Long context").
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

/// Output window of an encoder: bytes [cur, end) are free. When fewer than
/// it needs remain the encoder calls its Sink's drain(), which must consume
/// the bytes written so far and leave room (kMaxGroupBytes for codec 1 and
/// the raw words, v2::kMinWindowBytes for codec 2).
struct OutputWindow {
  std::uint8_t* cur = nullptr;
  std::uint8_t* end = nullptr;
};

/// Where an encoder's output goes: a reference to any object with a
/// `void drain(OutputWindow&)` member (the runtime's thread trace, a test's
/// vector), which must outlive the encoder. Called only when the window is
/// full and on a flush (cold paths), through one function pointer.
class Sink {
 public:
  /// Refers to `target` (not copied). Implicit, so an encoder is built
  /// from its sink object directly: `Encoder enc(my_sink, window)`.
  template <class T>
  requires(!std::same_as<std::remove_cv_t<T>, Sink>) && requires(T& t, OutputWindow& w) {
    t.drain(w);
  }
  Sink(T& target)  // NOLINT(google-explicit-constructor)
      : target_(&target), drain_([](void* t, OutputWindow& w) { static_cast<T*>(t)->drain(w); }) {}

  /// Hands the window's bytes to the target, which refills `w`.
  void drain(OutputWindow& w) const { drain_(target_, w); }

 private:
  void* target_;
  void (*drain_)(void*, OutputWindow&);
};

/// Prediction state mirrored exactly by encoder and decoder (paper §3.3):
/// the history ring, the context table(s), the last 3 events. What the
/// encoders' fast paths use is inline here; the rest (predictions,
/// replays, catch-ups) is declared here and defined in the library
/// (codec/lz_model.h for the members declared inline, lz_model.cpp).
class LzModel {
 public:
  static constexpr std::uint32_t kHistoryMask = (1u << kHistoryBits) - 1;
  /// The context hash's multipliers (codec/FORMAT.md, "Codec 1").
  static constexpr std::uint32_t kHashA = 0x9e3779b1u, kHashB = 0x85ebca77u, kHashC = 0xc2b2ae3du,
                                 kHashMix = 0x2c1b3c6du;

  /// The initial state: history and tables all 0 (writes about 300 KB).
  LzModel();
  /// For storage known to be all zero bytes (a fresh anonymous mapping):
  /// the history and the table keep those bytes (their initial state)
  /// instead of being written, so their pages are touched only when used.
  explicit LzModel(ZeroedStorage) : c1_(0), c2_(0), c3_(0), pos_(0), hash_(hash_of(0, 0, 0)) {}

  /// Back to the initial state (the long context's setting is kept).
  void reset();

  /// reset() of a model that recorded `events` events since it was
  /// constructed or last reset (the caller counts them): clears only the
  /// history slots those events wrote, as the others still hold zero.
  void reset_after(std::uint64_t events);

  /// How many events before history slot `a` of the ring `history` equal
  /// those before slot `b`, going back from the newest, at most
  /// kLongCompare (the long context's comparison; slots mod the ring).
  /// `vector`: with AVX2 when the windows do not wrap the ring (the
  /// caller checked the CPU); the same answer as without (tested).
  static inline unsigned agreement_in(const std::uint32_t* history, std::uint32_t a,
                                      std::uint32_t b, bool vector);

  /// Turns the long context on or off (off at construction; codec 2 turns
  /// it on from format version 5, codec/FORMAT.md "Long context"): each
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
  /// On lua's stream 41% fewer decision points, on sqlite3's 23%.
  inline std::uint32_t predicted_slot() const;
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
  inline std::uint32_t replay(std::uint32_t slot, std::size_t k, std::uint32_t* __restrict out);

  /// replay() without the table and the context: copies k events from
  /// history slot `slot` on to the position (and `out`), as k append()s;
  /// a catch_up() must follow before the next prediction. Returns the slot
  /// after the last one read.
  inline std::uint32_t copy(std::uint32_t slot, std::size_t k, std::uint32_t* __restrict out);

  /// record(v)'s history part alone: stores `v` and advances the position;
  /// the context table and the context (what predicted_slot() reads) stay
  /// as they were until catch_up(). For an encoder inside a match, whose
  /// events need no prediction until the match ends (the hot path's
  /// store, shifts and hash move to the match's end, in a loop).
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
  /// contexts (codec/FORMAT.md "Context table in a match"). Then the state
  /// is no longer the one record() would leave; encoder and decoder call
  /// it the same way.
  inline void catch_up(std::uint32_t n, std::uint32_t period = 0, std::uint32_t tail = 0);

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
  /// in the history, shifts the context. Inline: codec 1's match path.
  [[gnu::always_inline]] inline void record(std::uint32_t v) {
    const std::uint32_t slot = pos_ & kHistoryMask;
    table_[hash_] = static_cast<std::uint16_t>(slot);
    if (long_) long_table_[long_hash()] = static_cast<std::uint16_t>(slot);
    history_[slot] = v;
    ++pos_;
    shift_context(v);
  }

  /// The context hash of the events a, b, c (newest first): an index of
  /// the context table (codec/FORMAT.md "Codec 1").
  static std::uint32_t hash_of(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    const std::uint32_t x = a * kHashA ^ b * kHashB ^ c * kHashC;
    return (x ^ (x >> 15)) * kHashMix >> (32 - kTableBits);
  }

 private:
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
  // save 4 registers per entry.
  [[gnu::always_inline]] inline std::uint32_t long_hash() const {
    const std::uint32_t older = hash_of(at(pos_ - 4), at(pos_ - 5), at(pos_ - 6));
    return ((hash_ << kTableBits | older) * kHashA) >> (32 - kLongTableBits);
  }
  // agreement_in() of history slot `slot` and the position.
  inline unsigned agreement(std::uint32_t slot) const;
  // catch_up()'s table stores for positions p, p + 1, ... (before pos_),
  // 8 at a time with AVX2 while 8 remain and their contexts do not wrap
  // the ring; returns the first position not done (p without AVX2).
  inline std::uint32_t table_stores_avx2(std::uint32_t p);

  std::array<std::uint32_t, 1u << kHistoryBits> history_;
  std::array<std::uint16_t, 1u << kTableBits> table_;
  // The long context's table (set_long_context); 0 = no entry.
  std::array<std::uint16_t, 1u << kLongTableBits> long_table_;
  std::uint32_t c1_, c2_, c3_;
  std::uint32_t pos_;
  std::uint32_t hash_;
  bool long_ = false;
};

/// Incremental compressor of codec 1: word LZ + zero elimination (paper
/// §3.3). Not thread-safe: one encoder per thread stream. Holds its model
/// inline (about 300 KB); trivially destructible.
class Encoder {
 public:
  /// An encoder writing into `window`, handing full windows to `sink`.
  Encoder(Sink sink, OutputWindow window);

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
  void finish();

  OutputWindow& window() { return out_; }
  /// Events encoded but still held in the pending match (not yet in output).
  std::uint32_t pending_match() const { return match_len_; }

 private:
  // Every event that does not extend a match: ends a match (length word,
  // then a literal unless the match was full) and/or starts a new one.
  [[gnu::noinline]] void encode_decision(std::uint32_t v);
  inline void put_literal(std::uint32_t v);
  inline void put_word(std::uint16_t w);
  inline void flush_group();

  Sink sink_;
  OutputWindow out_;
  LzModel model_;
  std::uint64_t group_ = 0;
  unsigned group_words_ = 0;
  std::uint32_t match_len_ = 0;
  std::uint32_t match_slot_ = 0;
};

/// Uncompressed writer (paper's ParLoT-NC): each event as its literal words,
/// little-endian, no LZ, no zero elimination. All inline.
class RawEncoder {
 public:
  /// An encoder writing into `window`, handing full windows to `sink`.
  RawEncoder(Sink sink, OutputWindow window) : sink_(sink), out_(window) {}

  /// Writes one event's literal words (one or two), draining a full window.
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
  /// Nothing to end: every word is in the window.
  void finish() {}
  OutputWindow& window() { return out_; }
  /// Always 0 (no matches).
  std::uint32_t pending_match() const { return 0; }

 private:
  inline void store(std::uint16_t w) {
    out_.cur[0] = static_cast<std::uint8_t>(w);
    out_.cur[1] = static_cast<std::uint8_t>(w >> 8);
    out_.cur += 2;
  }
  Sink sink_;
  OutputWindow out_;
};

}  // namespace parlot::codec

#include "parlot/codec_v2.h"
