// Parlot event codec 2: the one compressor and the one decompressor of
// format::Codec::kLzRank, shared by the runtime and the reader (included by
// parlot/codec.h). docs/FORMAT.md ("Codec 2") is the normative description.
//
// Algorithm:
//   1. The match path of codec 1 (paper §3.3, context-hash word LZ over a
//      64K-event history): an event that continues a match costs the same
//      few instructions as in codec 1 and writes nothing. Since format
//      version 4 a match that does not repeat itself writes the context
//      table only for its first and last kTableTail events (codec 1 and
//      versions 2-3: every event). Since version 5 a second table, under
//      the last 6 events of each recorded position (decision points),
//      predicts the match's source when its past agrees further back
//      (LzModel::predicted_slot, "long context").
//   2. At a decision point (a match ends, or none starts) the match length
//      and the literal that follows are coded with an adaptive binary range
//      coder (LZMA-style: 32-bit range, 12-bit probabilities, carry
//      propagation through a cached byte), bit-exact in encoder and decoder.
//   3. The literal is predicted from the call structure (the shadow-stack
//      view of the stream): the function whose body the stream is in
//      ("caller") and the callee that returned last in that body ("previous
//      sibling"). Both are found by walking the history backwards from the
//      decision point (bounded by kWalkLimit events), so the match path does
//      not maintain a stack. A table indexed by a hash of (caller, previous
//      sibling) keeps, most recent first, the kCandidates events that
//      followed that context, with per-context rank probabilities; the
//      literal is coded as its rank in that list, else as an exit, a new
//      function (the next unseen ID), or an old one (its bits).
//   4. The match length is coded in the structural context of its decision
//      point: first "the same length as last time here", else a zero flag,
//      a unary bit width and the low bits (a bit tree up to 12 bits), in a
//      context of the previous token and of whether the LZ prediction
//      agrees with the context's first candidate. Since format version 3
//      (length model 2) the zero flag and the width are also coded in the
//      context of the slot's last length (its bit width) and of a group of
//      slots, mixed with the shared context (weighted by how often the
//      finer one was used), and the low bits of short lengths in the
//      context of the last length's width and the previous token.
//   5. Output is cut into segments, one per data block: a 32-bit event
//      count, then the range coder's bytes. The model carries over from one
//      segment to the next; each segment's coder restarts, so a block can be
//      decoded once the blocks before it were.
// Work per event is bounded (the walk is capped); the coder writes a few
// bytes at a decision point and nothing on the match path, so no block is
// ever compressed on the traced thread (paper §3.2).
#pragma once
// Included by parlot/codec.h after LzModel, OutputWindow and DecodeStatus.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "parlot/format.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace parlot::codec {

