// The next definition of a function the runtime interposes (the C
// library's, or another interposer's), for the interposers to call.
#pragma once

#include <dlfcn.h>

namespace parlot::runtime {

/// Returns `slot`, resolving it with dlsym(RTLD_NEXT, name) on first use.
/// The runtime's constructors resolve every slot before main; the lazy path
/// serves code that runs earlier still (another interposer, e.g. a
/// sanitizer's, initialising before the runtime's constructors).
template <class Fn>
Fn next_symbol(Fn& slot, const char* name) {
  if (slot == nullptr) slot = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  return slot;
}

}  // namespace parlot::runtime
