// Thread creation, interposed (whether preloaded or linked) only to number
// threads by creation (thread_index.h): pthread_create and thrd_create take
// the new thread's creation index in the creator, at the call, and start
// the thread through a wrapper that hands the index to it before the
// program's start routine runs (so a thread cancelled or exiting early
// still has its index).
//
// The wrapper's arguments (the program's routine and argument, the index)
// travel in a slot of a static table, claimed with one compare-and-swap by
// the creator and given back by the new thread before the program's routine
// starts: no malloc, so a program's own (instrumented) malloc sees nothing
// and a sanitizer's allocator is never called on a thread it has not set up
// yet. With every slot taken (kSlots threads created and none started yet),
// the thread is created as asked and numbered at its first event.
#include <dlfcn.h>
#include <pthread.h>
#include <threads.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hot_path/thread_stack.h"
#include "ignore_hooks.h"
#include "next_symbol.h"
#include "process/thread_index.h"

namespace {

using PthreadCreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using ThrdCreateFn = int (*)(thrd_t*, thrd_start_t, void*);

PthreadCreateFn g_pthread_create;
ThrdCreateFn g_thrd_create;

// What a new thread needs from its creator: the program's start routine
// (one of the two) and its argument.
struct StartArgs {
  void* (*pthread_routine)(void*) = nullptr;
  thrd_start_t c11_routine = nullptr;
  void* arg = nullptr;
};

struct StartSlot {
  std::atomic<bool> taken{false};
  StartArgs args;
  std::uint64_t index = 0;
};

// Threads created and not started yet, at most.
constexpr std::size_t kSlots = 1024;
StartSlot g_slots[kSlots];

// Claims a free slot, looking first at the one `index` points to (a thread
// at a time: the first look succeeds). Returns nullptr when all are taken.
StartSlot* claim_slot(std::uint64_t index) {
  for (std::size_t i = 0; i < kSlots; ++i) {
    StartSlot& s = g_slots[(index + i) % kSlots];
    bool expected = false;
    if (!s.taken.load(std::memory_order_relaxed) &&
        s.taken.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      return &s;
    }
  }
  return nullptr;
}

void release_slot(StartSlot* s) {
  s->taken.store(false, std::memory_order_release);
}

// A fork child has only the forking thread: slots that other threads of the
// parent had claimed will never be given back there.
void release_all_slots_in_fork_child() {
  for (StartSlot& s : g_slots) s.taken.store(false, std::memory_order_relaxed);
}

// Resolved before main, not in a hook: dlsym may take the loader's lock.
[[gnu::constructor(101)]] void resolve_thread_creation() {
  {
    // dlsym may call malloc, which a program may have replaced and instrumented.
    parlot::runtime::IgnoreHooksOnThisThread quiet;
    g_pthread_create = reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
    g_thrd_create = reinterpret_cast<ThrdCreateFn>(dlsym(RTLD_NEXT, "thrd_create"));
  }
  pthread_atfork(nullptr, nullptr, release_all_slots_in_fork_child);
}

// In the new thread, first: keeps the index, copies the rest out and gives
// the slot back (nothing here is a cancellation point).
StartArgs take_slot(void* p) {
  auto* s = static_cast<StartSlot*>(p);
  const StartArgs args = s->args;
  parlot::runtime::set_creation_index(s->index);
  release_slot(s);
  return args;
}

// The new thread's stack, for its first event (thread_stack.h): here it
// holds no lock of the program's yet. Not in sanitizer builds, where this
// runs before the sanitizer set the thread up (pthread_getattr_np
// allocates); the first event then reads /proc/self/maps.
void remember_stack_at_start() {
#ifndef PARLOT_SANITIZED_BUILD
  parlot::runtime::remember_thread_stack();
#endif
}

void* start_pthread(void* p) {
  const StartArgs a = take_slot(p);
  remember_stack_at_start();
  return a.pthread_routine(a.arg);
}

int start_c11_thread(void* p) {
  const StartArgs a = take_slot(p);
  remember_stack_at_start();
  return a.c11_routine(a.arg);
}

// Takes the new thread's index and a slot for it (nullptr: none free).
StartSlot* prepare_start(const StartArgs& args) {
  const std::uint64_t index = parlot::runtime::take_creation_index();
  StartSlot* s = claim_slot(index);
  if (s != nullptr) {
    s->args = args;
    s->index = index;
  }
  return s;
}

// Set while create_runtime_thread() runs: the interposer then takes no
// index.
constinit thread_local bool tls_creating_runtime_thread __attribute__((tls_model("initial-exec"))) =
    false;

}  // namespace

int parlot::runtime::create_runtime_thread(pthread_t* thread, const pthread_attr_t* attr,
                                           void* (*routine)(void*), void* arg) {
  // Through the global pthread_create, so a sanitizer's interceptor (first
  // in the lookup order) sets the thread up; the interposer lets it pass.
  tls_creating_runtime_thread = true;
  const int err = ::pthread_create(thread, attr, routine, arg);
  tls_creating_runtime_thread = false;
  return err;
}

extern "C" {

/// Interposes pthread_create(3): the new thread gets the next creation
/// index (thread_index.h). Same arguments, result and errors.
[[gnu::visibility("default"), gnu::no_instrument_function]] int pthread_create(
    pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg) {
  const auto real = parlot::runtime::next_symbol(g_pthread_create, "pthread_create");
  if (tls_creating_runtime_thread) return real(thread, attr, routine, arg);
  StartSlot* s = prepare_start({routine, nullptr, arg});
  if (s == nullptr) return real(thread, attr, routine, arg);
  const int err = real(thread, attr, start_pthread, s);
  if (err != 0) release_slot(s);  // no thread: its index stays unused
  return err;
}

/// Interposes C11 thrd_create (glibc's does not go through pthread_create's
/// symbol): numbered like pthread_create. Same arguments and results.
[[gnu::visibility("default"), gnu::no_instrument_function]] int thrd_create(thrd_t* thread,
                                                                            thrd_start_t routine,
                                                                            void* arg) {
  const auto real = parlot::runtime::next_symbol(g_thrd_create, "thrd_create");
  StartSlot* s = prepare_start({nullptr, routine, arg});
  if (s == nullptr) return real(thread, routine, arg);
  const int err = real(thread, start_c11_thread, s);
  if (err != thrd_success) release_slot(s);
  return err;
}

}  // extern "C"
