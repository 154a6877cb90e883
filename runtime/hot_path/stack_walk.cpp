#include "hot_path/stack_walk.h"

#include <ucontext.h>
#include <unwind.h>

namespace parlot::runtime {
namespace {

struct Walk {
  std::uintptr_t* out;
  std::size_t cap;
  std::size_t n = 0;
  std::size_t skip = 0;            // frames still to skip (walk_own_stack)
  std::uintptr_t interrupted = 0;  // the signal context's IP, or 0
  bool started = true;             // false until the interrupted frame is met
};

_Unwind_Reason_Code on_frame(_Unwind_Context* context, void* arg) {
  auto* w = static_cast<Walk*>(arg);
  int before_insn = 0;
  const auto ip = static_cast<std::uintptr_t>(_Unwind_GetIPInfo(context, &before_insn));
  if (ip == 0) return _URC_END_OF_STACK;
  if (!w->started) {
    // The frames of the handler, then the kernel's signal frame; the
    // interrupted function is the next frame marked as a signal frame.
    if (before_insn == 0 || ip != w->interrupted) return _URC_NO_REASON;
    w->started = true;
    return _URC_NO_REASON;  // recorded already, from the context
  }
  if (w->skip != 0) {
    --w->skip;
    return _URC_NO_REASON;
  }
  if (w->n == w->cap) return _URC_END_OF_STACK;
  w->out[w->n++] = ip;
  return _URC_NO_REASON;
}

}  // namespace

[[gnu::noinline]] std::size_t walk_own_stack(std::uintptr_t* out, std::size_t cap,
                                             std::size_t skip) {
  // The first frame the unwinder reports is this function's (the return
  // address into it from _Unwind_Backtrace), then its caller's.
  Walk w{out, cap};
  w.skip = skip + 2;
  _Unwind_Backtrace(on_frame, &w);
  return w.n;
}

std::size_t walk_interrupted_stack(const void* ucontext, std::uintptr_t* out, std::size_t cap) {
  if (ucontext == nullptr || cap == 0) return 0;
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
  Walk w{out, cap};
  w.interrupted = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  w.out[w.n++] = w.interrupted;
  w.started = false;
  _Unwind_Backtrace(on_frame, &w);
  return w.n;
}

}  // namespace parlot::runtime
