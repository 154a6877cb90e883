// The calling thread's stack from /proc/self/maps (thread_stack.h).
#include "hot_path/thread_stack.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "ignore_hooks.h"
#include "io/proc_maps.h"

namespace parlot::runtime {
namespace {

// The stack remembered by remember_thread_stack() (hi 0: none).
constinit thread_local std::uintptr_t tls_stack_lo __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local std::uintptr_t tls_stack_hi __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace

bool find_thread_stack(std::uintptr_t* lo, std::uintptr_t* hi) {
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  Mapping m;
  if (!find_mapping(sp, m)) return false;
  const std::uintptr_t start = m.start, end = m.end, prev_end = m.prev_end;
  std::uintptr_t low = start;
  if (syscall(SYS_getpid) == syscall(SYS_gettid)) {
    // The main thread's stack grows down to RLIMIT_STACK below its top.
    rlimit limit{};
    std::uintptr_t room = std::uintptr_t{8} << 20;
    if (syscall(SYS_getrlimit, RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      room = limit.rlim_cur;
    low = end - room < end ? end - room : 0;
    if (low < prev_end) low = prev_end;
    if (low > start) low = start;
  }
  *lo = low;
  *hi = end;
  return true;
}

void remember_thread_stack() {
  IgnoreHooksOnThisThread quiet;
  const int saved_errno = errno;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* lo = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &lo, &size) == 0 && size != 0) {
      tls_stack_lo = reinterpret_cast<std::uintptr_t>(lo);
      tls_stack_hi = tls_stack_lo + size;
    }
    pthread_attr_destroy(&attr);
  }
  errno = saved_errno;
}

bool thread_stack(std::uintptr_t* lo, std::uintptr_t* hi) {
  if (tls_stack_hi != 0) {
    *lo = tls_stack_lo;
    *hi = tls_stack_hi;
    return true;
  }
  return find_thread_stack(lo, hi);
}

namespace {
// The main thread's, before main.
[[gnu::constructor(101)]] void remember_main_thread_stack() {
  remember_thread_stack();
}
}  // namespace

}  // namespace parlot::runtime
