// The library-call entry stubs (libcall_trampolines.S) and what each stands
// for (libcall_patcher.h's g_libcall_stubs): one relocation symbol (name
// and version) bound to one target, named by copies of its strings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime::libcall {

/// Bytes of code per entry stub (`mov $i, %r11d; jmp entry`, padded).
inline constexpr std::size_t kStubBytes = 16;

/// The address of entry stub `i` (the function address recorded for it).
std::uintptr_t stub_address(std::size_t i);

/// True when `value` is the address of an entry stub's code (a GOT entry
/// patched already, or a library call's function address).
bool in_parlot_stubs(std::uintptr_t value);

/// The index of the stub of symbol `name` (`version`, "" for none) bound to
/// `target` in the object at `library` (its path): the same for every GOT
/// entry with that symbol and target; a new one is published (with copies
/// of the strings) before it is returned. -1 when all kLibcallStubs are
/// taken or the strings do not fit. Called with the patcher's lock held.
long stub_for(std::uintptr_t target, const char* name, const char* version, const char* library);

}  // namespace parlot::runtime::libcall
