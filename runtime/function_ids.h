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
  /// Maps storage for up to `capacity` functions (rounded up to a power of
  /// two; the hash table gets twice as many slots). Returns false when mmap
  /// fails. Not thread-safe; call once before any lookup.
  bool init(std::size_t capacity);

  /// ID of `address` (1-based), assigning the next one on first sight.
  /// Returns 0 when the table is full (the caller drops the event).
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

  /// Number of IDs assigned so far (IDs 1..count()).
  std::uint32_t count() const;
  /// Address of ID `id` (1..count()); 0 while the ID is being published.
  std::uintptr_t address_of(std::uint32_t id) const { return addresses_[id - 1]; }
  std::size_t capacity() const { return capacity_; }

  /// Called once per new function, right after its ID is published, by the
  /// thread that saw it first (inside a hook: must be async-signal-safe).
  void (*on_new_function)(std::uintptr_t address) = nullptr;

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
  std::uintptr_t* addresses_ = nullptr;
  std::size_t capacity_ = 0;
  std::atomic<std::uint32_t> next_id_{0};
};

}  // namespace parlot::runtime