namespace v2 {

/// Longest match one length token carries (events); a longer run is cut
/// and re-decided, as in codec 1.
inline constexpr std::uint32_t kMaxMatch = 1u << 24;
/// Candidates kept per (caller, previous sibling) context.
inline constexpr unsigned kCandidates = 4;
/// log2 of the candidate table's entries.
inline constexpr unsigned kCandidateBits = 14;
/// Length models: 1 in format version 2 files, 2 since format version 3
/// (docs/FORMAT.md "Codec 2", "Length model 2").
inline constexpr unsigned kNewestLengthModel = 2;
/// The length model of a thread file of format version `version`.
constexpr unsigned length_model_of(unsigned version) {
  return version >= 3 ? 2 : 1;
}
/// Events at the end of a match that does not repeat itself whose
/// positions enter the LZ context table (format version 4; 0: all of them,
/// versions 2 and 3). docs/FORMAT.md "Context table in a match"; issue 12:
/// on sqlite3's stream 9% fewer bytes and 27% fewer decisions, and a
/// fifth of the encoder's time.
inline constexpr std::uint32_t kTableTail = 16;
/// The table tail (see kTableTail) of format version `version`.
constexpr std::uint32_t table_tail_of(unsigned version) {
  return version >= 4 ? kTableTail : 0;
}
/// Whether the LZ model of format version `version` has the long context
/// (LzModel::set_long_context; docs/FORMAT.md "Long context", version 5).
constexpr bool long_context_of(unsigned version) {
  return version >= 5;
}
/// Most history events the decision point walks back to find the caller and
/// the previous sibling.
inline constexpr unsigned kWalkLimit = 64;
/// Bytes a segment's header takes (its event count, u32 little-endian).
inline constexpr std::size_t kSegmentHeaderBytes = 4;
/// Output bytes reserved for one decision (length + literal) plus the
/// coder's final flush; the encoder starts a new segment when less is free.
inline constexpr std::size_t kReserveBytes = 160;
/// Smallest output window an encoder may be given (and a sink must leave
/// free after drain): a segment header, one decision, the final flush.
inline constexpr std::size_t kMinWindowBytes = 256;
/// Largest event count of one segment (a u32; kept clear of overflow).
inline constexpr std::uint64_t kMaxSegmentEvents = 0xffffffffull - 2 * kMaxMatch;

/// Probability (of a 0 bit) in 1/4096, adapted by 1/32 of the error.
using Prob = std::uint16_t;
inline constexpr unsigned kProbBits = 12;
inline constexpr Prob kProbInit = 1u << (kProbBits - 1);
inline constexpr unsigned kAdaptShift = 5;
inline constexpr std::uint32_t kTop = 1u << 24;

/// Adaptive probabilities, mirrored by encoder and decoder.
struct Probabilities {
  static constexpr unsigned kLenCtx = 12;   // see Encoder::token_ctx_
  static constexpr unsigned kLenBits = 25;  // bit widths of 1 .. kMaxMatch
  /// Widths up to this code their low bits as a binary tree (each bit in
  /// the context of the bits above it); wider ones bit by bit.
  static constexpr unsigned kLenTreeMax = 12;
  Prob len_zero[kLenCtx];
  Prob len_width[kLenCtx][kLenBits];
  Prob len_mantissa[kLenBits][kLenBits];
  /// The trees of every width in one array: width w's node v (its prefix,
  /// 1 .. 2^(w-1) - 1) is entry 2^(w-1) - 1 + v, so the widths' nodes
  /// are disjoint (entry 0 and the last are unused).
  Prob len_tree[1u << kLenTreeMax];
  Prob is_exit[2];
  Prob is_new[2];
  Prob new_width[32];
  Prob new_mantissa[32];
  // Length model 2: contexts of the decision point's slot (kLastWidths: the
  // bit width of its last length, capped; kSlotGroups: its index modulo),
  // each with a use count (saturating at kFullWeightUses) that weighs it
  // against the shared context above.
  static constexpr unsigned kLastWidths = 16;
  static constexpr unsigned kSlotGroups = 32;
  /// Lengths of up to this bit width code their low bits in the context of
  /// the last length's width and of the token context.
  static constexpr unsigned kLowTreeMax = 8;
  static constexpr std::uint8_t kFullWeightUses = 16;
  /// A context's use count: a byte that is not a character type, so that
  /// its updates do not make the compiler reload the range coder's state
  /// (a char may alias anything; issue 12).
  enum class Uses : std::uint8_t {};
  Prob zero_by_last[2][kLastWidths];
  Uses zero_by_last_uses[2][kLastWidths];
  /// The contexts of one last width (about 11 KB; 16 of them are 171 KB of
  /// the 182 KB here), initialised when first used (see of_last_width), so
  /// that a thread's model writes only those its lengths need.
  struct ByLastWidth {
    Prob width_by_slot[2][kSlotGroups][kLenBits];  ///< [agreement bit][slot group][width bit]
    Prob low[kLenCtx][1u << kLowTreeMax];          ///< [token context][tree node]
    Uses width_by_slot_uses[2][kSlotGroups][kLenBits];
  };
  /// Bit w set when by_last_width[w] is initialised (since reset()).
  std::uint32_t last_widths_ready;
  ByLastWidth by_last_width[kLastWidths];

  /// Every probability to kProbInit, every use count to 0: the contexts
  /// before last_widths_ready are written (about 11 KB), by_last_width[]
  /// only marked not ready.
  void reset() {
    static_assert(offsetof(Probabilities, zero_by_last_uses) ==
                  offsetof(Probabilities, zero_by_last) + sizeof zero_by_last);
    fill_initial(&len_zero[0], &zero_by_last_uses[0][0]);
    std::memset(zero_by_last_uses, 0, sizeof zero_by_last_uses);
    last_widths_ready = 0;
  }

  /// The contexts of last width `w` (< kLastWidths), initialised first if
  /// they were not used since reset(): one test per length token.
  ByLastWidth& of_last_width(unsigned w) {
    static_assert(offsetof(ByLastWidth, low) == sizeof(ByLastWidth::width_by_slot) &&
                  offsetof(ByLastWidth, width_by_slot_uses) ==
                      offsetof(ByLastWidth, low) + sizeof(ByLastWidth::low));
    if ((last_widths_ready >> w & 1) == 0) [[unlikely]]
      init_last_width(w);
    return by_last_width[w];
  }

 private:
  [[gnu::noinline, gnu::cold]] void init_last_width(unsigned w) {
    ByLastWidth& b = by_last_width[w];
    fill_initial(&b.width_by_slot[0][0][0], &b.width_by_slot_uses[0][0][0]);
    std::memset(b.width_by_slot_uses, 0, sizeof b.width_by_slot_uses);
    last_widths_ready |= 1u << w;
  }

