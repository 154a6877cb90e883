// dlopen and dlmopen: the objects they load are patched for library-call
// tracing (PARLOT_LIBCALLS, libcall_patcher.h) as soon as they return, so
// that the calls made right after a dlopen are recorded. The loader takes
// the calling object from its entry point's return address (the run path
// the file is searched in, the caller's namespace): the real function is
// called as the program's calling object (call_as_object.h), so it finds
// exactly what it finds untraced. Their sleds are patched then too
// (sleds/sled_patcher.h).
#include <dlfcn.h>

#include <cstdint>

#include "libcalls/call_as_object.h"
#include "libcalls/libcall_patcher.h"
#include "next_symbol.h"
#include "sleds/sled_patcher.h"

namespace {

using Dlopen = void* (*)(const char*, int);
using Dlmopen = void* (*)(Lmid_t, const char*, int);
Dlopen g_next_dlopen = nullptr;
Dlmopen g_next_dlmopen = nullptr;

// Calls `fn(a, b, c)` as the object holding `caller` (a return address) would.
std::uintptr_t call_as_caller(const void* fn, void* caller, std::uintptr_t a, std::uintptr_t b,
                              std::uintptr_t c) {
  const std::uintptr_t ret =
      parlot::runtime::ret_instruction_in(reinterpret_cast<std::uintptr_t>(caller));
  if (ret != 0) return parlot_call_as_object(fn, ret, a, b, c);
  using Fn = std::uintptr_t (*)(std::uintptr_t, std::uintptr_t, std::uintptr_t);
  return reinterpret_cast<Fn>(const_cast<void*>(fn))(a, b, c);
}

[[gnu::constructor(101)]] void resolve_dlopen() {
  parlot::runtime::next_symbol(g_next_dlopen, "dlopen");
  parlot::runtime::next_symbol(g_next_dlmopen, "dlmopen");
}

}  // namespace

extern "C" {

/// dlopen(3), as the C library's, called as the program's calling object;
/// then the new objects' library calls are patched.
[[gnu::visibility("default")]] void* dlopen(const char* file, int mode) {
  const Dlopen next = parlot::runtime::next_symbol(g_next_dlopen, "dlopen");
  void* handle = reinterpret_cast<void*>(
      call_as_caller(reinterpret_cast<const void*>(next), __builtin_return_address(0),
                     reinterpret_cast<std::uintptr_t>(file), static_cast<std::uintptr_t>(mode), 0));
  if (handle != nullptr) {
    parlot::runtime::patch_library_calls_of_new_objects();
    parlot::runtime::patch_sleds_of_new_objects();
  }
  return handle;
}

/// dlmopen(3), likewise.
[[gnu::visibility("default")]] void* dlmopen(Lmid_t namespace_id, const char* file, int mode) {
  const Dlmopen next = parlot::runtime::next_symbol(g_next_dlmopen, "dlmopen");
  void* handle = reinterpret_cast<void*>(
      call_as_caller(reinterpret_cast<const void*>(next), __builtin_return_address(0),
                     static_cast<std::uintptr_t>(namespace_id),
                     reinterpret_cast<std::uintptr_t>(file), static_cast<std::uintptr_t>(mode)));
  if (handle != nullptr) {
    parlot::runtime::patch_library_calls_of_new_objects();
    parlot::runtime::patch_sleds_of_new_objects();
  }
  return handle;
}

}  // extern "C"
