// The calling thread's stack from /proc/self/maps (thread_stack.h).
#include "thread_stack.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "own_fd.h"
#include "process_trace.h"

namespace parlot::runtime {
namespace {

// The stack remembered by remember_thread_stack() (hi 0: none).
constinit thread_local std::uintptr_t tls_stack_lo __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local std::uintptr_t tls_stack_hi __attribute__((tls_model("initial-exec"))) = 0;

// Parses a lowercase hex number at `p`, advancing it.
std::uintptr_t parse_hex(const char*& p, const char* end) {
  std::uintptr_t v = 0;
  for (; p < end; ++p) {
    const char c = *p;
    if (c >= '0' && c <= '9') {
      v = v * 16 + static_cast<std::uintptr_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v = v * 16 + static_cast<std::uintptr_t>(c - 'a' + 10);
    } else {
      break;
    }
  }
  return v;
}

}  // namespace

bool find_thread_stack(std::uintptr_t* lo, std::uintptr_t* hi) {
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const int saved_errno = errno;
  const int fd = open_own("/proc/self/maps", O_RDONLY);
  if (fd < 0) {
    errno = saved_errno;
    return false;
  }
  char buf[4096];
  std::size_t have = 0;         // bytes in buf
  std::uintptr_t prev_end = 0;  // end of the mapping before the current line
  bool found = false;
  std::uintptr_t start = 0, end = 0;
  for (bool eof = false; !found;) {
    if (!eof && have < sizeof buf) {
      const ssize_t n = syscall(SYS_read, fd, buf + have, sizeof buf - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        eof = true;
      else
        have += static_cast<std::size_t>(n);
    }
    // Whole lines in buf.
    std::size_t used = 0;
    while (!found) {
      const char* line = buf + used;
      const char* stop = buf + have;
      const char* nl = line;
      while (nl < stop && *nl != '\n') ++nl;
      if (nl == stop && !(eof && nl > line)) break;  // a partial line: read more
      const char* p = line;
      start = parse_hex(p, nl);
      if (p < nl && *p == '-') ++p;
      end = parse_hex(p, nl);
      if (sp >= start && sp < end) {
        found = true;
      } else {
        prev_end = end;
      }
      used = static_cast<std::size_t>(nl - buf) + (nl < stop ? 1 : 0);
    }
    if (found) break;
    if (used == 0 && have == sizeof buf) used = have;  // a line longer than buf: skip it
    for (std::size_t i = used; i < have; ++i) buf[i - used] = buf[i];
    have -= used;
    if (eof && have == 0) break;
  }
  syscall(SYS_close, fd);
  errno = saved_errno;
  if (!found) return false;
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