  /// Writes kProbInit to the Prob array [begin, end), 4 at a time.
  static void fill_initial(Prob* begin, const void* end) {
    constexpr std::uint64_t kFour = std::uint64_t{kProbInit} * 0x0001000100010001ull;
    auto* q = reinterpret_cast<std::uint8_t*>(begin);
    const auto* e = static_cast<const std::uint8_t*>(end);
    for (; e - q >= 8; q += 8) std::memcpy(q, &kFour, 8);
    for (; q != e; q += sizeof(Prob)) std::memcpy(q, &kProbInit, sizeof(Prob));
  }
};

/// The shared model of codec 2 beyond codec 1's LzModel: the candidate
/// table, the largest ID seen, the coding contexts.
struct RankModel {
  /// One structural context: its candidates, most recent first, the
  /// probability of each rank being taken in this context, the length of
  /// the last token coded at a decision point in it and the probability
  /// that the next one repeats it.
  struct Slot {
    std::array<std::uint32_t, kCandidates> events;
    std::array<Prob, kCandidates> rank;
    std::uint32_t last_len;
    Prob same;
    /// The reset() generation that last initialised it (see slot()).
    std::uint16_t generation;
  };
  /// Initial probability (of "not the same length"): 7/8.
  static constexpr Prob kSameInit = 3584;
  /// Read through slot() only.
  std::array<Slot, 1u << kCandidateBits> candidates;
  Probabilities probs;
  std::uint32_t max_id = 0;
  // Context of the next length token: whether the last token's length was
  // 0, and how its literal was coded (0: rank 0, 1: other rank, 2: escape).
  unsigned len_ctx = 0;
  /// Length model (1 or 2, see length_model_of); kept by reset().
  unsigned length_model = kNewestLengthModel;

  RankModel() {
    for (auto& c : candidates) c.generation = 0;
  }
  /// For storage of all zero bytes: every slot is of generation 0 already,
  /// so the candidate table's pages are touched only when used.
  explicit RankModel(ZeroedStorage) {}

  /// Back to the initial model. The candidate table (512 KiB) is not
  /// written: a slot of an older generation is initialised when slot()
  /// first hands it out, so a reader that resets per stream writes only
  /// the slots a short stream uses.
  void reset() {
    if (++generation_ == 0) {  // wrapped: no slot may look current
      for (auto& c : candidates) c.generation = 0;
      generation_ = 1;
    }
    probs.reset();
    max_id = 0;
    len_ctx = 0;
  }

  /// Candidate slot `i` (< 2^kCandidateBits), initialised (no candidates,
  /// rank probabilities kProbInit, last length 0, kSameInit) if it was not
  /// used since reset().
  Slot& slot(std::uint32_t i) {
    Slot& c = candidates[i];
    if (c.generation != generation_) [[unlikely]] {
      c.events.fill(0);
      c.rank.fill(kProbInit);
      c.last_len = 0;
      c.same = kSameInit;
      c.generation = generation_;
    }
    return c;
  }

  /// Hash of the structural context (caller, previous sibling) found by
  /// walking back at most kWalkLimit events of `lz`'s history from the
  /// newest. A callee that returned is skipped whole (its entry and its
  /// exit balance); the caller is the first entry not closed. Unfound parts
  /// are 0xffffffff. (docs/FORMAT.md "Codec 2" states the walk; walk_slot()
  /// is it step by step; this finds the same two events from a bit mask of
  /// the last 64 events, see ExitMaskWalk.)
  template <class Lz>
  static std::uint32_t context_slot(const Lz& lz) {
    static_assert(kWalkLimit == 64, "the mask walk covers exactly 64 events");
    const std::uint32_t pos = lz.position();
    const std::uint32_t newest = lz.at(pos - 1);
    if (newest != 0 && pos != 0) return hash_slot(newest, 0);  // its body starts here
    const std::uint32_t first = (pos - kWalkLimit) & Lz::kHistoryMask;
    if (pos < kWalkLimit || first > Lz::kHistoryMask + 1 - kWalkLimit) [[unlikely]] {
      return walk_slot(lz);  // stream start, or the 64 events wrap the ring
    }
    // The newest 16 events' exits first: most walks end in them (issue 12:
    // the caller is within 16 events at 70% of lua's exits); the older 48
    // only when the walk goes on into them.
    const std::uint32_t* events = lz.history() + first;
    std::uint64_t exits = std::uint64_t{exit_mask_16(events + 48)} << 48;
    std::uint32_t sibling = 0xffffffffu;
    std::uint32_t caller = 0xffffffffu;
    bool sibling_known = false;
    // Depth walking back = exits minus entries seen. Looking for the first
    // return to depth 0 (the previous sibling's entry; only when the newest
    // event is an exit), then the first depth -1 (the caller's entry).
    int target = exits >> 63 ? 0 : -1;
    int depth = 0;  // at the start of the byte
    for (int byte = 7; byte >= 0; --byte) {
      if (byte == 5) {
        exits |= std::uint64_t{exit_mask_16(events + 32)} << 32 |
                 std::uint64_t{exit_mask_16(events + 16)} << 16 | exit_mask_16(events);
      }
      const auto& chunk = kExitMaskChunks[exits >> (8 * byte) & 0xff];
      for (;;) {
        const int drop = depth - target;
        if (drop > 8 || chunk.first[drop] == 8) break;
        const std::uint32_t k = static_cast<std::uint32_t>((7 - byte) * 8 + chunk.first[drop] + 1);
        if (target == 0) {
          sibling = lz.at(pos - k);
          sibling_known = true;
          target = -1;
          continue;  // the caller may be in the same byte
        }
        caller = lz.at(pos - k);
        if (!sibling_known) sibling = 0;  // first event of the caller's body
        return hash_slot(caller, sibling);
      }
      depth += chunk.net;
    }
    return hash_slot(caller, sibling);
  }

