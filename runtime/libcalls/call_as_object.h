// Calling the dynamic loader on behalf of another loaded object
// (call_as_object.S): its entry points (dlsym with RTLD_DEFAULT, dlvsym,
// dlopen, dlmopen) take the calling object from their return address.
#pragma once

#include <cstdint>

extern "C" {
/// Calls `fn(a, b, c)` with its return address set to `ret_in_object`, the
/// address of a byte 0xc3 (`ret`) in the code of the object to act for
/// (ret_instruction_in()); returns what `fn` returns (an integer or
/// pointer in %rax). Nothing else is passed: functions of up to three
/// integer or pointer arguments. Not for code that unwinds.
std::uintptr_t parlot_call_as_object(const void* fn, std::uintptr_t ret_in_object, std::uintptr_t a,
                                     std::uintptr_t b, std::uintptr_t c);
}

namespace parlot::runtime {

/// The address of a byte 0xc3 in an executable segment of the loaded object
/// that holds code address `address` (found with _dl_find_object and the
/// object's program headers), or 0 when there is none. Cold: scans code.
std::uintptr_t ret_instruction_in(std::uintptr_t address);

}  // namespace parlot::runtime
