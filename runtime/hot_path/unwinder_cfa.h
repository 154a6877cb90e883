// The CFA of an unwind context, asked of the unwinder that made it. The
// runtime links its own copy of libgcc's unwinder, hidden (stack_walk.h);
// a personality routine it provides (the library calls' return thunk,
// hooks.cpp) is handed contexts of the program's unwinder, which only that
// unwinder's functions may read. In a C program that unwinder (libgcc_s,
// which glibc loads for thread cancellation and pthread_exit) is not in the
// global scope, so it is looked up in the object that called the
// personality routine.
#pragma once

#include <unwind.h>

#include <cstdint>

namespace parlot::runtime {

/// _Unwind_GetCFA(context) of the unwinder whose code contains
/// `unwinder_code` (an address in it: the personality routine's return
/// address), in bytes. Returns 0 when that object defines no
/// _Unwind_GetCFA. Cold: the first call for an unwinder takes the dynamic
/// loader's lock (dladdr, dlopen with RTLD_NOLOAD, dlsym); later ones read
/// a small cache, lock-free.
std::uintptr_t unwinder_cfa(_Unwind_Context* context, const void* unwinder_code);

}  // namespace parlot::runtime