  /// context_slot() as a step-by-step walk (docs/FORMAT.md's statement).
  template <class Lz>
  static std::uint32_t walk_slot(const Lz& lz) {
    const std::uint32_t pos = lz.position();
    const std::uint32_t n = pos < kWalkLimit ? pos : kWalkLimit;
    std::uint32_t sibling = 0xffffffffu;
    std::uint32_t caller = 0xffffffffu;
    std::uint32_t depth = 0;  // exits seen minus entries seen, walking back
    bool sibling_known = false;
    for (std::uint32_t k = 1; k <= n; ++k) {
      const std::uint32_t v = lz.at(pos - k);
      if (v == 0) {
        ++depth;
        continue;
      }
      if (depth == 0) {
        caller = v;
        if (!sibling_known) sibling = 0;  // first event of the caller's body
        break;
      }
      if (--depth == 0 && !sibling_known) {
        sibling = v;
        sibling_known = true;
      }
    }
    return hash_slot(caller, sibling);
  }

 private:
  static std::uint32_t hash_slot(std::uint32_t caller, std::uint32_t sibling) {
    const std::uint32_t x = caller * 0x9e3779b1u ^ sibling * 0x85ebca77u;
    return (x ^ (x >> 15)) * 0x2c1b3c6du >> (32 - kCandidateBits);
  }

  /// Bit i set when events[i] is an exit (0), for 16 events.
  static std::uint16_t exit_mask_16(const std::uint32_t* events) {
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const auto* p = reinterpret_cast<const __m128i*>(events);
    const __m128i a = _mm_cmpeq_epi32(_mm_loadu_si128(p), zero);
    const __m128i b = _mm_cmpeq_epi32(_mm_loadu_si128(p + 1), zero);
    const __m128i c = _mm_cmpeq_epi32(_mm_loadu_si128(p + 2), zero);
    const __m128i d = _mm_cmpeq_epi32(_mm_loadu_si128(p + 3), zero);
    const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
    return static_cast<std::uint16_t>(_mm_movemask_epi8(bytes));
#else
    std::uint16_t mask = 0;
    for (unsigned i = 0; i < 16; ++i) mask |= static_cast<std::uint16_t>((events[i] == 0) << i);
    return mask;
#endif
  }

 public:
  /// What walking back over 8 events does to the depth, for each byte of
  /// an exit mask (bit 7 is the newest of the 8 and is walked first): the
  /// depth change over the byte, and first[d] = the step (0-7) after which
  /// the depth is first d below its value at the byte's start (8: never;
  /// d = 0: first back at it).
  struct ExitMaskWalk {
    std::int8_t net;
    std::array<std::uint8_t, 9> first;
  };
  static constexpr std::array<ExitMaskWalk, 256> kExitMaskChunks = [] {
    std::array<ExitMaskWalk, 256> table{};
    for (unsigned byte = 0; byte < 256; ++byte) {
      ExitMaskWalk w{0, {}};
      w.first.fill(8);
      int depth = 0;
      for (unsigned step = 0; step < 8; ++step) {
        depth += (byte >> (7 - step) & 1) != 0 ? 1 : -1;
        if (depth <= 0 && w.first[static_cast<unsigned>(-depth)] == 8) {
          w.first[static_cast<unsigned>(-depth)] = static_cast<std::uint8_t>(step);
        }
      }
      w.net = static_cast<std::int8_t>(depth);
      table[byte] = w;
    }
    return table;
  }();

