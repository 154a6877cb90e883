// Library-call tracing (PARLOT_LIBCALLS; docs/DESIGN.md "Library calls"):
// before main, the GOT entries (R_X86_64_JUMP_SLOT) through which an
// instrumented object calls functions of uninstrumented shared objects are
// pointed at entry stubs (libcall_trampolines.S) that record the call as an
// entry event and make its return reach the return thunk, which records
// the exit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Number of entry stubs: distinct library functions that can be recorded.
inline constexpr std::size_t kLibcallStubs = 4096;

/// What entry stub i stands for.
struct LibcallStub {
  std::uintptr_t target;    ///< where the call goes (an IFUNC's chosen implementation)
  std::uintptr_t function;  ///< the address recorded as the function: its dynamic symbol's
};

/// Stub table, written before main (patch_library_calls), read by every
/// library call's entry.
extern LibcallStub g_libcall_stubs[kLibcallStubs];

/// True once patch_library_calls() ran with PARLOT_LIBCALLS on: new threads
/// then map the shadow of their stack (libcall_shadow.h).
extern bool g_libcalls_on;

/// What patch_library_calls() did (numbers of GOT entries and functions).
struct LibcallPatchCounts {
  std::size_t entries = 0;    ///< GOT entries pointed at stubs
  std::size_t functions = 0;  ///< distinct functions (stubs used)
  std::size_t no_stub = 0;    ///< GOT entries left alone: all stubs taken
};
extern LibcallPatchCounts g_libcall_counts;

/// Patches the GOT entries of every loaded instrumented object (one that
/// calls __cyg_profile_func_enter) that lead into an uninstrumented shared
/// object whose file name matches `spec`: "1" (any), or ':'-separated
/// fnmatch(3) patterns on the file's base name ("libc.so*:libm.so*").
/// Functions that return twice, read their caller's return address or
/// belong to Parlot are never patched (libcall_patcher.cpp, kNeverPatched).
/// Not thread-safe; cold (dlvsym, mprotect). Called before main.
void patch_library_calls(const char* spec);

/// True when a loaded object is instrumented (calls __cyg_profile_func_enter;
/// Parlot's own libraries do not count). Cold: reads every object's dynamic
/// relocations. Call before main or with no dlopen running.
bool instrumented_object_loaded();

/// Patches the instrumented objects loaded (dlopen) since the last patching,
/// as patch_library_calls() did at start. Called by the idle flusher's
/// thread, every round: calls an object makes before it is patched are not
/// recorded. Cold; a no-op unless PARLOT_LIBCALLS is on.
void patch_library_calls_of_new_objects();

}  // namespace parlot::runtime
