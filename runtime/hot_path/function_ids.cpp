#include "hot_path/function_ids.h"

#include <sched.h>
#include <sys/mman.h>

#include <cstring>

namespace parlot::runtime {

bool FunctionIds::init(std::size_t capacity) {
  std::size_t cap = 1024;
  while (cap < capacity) cap <<= 1;
  const std::size_t slots = cap * 2;
  void* s = mmap(nullptr, slots * sizeof(Slot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s == MAP_FAILED) return false;
  // One more word, before ID 1's: the address of "ID" 0, always 0.
  void* a = mmap(nullptr, (cap + 1) * sizeof(std::uintptr_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a == MAP_FAILED) {
    munmap(s, slots * sizeof(Slot));
    return false;
  }
  slots_ = static_cast<Slot*>(s);  // anonymous memory is zero: every slot empty
  slot_mask_ = slots - 1;
  address_by_id_ = static_cast<std::uintptr_t*>(a);
  addresses_ = address_by_id_ + 1;
  capacity_ = cap;
  next_id_.store(0, std::memory_order_relaxed);
  return true;
}

std::uint32_t FunctionIds::count() const {
  const std::uint32_t n = next_id_.load(std::memory_order_acquire);
  return n < capacity_ ? n : static_cast<std::uint32_t>(capacity_);
}

std::uint32_t FunctionIds::insert(std::size_t i, std::uintptr_t address) {
  for (;;) {
    Slot& s = slots_[i];
    std::uintptr_t expected = 0;
    if (s.address.compare_exchange_strong(expected, address, std::memory_order_acq_rel)) {
      if (records != nullptr && !records(address)) {
        s.id.store(kExcluded, std::memory_order_release);
        return kExcluded;
      }
      const std::uint32_t n = next_id_.fetch_add(1, std::memory_order_acq_rel);
      if (n >= capacity_) return 0;  // table full: the slot stays claimed with id 0
      std::atomic_ref<std::uintptr_t>(addresses_[n]).store(address, std::memory_order_release);
      s.id.store(n + 1, std::memory_order_release);
      if (on_new_function != nullptr) on_new_function(address);
      return n + 1;
    }
    if (expected == address) {
      const std::uint32_t id = s.id.load(std::memory_order_acquire);
      return id != 0 ? id : wait_for_id(s);
    }
    i = (i + 1) & slot_mask_;
    // Continue probing from the next slot; an empty one is claimed there.
    while (true) {
      const std::uintptr_t key = slots_[i].address.load(std::memory_order_acquire);
      if (key == 0) break;
      if (key == address) {
        const std::uint32_t id = slots_[i].id.load(std::memory_order_acquire);
        return id ? id : wait_for_id(slots_[i]);
      }
      i = (i + 1) & slot_mask_;
    }
  }
}

std::uint32_t FunctionIds::wait_for_id(Slot& s) {
  // Another thread claimed the slot and is publishing the ID (a few
  // instructions, unless it was preempted). It cannot be this thread: a hook
  // re-entered by a signal handler never reaches lookup(). The wait is
  // bounded (about a second) only for a fork child, where the publishing
  // thread no longer exists; the event is then dropped.
  for (long spins = 0; spins < 1000000; ++spins) {
    const std::uint32_t id = s.id.load(std::memory_order_acquire);
    if (id != 0) return id;
    if (next_id_.load(std::memory_order_relaxed) >= capacity_) return 0;
    if (spins < 100) {
      __builtin_ia32_pause();
    } else {
      sched_yield();
    }
  }
  return 0;
}

}  // namespace parlot::runtime
