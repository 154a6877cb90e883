// Codec 2's model beyond codec 1's LzModel: the adaptive probabilities, the
// candidate table of the structural contexts (caller, previous sibling) and
// the walk that finds them, and Model, the whole model as encoder and
// decoder mirror it. codec/FORMAT.md "Codec 2" states it.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codec/range_coder.h"
#include "parlot/codec.h"
#include "parlot/format.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace parlot::codec::v2 {

/// Candidates kept per (caller, previous sibling) context.
inline constexpr unsigned kCandidates = 4;
/// log2 of the candidate table's entries.
inline constexpr unsigned kCandidateBits = 14;
/// Length models: 1 in format version 2 files, 2 since format version 3
/// (codec/FORMAT.md "Codec 2", "Length model 2").
inline constexpr unsigned kNewestLengthModel = 2;
/// Most history events the decision point walks back to find the caller and
/// the previous sibling.
inline constexpr unsigned kWalkLimit = 64;

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

/// One structural context: its candidates, most recent first, the
/// probability of each rank being taken in this context, the length of
/// the last token coded at a decision point in it and the probability
/// that the next one repeats it.
struct ContextSlot {
  std::array<std::uint32_t, kCandidates> events;
  std::array<Prob, kCandidates> rank;
  std::uint32_t last_len;
  Prob same;
  /// The RankModel::reset() generation that last initialised it (see
  /// RankModel::slot()).
  std::uint16_t generation;
};

/// The shared model of codec 2 beyond codec 1's LzModel: the candidate
/// table, the largest ID seen, the coding contexts.
struct RankModel {
  using Slot = ContextSlot;
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
  /// are 0xffffffff. (codec/FORMAT.md "Codec 2" states the walk; walk_slot()
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

  /// context_slot() as a step-by-step walk (codec/FORMAT.md's statement).
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

/// Codec 2's whole model as references to its parts: codec 1's LZ model,
/// the rank model and the table tail (table_tail_of() the format version
/// coded; 0: every match event enters the table). The decoder keeps the
/// parts together (Model); the encoder keeps its LZ model with its inline
/// fast path's state and the others apart. Everything here is the same
/// call in encoder and decoder.
struct ModelRef {
  LzModel& lz;
  RankModel& rank;
  std::uint32_t& table_tail;

  /// The model parts of format version `version` (2 .. format::kVersion):
  /// its length model (length_model_of), table tail (table_tail_of) and
  /// long context (long_context_of). Set before the first event.
  void set_format_version(unsigned version) const {
    rank.length_model = length_model_of(version);
    table_tail = table_tail_of(version);
    lz.set_long_context(long_context_of(version));
  }

  /// The candidate list of the current structural context.
  ContextSlot& candidates() const { return rank.slot(RankModel::context_slot(lz)); }
  /// 1 when the last event was an exit, else 0 (also at the start).
  unsigned after_exit() const { return lz.position() != 0 && lz.at(lz.position() - 1) == 0; }

  /// The LZ table and context brought up to date at a match's end: the
  /// match copied from `distance` positions back (position - slot at its
  /// decision point), its first `recorded` events were record()ed and the
  /// `appended` after them only appended. LzModel::catch_up may replay
  /// only the last period when recorded + period >= 3, and with a table
  /// tail only the last table_tail events of a match that does not repeat
  /// itself.
  void catch_up_match(std::uint32_t appended, std::uint32_t recorded,
                      std::uint32_t distance) const {
    const std::uint32_t period = distance & LzModel::kHistoryMask;
    lz.catch_up(appended, recorded + period >= 3 ? period : 0, table_tail);
  }
};

/// The whole model of codec 2 in one object (the decoder's).
struct Model {
  LzModel lz;
  RankModel rank;
  /// table_tail_of() the format version coded; kept by the decoder's
  /// reset(), as rank.length_model.
  std::uint32_t table_tail = kTableTail;

  /// The initial model of the newest format version.
  Model() {
    rank.reset();
    ref().set_format_version(format::kVersion);
  }

  /// The parts as references (see ModelRef).
  ModelRef ref() { return {lz, rank, table_tail}; }
  /// ModelRef::set_format_version; kept by the decoder's reset().
  void set_format_version(unsigned version) { ref().set_format_version(version); }
  /// ModelRef::candidates.
  ContextSlot& candidates() { return ref().candidates(); }
  /// ModelRef::after_exit.
  unsigned after_exit() { return ref().after_exit(); }
  /// ModelRef::catch_up_match.
  void catch_up_match(std::uint32_t appended, std::uint32_t recorded, std::uint32_t distance) {
    ref().catch_up_match(appended, recorded, distance);
  }
};

}  // namespace parlot::codec::v2
