// The loader's lookups for the unbound GOT entries of the objects a
// library-call patching pass patches (libcall_patcher.h), each done as the
// calling object would do it: dlsym/dlvsym returning through a `ret` byte
// of that object's code (call_as_object.h), so that the loader searches
// the object's own lookup scope. The loader may neither be called while its
// list of objects is held (dlsym takes its main lock: lock order) nor let
// an object be read outside such a hold (another thread's dlclose may unmap
// it), so a pass notes the lookups inside a hold (want_lookups_of), runs
// them outside it with each object pinned (run_lookups), and uses the
// answers inside the next hold (bound_target), only if no object was
// loaded or unloaded in between (docs/DESIGN.md "Library calls").
#pragma once

#include <cstddef>
#include <cstdint>

#include "libcalls/libcall_objects.h"

namespace parlot::runtime::libcall {

/// An object to patch in this pass, and the lookups its unbound entries
/// need. Its strings are read only while it is pinned (run_lookups) or held.
struct Caller {
  std::uintptr_t lo = 0;             ///< Object::lo: identifies the object in the pass
  std::uintptr_t bias = 0;           ///< Object::bias, link_map::l_addr
  std::uintptr_t dynamic = 0;        ///< Object::dynamic, link_map::l_ld
  std::uintptr_t ret = 0;            ///< a `ret` byte in its code (call_as_object.h), or 0
  const char* path = nullptr;        ///< a copy of its name, for the pin
  bool main = false;                 ///< never unloaded: no pin needed
  bool fits = true;                  ///< its lookups fit in the pass's table
  bool answered = false;             ///< every lookup run (none needed, or pinned and run)
  std::size_t first = 0, count = 0;  ///< its lookups in the table, by relocation index
};

/// Starts a pass: forgets the objects and lookups noted.
void forget_lookups();

/// Notes `o` as to be patched in this pass (the object held), with the
/// lookups its unbound JUMP_SLOT entries need; entries patched already and
/// the hooks need none. When they do not fit, `o` is left for a later pass
/// (ready() says nullptr for it).
void want_lookups_of(const Object& o);

/// Runs the noted lookups (no object held; g_objects' copied fields only,
/// each caller's strings while it is pinned): the first definition in the
/// caller's lookup scope, and the version the reference asks for where the
/// defining object has versions (one without versions satisfies any). A
/// caller that cannot be pinned (unloaded since) stays unanswered.
void run_lookups();

/// The pass's record of the object at `lo` when it is to be patched now:
/// noted in this pass's first hold and every lookup answered; else nullptr.
const Caller* ready(std::uintptr_t lo);

/// Where relocation `r` of `o` (its GOT value `got`) leads: the bound GOT
/// value, else the answer run_lookups() found for it in `c`, o's record.
/// 0 when there is no definition (an undefined weak function). `o` held.
std::uintptr_t bound_target(const Object& o, const Caller& c, std::size_t r, std::uintptr_t got);

}  // namespace parlot::runtime::libcall