 private:
  std::uint16_t generation_ = 0;  // of the last reset(), see slot()
};

/// Adaptive binary range encoder (LZMA's scheme), writing into a raw byte
/// pointer the caller keeps in bounds (see Encoder's reserve).
class RangeEncoder {
 public:
  void start(std::uint8_t* out) {
    low_ = 0;
    range_ = 0xffffffffu;
    cache_ = 0;
    cache_size_ = 1;
    out_ = out;
  }
  std::uint8_t* out() const { return out_; }
  /// Bytes produced but not yet written (a carry may still change them).
  std::uint64_t pending() const { return cache_size_; }

  void bit(Prob& p, unsigned b) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    if (b == 0) {
      range_ = bound;
      p = static_cast<Prob>(p + (((1u << kProbBits) - p) >> kAdaptShift));
    } else {
      low_ += bound;
      range_ -= bound;
      p = static_cast<Prob>(p - (p >> kAdaptShift));
    }
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }

  /// Bit `b` with probability `p` (of a 0, in 1/4096, 1 .. 4095), which
  /// the caller adapts.
  void bit_at(std::uint32_t p, unsigned b) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    if (b == 0) {
      range_ = bound;
    } else {
      low_ += bound;
      range_ -= bound;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }

  /// `n` bits of `v`, most significant first, each with probability 1/2.
  void direct(std::uint32_t v, unsigned n) {
    while (n-- != 0) {
      range_ >>= 1;
      if (v >> n & 1) low_ += range_;
      while (range_ < kTop) {
        range_ <<= 8;
        shift_low();
      }
    }
  }

  /// Writes the bytes that make everything coded so far decodable.
  void flush() {
    for (int i = 0; i < 5; ++i) shift_low();
  }

 private:
  void shift_low() {
    if (static_cast<std::uint32_t>(low_) < 0xff000000u || (low_ >> 32) != 0) {
      const auto carry = static_cast<std::uint8_t>(low_ >> 32);
      std::uint8_t b = cache_;
      do {
        *out_++ = static_cast<std::uint8_t>(b + carry);
        b = 0xff;
      } while (--cache_size_ != 0);
      cache_ = static_cast<std::uint8_t>(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00ffffffu) << 8;
  }

  std::uint64_t low_ = 0;
  std::uint32_t range_ = 0xffffffffu;
  std::uint8_t cache_ = 0;
  std::uint64_t cache_size_ = 1;
  std::uint8_t* out_ = nullptr;
};

/// The decoder half of RangeEncoder. Reads only inside [in, end); reading
/// past the end yields zero bytes and sets overrun().
class RangeDecoder {
 public:
  void start(const std::uint8_t* in, const std::uint8_t* end) {
    in_ = in;
    end_ = end;
    overrun_ = false;
    range_ = 0xffffffffu;
    code_ = 0;
    for (int i = 0; i < 5; ++i) code_ = code_ << 8 | next_byte();
  }
  const std::uint8_t* in() const { return in_; }
  bool overrun() const { return overrun_; }

  unsigned bit(Prob& p) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    unsigned b;
    if (code_ < bound) {
      range_ = bound;
      p = static_cast<Prob>(p + (((1u << kProbBits) - p) >> kAdaptShift));
      b = 0;
    } else {
      code_ -= bound;
      range_ -= bound;
      p = static_cast<Prob>(p - (p >> kAdaptShift));
      b = 1;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = code_ << 8 | next_byte();
    }
    return b;
  }

  /// The decoding of RangeEncoder::bit_at.
  unsigned bit_at(std::uint32_t p) {
    const std::uint32_t bound = (range_ >> kProbBits) * p;
    unsigned b = 0;
    if (code_ < bound) {
      range_ = bound;
    } else {
      code_ -= bound;
      range_ -= bound;
      b = 1;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = code_ << 8 | next_byte();
    }
    return b;
  }

  std::uint32_t direct(unsigned n) {
    std::uint32_t v = 0;
    while (n-- != 0) {
      range_ >>= 1;
      const std::uint32_t b = code_ >= range_ ? 1 : 0;
      code_ -= range_ & (0u - b);
      v = v << 1 | b;
      while (range_ < kTop) {
        range_ <<= 8;
        code_ = code_ << 8 | next_byte();
      }
    }
    return v;
  }

 private:
  std::uint32_t next_byte() {
    if (in_ != end_) return *in_++;
    overrun_ = true;
    return 0;
  }

  std::uint32_t range_ = 0xffffffffu;
  std::uint32_t code_ = 0;
  const std::uint8_t* in_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  bool overrun_ = false;
};

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

/// The whole model of codec 2, mirrored by encoder and decoder.
struct Model {
  LzModel lz;
  RankModel rank;

