// backtrace(3) as without the runtime, through recorded library calls
// (PARLOT_LIBCALLS; docs/DESIGN.md "Library calls"). A library call's
// return address is the return thunk's while it runs, so the C library's
// backtrace() lists the thunk (a frame of libparlotrt) between the library
// function and its caller, and the caller's address minus one (the thunk's
// frame is a signal frame: libcall_trampolines.S). The runtime interposes
// backtrace(): it asks the C library's for the frames, then drops those of
// the runtime's own code (the thunk's, the wrapper that runs main, the
// dispatcher that runs the program's signal handlers) and gives the
// callers of the thunks their real return addresses.
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#include "next_symbol.h"

// libcall_trampolines.S: where a recorded library call returns to.
extern "C" char parlot_libcall_return_thunk[];

namespace {

using BacktraceFn = int (*)(void**, int);
BacktraceFn g_backtrace;

[[gnu::constructor(101)]] void resolve_backtrace() {
  g_backtrace = reinterpret_cast<BacktraceFn>(dlsym(RTLD_NEXT, "backtrace"));
}

// Room for frames beyond the caller's `size`: the interposer's own and one
// per recorded library call on the stack (each adds a thunk frame).
constexpr int kExtraFrames = 256;
constexpr int kOnStack = 512;  // frames kept on the stack; more are mmapped

// Copies the frames `from[1..n)` (from[0] is the interposer's) to `to`,
// at most `size`, without the runtime's frames and with the real return
// address of the frame after a thunk. Returns how many were copied.
int copy_frames(void* const* from, int n, void** to, int size) {
  const auto thunk = reinterpret_cast<std::uintptr_t>(parlot_libcall_return_thunk);
  // The runtime's extent (lock-free, glibc 2.35).
  dl_find_object self;
  std::uintptr_t lo = 0, hi = 0;
  if (_dl_find_object(reinterpret_cast<void*>(&copy_frames), &self) == 0) {
    lo = reinterpret_cast<std::uintptr_t>(self.dlfo_map_start);
    hi = reinterpret_cast<std::uintptr_t>(self.dlfo_map_end);
  }
  int out = 0;
  bool after_thunk = false;
  for (int i = 1; i < n && out < size; ++i) {
    const auto address = reinterpret_cast<std::uintptr_t>(from[i]);
    if (address == thunk || (address >= lo && address < hi)) {
      after_thunk = address == thunk;
      continue;
    }
    to[out++] = reinterpret_cast<void*>(after_thunk ? address + 1 : address);
    after_thunk = false;
  }
  return out;
}

}  // namespace

extern "C" {

/// Interposes glibc's backtrace(3): stores at most `size` return addresses
/// of the calling thread's frames in `array`, innermost first (the caller
/// of backtrace first), as the C library does, and returns how many; no
/// frame of the runtime's code appears (the return thunk, the wrapper of
/// main, the signal dispatcher) and the caller of a recorded library call
/// shows its real return address. Not async-signal-safe on
/// its first call (neither is glibc's, which loads libgcc_s then); may
/// mmap when `size` is above 256 frames.
[[gnu::visibility("default"), gnu::no_instrument_function, gnu::noinline]] int backtrace(
    void** array, int size) {
  BacktraceFn real = parlot::runtime::next_symbol(g_backtrace, "backtrace");
  if (real == nullptr || array == nullptr || size <= 0) return 0;
  const int capacity = size + 1 + kExtraFrames;
  void* on_stack[kOnStack];
  void** frames = on_stack;
  const std::size_t bytes = static_cast<std::size_t>(capacity) * sizeof(void*);
  if (capacity > kOnStack) {
    void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return 0;
    frames = static_cast<void**>(mapped);
  }
  const int n = real(frames, capacity);
  const int copied = copy_frames(frames, n, array, size);
  if (frames != on_stack) munmap(frames, bytes);
  return copied;
}

}  // extern "C"
