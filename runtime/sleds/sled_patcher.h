// Patching the sleds of the loaded objects on and off (docs/DESIGN.md
// "Sleds"): each function compiled with -fpatchable-function-entry=5
// starts with 5 bytes of NOPs; patched, they call parlot_sled_entry
// (through the object's mirror, sled_mirror.h), which records the entry and
// makes the function's return reach the return thunk of library calls
// (libcall_trampolines.S), which records the exit. Unpatched, the program
// runs its NOPs and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// True once an object with sleds was found: new threads then map the
/// shadow of their stack's return addresses (libcall_shadow.h).
extern bool g_sleds_found;

/// Counts of the last patching pass.
struct SledCounts {
  std::size_t objects = 0;  ///< loaded objects with sleds
  std::size_t sleds = 0;    ///< sleds in them
  std::size_t patched = 0;  ///< sleds in the state asked (a call when on, NOPs when off)
  /// Sleds left as they are: bytes that are not a sled's (a 5-byte NOP not
  /// inside one aligned 8-byte word cannot be replaced atomically), or an
  /// object whose mirror or text could not be mapped.
  std::size_t left = 0;
};

/// Patches every sled of every loaded object to call the entry trampoline
/// (`on`) or back to NOPs (`!on`), and remembers the state for objects
/// loaded later (sleds_patch_new_objects). Each sled changes by one atomic
/// store (the first byte, or one aligned 8-byte word), with the text
/// read-write-execute only for the pass and read-execute again after it.
/// Returns the pass's counts. Cold: takes the patcher's lock (never call it
/// from a signal handler), open, mmap, mprotect.
SledCounts set_sleds(bool on);

/// True when the sleds are patched on (the last set_sleds() asked `on`).
bool sleds_on();

/// Patches the sleds of objects loaded since the last pass to the state of
/// the last set_sleds(), and forgets unloaded ones. Called when dlopen and
/// dlmopen return and by the idle flusher's thread. Never waits for a pass
/// running on another thread (returns at once then). Cold.
void patch_sleds_of_new_objects();

}  // namespace parlot::runtime
