// Process-wide map from function address to function ID (ParLoT paper §3.1:
// one ID per function, 0 reserved for exits). Lock-free: a lookup that hits
// is one hash, one or a few loads; the first sight of an address claims a
// slot with one compare-and-swap and takes the next ID with one fetch_add.
// Storage is mmap'd once at initialisation (no malloc), sized for
// `capacity` distinct functions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

class FunctionIds {
 public:
  /// What lookup() returns for a function the record filter excludes
  /// (`records` said no at its first sight). Not an ID: nothing is recorded.
  static constexpr std::uint32_t kExcluded = 0xffffffffu;

  /// True when `id` (from lookup()) is a function ID, not 0 (table full)
  /// nor kExcluded: one compare.
  [[gnu::always_inline]] static bool is_recorded(std::uint32_t id) {
    return id - 1 < kExcluded - 1;
  }

  /// Maps storage for up to `capacity` functions (rounded up to a power of
  /// two; the hash table gets twice as many slots). Returns false when mmap
  /// fails. Not thread-safe; call once before any lookup.
  bool init(std::size_t capacity);

  /// ID of `address` (1-based), assigning the next one on first sight.
  /// Returns 0 when the table is full (the caller drops the event), and
  /// kExcluded for a function the record filter excludes.
  /// Thread-safe, async-signal-safe, no locks, no syscalls.
  inline std::uint32_t lookup(std::uintptr_t address) {
    std::size_t i = hash(address) & slot_mask_;
    for (;;) {
      Slot& s = slots_[i];
      const std::uintptr_t key = s.address.load(std::memory_order_acquire);
      if (key == address) [[likely]] {
        const std::uint32_t id = s.id.load(std::memory_order_acquire);
        if (id != 0) [[likely]]
          return id;
        return wait_for_id(s);
      }
      if (key == 0) return insert(i, address);
      i = (i + 1) & slot_mask_;
    }
  }

  /// What lookup() would return for an address already seen: its ID or
  /// kExcluded; 0 when it was never seen (or its ID is being published).
  /// Never inserts, never waits: read-only, so hooks may call it before
  /// raising their busy flag. One hash probe.
  inline std::uint32_t find(std::uintptr_t address) const {
    std::size_t i = hash(address) & slot_mask_;
    for (;;) {
      const Slot& s = slots_[i];
      const std::uintptr_t key = s.address.load(std::memory_order_acquire);
      if (key == address) return s.id.load(std::memory_order_acquire);
      if (key == 0) return 0;
      i = (i + 1) & slot_mask_;
    }
  }

  /// True when `address` was seen and excluded by the record filter.
  inline bool is_excluded(std::uintptr_t address) const { return find(address) == kExcluded; }

  /// True when a record filter is installed (`records` set).
  bool filtering() const { return records != nullptr; }

  /// Number of IDs assigned so far (IDs 1..count()).
  std::uint32_t count() const;
  /// Address of ID `id` (1..count()); 0 while the ID is being published.
  /// Read by any thread (the one writing the function table) while others
  /// publish: an atomic load (a plain load on x86).
  std::uintptr_t address_of(std::uint32_t id) const {
    return std::atomic_ref<std::uintptr_t>(addresses_[id - 1]).load(std::memory_order_acquire);
  }
  std::size_t capacity() const { return capacity_; }

  /// Address of function ID `id` for the hooks' fast path: 0 for `id` 0
  /// (an exit) and while the ID is being published. `id` must be at most
  /// capacity() (every value a thread's stream holds is). One load from a
  /// dense array of 8 bytes per ID, where lookup() hashes into a sparse
  /// table: the entry hook checks the ID its encoder predicts with it
  /// (issue 12).
  [[gnu::always_inline]] std::uintptr_t address_by_id(std::uint32_t id) const {
    return std::atomic_ref<std::uintptr_t>(address_by_id_[id]).load(std::memory_order_acquire);
  }

  /// Called once per new function, right after its ID is published, by the
  /// thread that saw it first (inside a hook: must be async-signal-safe).
  void (*on_new_function)(std::uintptr_t address) = nullptr;

  /// Record filter, asked once per new function before it takes an ID
  /// (inside a hook: async-signal-safe, no malloc); nullptr records all.
  bool (*records)(std::uintptr_t address) = nullptr;

 private:
  struct Slot {
    std::atomic<std::uintptr_t> address;
    std::atomic<std::uint32_t> id;
  };
  static std::size_t hash(std::uintptr_t a) {
    const std::uint64_t x = (static_cast<std::uint64_t>(a) >> 4) * 0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(x >> 32);
  }
  std::uint32_t insert(std::size_t slot, std::uintptr_t address);
  std::uint32_t wait_for_id(Slot& s);

  Slot* slots_ = nullptr;
  std::size_t slot_mask_ = 0;
  std::uintptr_t* addresses_ = nullptr;      // of IDs 1..capacity_
  std::uintptr_t* address_by_id_ = nullptr;  // addresses_ - 1: [0] is 0
  std::size_t capacity_ = 0;
  std::atomic<std::uint32_t> next_id_{0};
};

}  // namespace parlot::runtime