  Model() {
    rank.reset();
    set_format_version(format::kVersion);
  }
  /// In storage of all zero bytes (see LzModel(ZeroedStorage)): writes
  /// about 11 KB of probabilities; the history, the LZ table, the candidate
  /// slots and the probabilities of each last width (about 950 KB) only
  /// when the stream first uses them.
  explicit Model(ZeroedStorage z) : lz(z), rank(z) {
    rank.reset();
    set_format_version(format::kVersion);
  }

  /// The model parts of format version `version` (2 .. format::kVersion):
  /// its length model (length_model_of), table tail (table_tail_of) and
  /// long context (long_context_of). The newest at construction; kept by
  /// the decoder's reset(). Set before the first event.
  void set_format_version(unsigned version) {
    rank.length_model = length_model_of(version);
    table_tail = table_tail_of(version);
    lz.set_long_context(long_context_of(version));
  }

  /// Event at the LZ prediction `slot`, the candidate list of the current
  /// structural context, and whether the last event was an exit.
  RankModel::Slot& candidates() { return rank.slot(RankModel::context_slot(lz)); }
  unsigned after_exit() const { return lz.position() != 0 && lz.at(lz.position() - 1) == 0; }

  /// The LZ table and context brought up to date at a match's end, the same
  /// call in encoder and decoder: the match copied from `distance`
  /// positions back (position - slot at its decision point), its first
  /// `recorded` events were record()ed and the `appended` after them only
  /// appended. LzModel::catch_up may replay only the last period when
  /// recorded + period >= 3, and with a table tail only the last
  /// table_tail events of a match that does not repeat itself.
  void catch_up_match(std::uint32_t appended, std::uint32_t recorded, std::uint32_t distance) {
    const std::uint32_t period = distance & LzModel::kHistoryMask;
    lz.catch_up(appended, recorded + period >= 3 ? period : 0, table_tail);
  }

  /// table_tail_of() the format version coded (0: every match event enters
  /// the table); kept by the decoder's reset(), as rank.length_model.
  std::uint32_t table_tail = kTableTail;
};

/// Incremental compressor of codec 2. `Sink` provides
/// `void drain(OutputWindow&)`, which must consume the bytes written so far
/// and leave at least kMinWindowBytes free. Not
/// thread-safe: one encoder per thread stream. Holds its model inline
/// (about 1 MiB).
template <class Sink>
class Encoder {
 public:
  /// `format_version`: the format version to write (Model::
  /// set_format_version); the default is the newest, what the runtime
  /// writes. Older ones are for tests and benchmarks of the old formats.
  Encoder(Sink& sink, OutputWindow window, unsigned format_version = format::kVersion)
      : sink_(sink), out_(window) {
    model_.set_format_version(format_version);
    begin_segment();
  }
  /// The same, constructed in storage of all zero bytes (a fresh anonymous
  /// mapping, as the runtime's thread traces): most of the model's pages
  /// (Model(ZeroedStorage)) are then touched only as the stream uses them.
  Encoder(Sink& sink, OutputWindow window, ZeroedStorage z,
          unsigned format_version = format::kVersion)
      : sink_(sink), out_(window), model_(z) {
    model_.set_format_version(format_version);
    begin_segment();
  }

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
    // follow from the position (issue 12: two stores fewer per event).
    const std::uint32_t pos = model_.lz.position();
    if (pos != fast_end_ && v == model_.lz.at(pos - distance_)) [[likely]] {
      model_.lz.append(v);  // the LZ table catches up at the match's end
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
    const std::uint32_t pos = model_.lz.position();
    return pos != fast_end_ ? model_.lz.at(pos - distance_) : kNoMatch;
  }

  /// try_extend(v) for `v` = next_in_match() (not kNoMatch): records it.
  [[gnu::always_inline]] inline void extend_match(std::uint32_t v) { model_.lz.append(v); }

  /// Ends the current segment (everything encoded so far becomes
  /// decodable), hands it to the sink and starts the next. For a time-driven
  /// flush; bounded work.
  void flush() {
    end_segment();
    sink_.drain(out_);
    begin_segment();
  }

  /// Ends the last segment. The stream then ends (the window holds its last
  /// bytes); no event may be encoded afterwards.
  void finish() { end_segment(); }

  /// Makes try_extend() return false once `n` more events are encoded
  /// (n = 0: at the next event), until the next call: a caller that counts
  /// events (the runtime's clock samples and flush checks) then needs no
  /// counter of its own on the fast path (issue 12). Its events still go
  /// through encode(), which takes them as any other (same bytes).
  void set_event_limit(std::uint32_t n) {
    limited_ = true;
    stop_pos_ = model_.lz.position() + n;
    update_fast_end();
  }
  /// Events to encode before the limit of set_event_limit() (0: it is
  /// reached; try_extend() fails). Meaningful only after a set_event_limit().
  std::uint32_t events_to_limit() const { return stop_pos_ - model_.lz.position(); }

