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

/// What entry stub i stands for: one function as the program calls it, a
/// relocation symbol (name and version) and where the loader binds it.
struct LibcallStub {
  std::uintptr_t target;  ///< where the call goes (an IFUNC's chosen implementation)
  /// The address recorded as the function: the stub's own, so that every
  /// symbol has its own function ID even where two share a target (memcpy
  /// and memmove); the `libcalls` file names it (docs/FORMAT.md).
  std::uintptr_t function;
  const char* name;     ///< the relocation's symbol, e.g. "memcpy"
  const char* version;  ///< the version the reference asks for ("GLIBC_2.14"), or ""
  const char* library;  ///< path of the object defining the symbol ("" when unnamed)
};

/// Stub table, written before main (patch_library_calls), read by every
/// library call's entry.
extern LibcallStub g_libcall_stubs[kLibcallStubs];

/// True once patch_library_calls() ran with PARLOT_LIBCALLS on: new threads
/// then map the shadow of their stack (libcall_shadow.h).
extern bool g_libcalls_on;

/// Why a relocation through which an instrumented object calls a library
/// function was left as it is (its calls are not recorded).
enum class LibcallLeft : unsigned {
  kGlobDat,       ///< R_X86_64_GLOB_DAT: a function pointer or a -fno-plt call
  kReturnsTwice,  ///< setjmp, vfork, the *context functions
  kReadsCaller,   ///< dlopen, dlsym: they read their caller's return address
  kNeverOther,    ///< the C library's start, the TLS resolver
  kInterposed,    ///< a function Parlot interposes itself (sigaction, exit, ...)
  kNoStub,        ///< all kLibcallStubs stubs taken
  kNotWritable,   ///< the GOT could not be made writable (mprotect failed)
  kAudit,         ///< an audit module (LD_AUDIT, DT_AUDIT) owns the PLT binding
  kCount
};

/// What patching did in this process, over its life (a reloaded object is
/// counted again).
struct LibcallPatchCounts {
  std::size_t entries = 0;    ///< GOT entries pointed at stubs
  std::size_t objects = 0;    ///< objects with at least one entry patched
  std::size_t functions = 0;  ///< distinct functions (stubs used)
  std::size_t left[static_cast<unsigned>(LibcallLeft::kCount)] = {};  ///< by reason
};
extern LibcallPatchCounts g_libcall_counts;

/// The key of `reason` in the `libcalls` file ("glob_dat", "audit", ...).
const char* libcall_left_key(LibcallLeft reason);

/// When `address` is an entry stub's (a library call's function address),
/// sets `*name` and `*library` to its symbol and defining object's path and
/// returns true. Async-signal-safe, lock-free (the stub table is written
/// before any GOT entry leads to the stub).
bool libcall_stub_names(std::uintptr_t address, const char** name, const char** library);

/// Writes the process directory's `libcalls` file (docs/FORMAT.md) when
/// PARLOT_LIBCALLS is on: the patched and left counts and each stub's name.
/// Called when the process directory is made (a fork child's included);
/// every patching pass rewrites it. Never waits: when a patching pass is
/// running, that pass writes it.
void write_libcall_record();

/// Patches the GOT entries of every loaded instrumented object (one that
/// calls __cyg_profile_func_enter) that lead into an uninstrumented shared
/// object whose file name matches `spec`: "1" (any), or ':'-separated
/// fnmatch(3) patterns on the file's base name ("libc.so*:libm.so*").
/// Functions that return twice, read their caller's return address or
/// belong to Parlot are never patched (libcall_accounting.cpp, kNeverPatched).
/// Nothing is patched while an audit module is active (LD_AUDIT, DT_AUDIT):
/// it owns the PLT binding. Each entry goes where the loader binds it for
/// that object (the bound GOT value, else the loader's lookup in the
/// object's own scope). Idempotent (objects already patched are left);
/// cold (dlsym, mprotect). Called by the runtime's constructor and at the
/// process's first event, whichever comes first.
void patch_library_calls(const char* spec);

/// True when a loaded object is instrumented (calls __cyg_profile_func_enter;
/// Parlot's own libraries do not count). Cold: reads every object's dynamic
/// relocations. Call before main or with no dlopen running.
bool instrumented_object_loaded();

/// Patches the instrumented objects loaded (dlopen) since the last patching,
/// and those loaded again at an address where an earlier copy was patched,
/// as patch_library_calls() did at start. Called by the idle flusher's
/// thread, every round, and by dlopen/dlmopen when they return. Cold; a
/// no-op unless PARLOT_LIBCALLS is on. Never waits for another pass: when
/// one is running, returns false (that pass or the flusher's next round
/// patches the new objects); true otherwise.
bool patch_library_calls_of_new_objects();

/// Patching at the process's first event (PARLOT_LIBCALLS from the
/// environment): instrumented code may run before the runtime's constructor
/// (another library's constructor calling into the program), and a thread's
/// trace must know at its creation that library calls are recorded. Idempotent.
void patch_library_calls_at_first_event();

}  // namespace parlot::runtime
