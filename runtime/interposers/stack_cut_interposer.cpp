// Functions that cut a thread's stack without running exit hooks. The
// runtime interposes them (whether preloaded or linked) only to mark the
// thread: its next entry hook compares the shadow stack with the real one
// (hooks.cpp, resync_with_real_stack). Then the real function runs.
//  - longjmp, _longjmp, siglongjmp, __longjmp_chk: frames between the jump
//    and its target are gone;
//  - __cxa_begin_catch: the frames an exception left are gone; gcc calls
//    their exit hooks while unwinding, clang does not;
//  - pthread_exit, pthread_cancel (of the target thread): glibc unwinds the
//    thread to run its cleanup handlers, for C code with an internal
//    longjmp to the frame that pushed each handler;
//  - __pthread_unwind_next, which C code calls after each cleanup handler
//    (pthread_cleanup_push's expansion): the unwinding goes on to the
//    frame that pushed the next handler.
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>

#include "hot_path/current_trace.h"
#include "ignore_hooks.h"
#include "next_symbol.h"
#include "process/process_trace.h"

namespace {

using JumpFn = void (*)(void*, int);
using CatchFn = void* (*)(void*);
using ThreadExitFn = void (*)(void*);
using CancelFn = int (*)(pthread_t);
using UnwindNextFn = void (*)(__pthread_unwind_buf_t*);

JumpFn g_longjmp, g_underscore_longjmp, g_siglongjmp, g_longjmp_chk;
CatchFn g_begin_catch;
ThreadExitFn g_pthread_exit;
CancelFn g_pthread_cancel;
UnwindNextFn g_pthread_unwind_next;

// Resolved before main (and before any jump can happen), not in a hook:
// dlsym may take the loader's lock.
[[gnu::constructor(101)]] void resolve_originals() {
  // dlsym may call malloc, which a program may have replaced and instrumented.
  parlot::runtime::IgnoreHooksOnThisThread quiet;
  g_longjmp = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, "longjmp"));
  g_underscore_longjmp = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, "_longjmp"));
  g_siglongjmp = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, "siglongjmp"));
  g_longjmp_chk = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, "__longjmp_chk"));
  g_begin_catch = reinterpret_cast<CatchFn>(dlsym(RTLD_NEXT, "__cxa_begin_catch"));
  g_pthread_exit = reinterpret_cast<ThreadExitFn>(dlsym(RTLD_NEXT, "pthread_exit"));
  g_pthread_cancel = reinterpret_cast<CancelFn>(dlsym(RTLD_NEXT, "pthread_cancel"));
  g_pthread_unwind_next = reinterpret_cast<UnwindNextFn>(dlsym(RTLD_NEXT, "__pthread_unwind_next"));
}

inline void mark_stack_cut() {
  if (parlot::runtime::ThreadTrace* t = parlot::runtime::tls_thread_trace) {
    t->resync_pending.store(true, std::memory_order_relaxed);
  }
}

[[noreturn]] void jump(JumpFn& real, const char* name, void* env, int value) {
  mark_stack_cut();
  parlot::runtime::next_symbol(real, name)(env, value);
  __builtin_unreachable();
}

}  // namespace

extern "C" {

/// Interposes longjmp(3): marks the stack cut, then jumps.
[[gnu::visibility("default"), gnu::no_instrument_function]] void longjmp(jmp_buf env, int value) {
  jump(g_longjmp, "longjmp", env, value);
}
/// Interposes _longjmp(3).
[[gnu::visibility("default"), gnu::no_instrument_function]] void _longjmp(jmp_buf env, int value) {
  jump(g_underscore_longjmp, "_longjmp", env, value);
}
/// Interposes siglongjmp(3).
[[gnu::visibility("default"), gnu::no_instrument_function]] void siglongjmp(sigjmp_buf env,
                                                                            int value) {
  jump(g_siglongjmp, "siglongjmp", env, value);
}
/// Interposes glibc's fortified longjmp (_FORTIFY_SOURCE).
[[gnu::visibility("default"), gnu::no_instrument_function]] void __longjmp_chk(jmp_buf env,
                                                                               int value) {
  jump(g_longjmp_chk, "__longjmp_chk", env, value);
}
/// Interposes the C++ ABI's __cxa_begin_catch (called at the start of every
/// catch block, in the catching frame).
[[gnu::visibility("default"), gnu::no_instrument_function]] void* __cxa_begin_catch(
    void* exception) noexcept {
  mark_stack_cut();
  return parlot::runtime::next_symbol(g_begin_catch, "__cxa_begin_catch")(exception);
}

/// Interposes pthread_exit(3).
[[gnu::visibility("default"), gnu::no_instrument_function]] void pthread_exit(void* result) {
  mark_stack_cut();
  parlot::runtime::next_symbol(g_pthread_exit, "pthread_exit")(result);
  __builtin_unreachable();
}

/// Interposes pthread_cancel(3): marks the target thread.
[[gnu::visibility("default"), gnu::no_instrument_function]] int pthread_cancel(pthread_t thread) {
  parlot::runtime::mark_stack_cut_of(thread);
  return parlot::runtime::next_symbol(g_pthread_cancel, "pthread_cancel")(thread);
}

/// Interposes glibc's __pthread_unwind_next (called by C code after each
/// cleanup handler; goes on unwinding the thread, never returns).
[[gnu::visibility("default"), gnu::no_instrument_function]] void __pthread_unwind_next(
    __pthread_unwind_buf_t* buf) {
  mark_stack_cut();
  parlot::runtime::next_symbol(g_pthread_unwind_next, "__pthread_unwind_next")(buf);
  __builtin_unreachable();
}

}  // extern "C"