  OutputWindow& window() { return out_; }
  /// Events encoded but still held in the pending match (not yet in output).
  std::uint32_t pending_match() const { return match_len(); }
  /// Events coded in the open segment (not decodable before flush()).
  std::uint64_t segment_events() const { return seg_events_; }

 private:
  void begin_segment() {
    seg_start_ = out_.cur;
    seg_events_ = 0;
    rc_.start(out_.cur + kSegmentHeaderBytes);
  }

  void end_segment() {
    if (match_len() != 0) {  // not a match armed with no event yet
      code_cut_match();
    }
    if (seg_events_ == 0) {
      out_.cur = seg_start_;  // nothing coded, nothing written
      return;
    }
    rc_.flush();
    const auto n = static_cast<std::uint32_t>(seg_events_);
    for (unsigned i = 0; i < kSegmentHeaderBytes; ++i) {
      seg_start_[i] = static_cast<std::uint8_t>(n >> (8 * i));
    }
    out_.cur = rc_.out();
  }

  // The LZ table and context of the match's events that try_extend only
  // append()ed (LzModel::append: the table is read only at a decision),
  // before anything reads them or the match length resets
  // (Model::catch_up_match). With a table tail (format version 4) the
  // match's first event is its only record()ed one (recorded_len_ 1) and
  // this runs only at the match's end, as in the decoder (copy_match).
  // A match that arm_next() opened has its first event's record() still
  // to do (first_pending_): done here first, so the model ends as if it
  // had been record()ed (LzModel::record_deferred).
  void catch_up_match() {
    if (first_pending_) {
      model_.lz.record_deferred(first_keys_, match_start_, first_event_);
      first_pending_ = false;
    }
    model_.catch_up_match(match_len() - recorded_len_, recorded_len_, distance_);
  }

  // Events in the open match (0: none, or armed with none yet): from its
  // first event's position.
  std::uint32_t match_len() const { return in_match_ ? model_.lz.position() - match_start_ : 0; }
  // History slot predicted to hold the next event of the match (and, at a
  // decision, of the candidate it was compared with).
  std::uint32_t match_slot() const { return model_.lz.position() - distance_; }
  // No match open: try_extend fails at once (its position is fast_end_).
  // After every change of position outside try_extend.
  void end_match() {
    in_match_ = false;
    first_pending_ = false;
    update_fast_end();
  }

  // The next decision's prediction, made at the end of one that leaves no
  // match open (formats with a table tail): the predicted slot, the
  // structural context and the token context, as that decision would
  // compute them (the model does not change in between: a flush codes no
  // match of no events), and a match of no events yet from that slot. An
  // event the slot predicts then continues it in try_extend(), and the
  // runtime's entry hook predicts it, instead of taking a decision of its
  // own (issue 12: about half the decisions were such match starts); its
  // record() waits for the match's catch-up (first_pending_). The same
  // model, the same bytes.
  void arm_next() {
    make_room();  // where the next decision would check: the same segments
    predict();
    first_event_ = model_.lz.at(match_slot());
    first_keys_ = model_.lz.record_keys();
    first_pending_ = true;
    in_match_ = true;
    match_start_ = model_.lz.position();
    set_recorded_len(1);  // counting the pending first event
  }

  // A decision's prediction at the position now: the LZ model's slot (then
  // match_slot()), the structural context's candidate slot, the length
  // context of the token that starts here.
  void predict() {
    // The structural context first: a cache miss on its slot then overlaps
    // the LZ prediction's loads (they are independent).
    slot_ = &model_.candidates();
    const std::uint32_t slot = model_.lz.predicted_slot();
    distance_ = model_.lz.position() - slot;
    token_ctx_ = model_.rank.len_ctx * 2 + (slot_->events[0] == model_.lz.at(slot));
  }

  // Ends the segment when it has no room for one more decision (or too
  // many events): at every decision, before anything is coded.
  void make_room() {
    const auto free = static_cast<std::uint64_t>(out_.end - rc_.out());
    if (free < rc_.pending() + kReserveBytes || seg_events_ + match_len() >= kMaxSegmentEvents)
        [[unlikely]] {
      flush();  // codes an open match as cut
    }
  }

  // After a literal ended a decision: arms the next (formats with a table
  // tail) or leaves no match open.
  void after_literal() {
    end_match();
    if (model_.table_tail != 0) arm_next();
  }
  // fast_end_: the position when no match is open; in a match, its cap, or
  // the event limit if nearer.
  void update_fast_end() {
    const std::uint32_t pos = model_.lz.position();
    if (!in_match_) {
      fast_end_ = pos;
    } else {
      fast_end_ = limited_ && stop_pos_ - pos < cap_end_ - pos ? stop_pos_ : cap_end_;
    }
  }

  // The match's first `len` events are record()ed (its first, or after a
  // catch-up): try_extend may append up to kAppendMax more, as the history
  // ring must still hold them at the catch-up, and the match up to
  // kMaxMatch.
  // With a table tail the catch-up needs only the last model_.table_tail (or
  // period) events: no cap but kMaxMatch.
  void set_recorded_len(std::uint32_t len) {
    recorded_len_ = len;
    cap_end_ =
        match_start_ + (model_.table_tail != 0 ? kMaxMatch : std::min(kMaxMatch, len + kAppendMax));
    update_fast_end();
  }
  static constexpr std::uint32_t kAppendMax = LzModel::kHistoryMask;

  // A match with no literal after it (cut at kMaxMatch or at a segment end).
  void code_cut_match() {
    catch_up_match();
    EncodeBits bits{rc_};
    const std::uint32_t len = match_len();
    code_length(bits, model_.rank, token_ctx_, len, *slot_);
    bits.commit(rc_);
    seg_events_ += len;
    end_match();
    model_.rank.len_ctx = 2;
  }

  void code_token_literal(std::uint32_t len, std::uint32_t v) {
    EncodeBits bits{rc_};
    RankModel& r = model_.rank;
    // The literal's candidates first (the same slot either way: the length
    // changes neither the history nor another slot), so that a cache miss
    // on them overlaps the length's coding.
    RankModel::Slot& candidates = len == 0 ? *slot_ : model_.candidates();
    code_length(bits, r, token_ctx_, len, *slot_);
    unsigned kind = 0;
    code_literal(bits, r, candidates, model_.lz.at(match_slot()), model_.after_exit(), v, kind);
    bits.commit(rc_);
    if (v > r.max_id) r.max_id = v;
    r.len_ctx = (len == 0 ? 3 : 0) + (kind < 2 ? kind : 2);
    seg_events_ += len + 1;
  }

  [[gnu::noinline]] void encode_decision(std::uint32_t v) {
    if (const std::uint32_t len = match_len();
        len - 1 < kMaxMatch - 1 && v == model_.lz.at(match_slot())) {
      // The match goes on, but try_extend appended all it may (or the
      // event limit stopped it): catch up (as try_extend, no flush check
      // here). With a table tail only the event limit stops it, and the
      // match's table stores wait for its end.
      if (model_.table_tail != 0) {
        model_.lz.append(v);
        update_fast_end();
        return;
      }
      catch_up_match();
      model_.lz.record(v);
      set_recorded_len(len + 1);
      return;
    }
    make_room();
    if (const std::uint32_t len = match_len(); len != 0) {
      if (len != kMaxMatch) {
        // The match ended on a mismatch: its length, then the literal.
        catch_up_match();
        code_token_literal(len, v);
        model_.lz.record(v);
        after_literal();
        return;
      }
      code_cut_match();
    }
    if (!in_match_) predict();  // else arm_next() predicted this event already
    if (model_.lz.at(match_slot()) == v) {
      in_match_ = true;
      first_pending_ = false;
      match_start_ = model_.lz.position();
      model_.lz.record(v);
      set_recorded_len(1);
      return;
    }
    code_token_literal(0, v);
    model_.lz.record(v);
    after_literal();
  }

  Sink& sink_;
  OutputWindow out_;
  Model model_;
  RangeEncoder rc_;
  std::uint8_t* seg_start_ = nullptr;
  std::uint64_t seg_events_ = 0;
  RankModel::Slot* slot_ = nullptr;  // structural context of the decision point
  unsigned token_ctx_ = 0;           // length context of the open token
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
  void reset() {
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

  DecodeStatus status() const { return status_; }
  const char* error() const { return error_; }
  std::size_t error_offset() const { return error_offset_; }
  /// True when nothing is half-decoded (between segments).
  bool at_token_boundary() const { return seg_left_ == 0 && match_left_ == 0 && !literal_pending_; }

 private:
  std::size_t next_events(std::uint32_t* out, std::size_t cap) {
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
        for (unsigned i = 0; i < kSegmentHeaderBytes; ++i)
          count |= std::uint32_t{in_[i]} << (8 * i);
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

  void end_segment() { in_ = rc_.in(); }

  // `k` more events of the match (<= match_left_) with a table tail, as the
  // encoder: its first event record()ed, the others copied, and at its end
  // the encoder's catch-up (Model::catch_up_match, 1 event record()ed).
  void copy_match(std::size_t k, std::uint32_t* out) {
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

}  // namespace v2
}  // namespace parlot::codec
