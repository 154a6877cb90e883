#include "io/own_fd.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "current_tid.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {
namespace {

// Descriptors being opened and moved, and the thread of a fork() waiting
// for them (0: none): a fork child must not start with a descriptor still at
// its low number.
std::atomic<int> g_opening{0};
std::atomic<long> g_forking_tid{0};

// Waits while `busy` holds, 50 ms at most: a thread stopped inside
// open_own (a debugger) must not hang a fork, nor a fork the runtime.
template <class Busy>
void wait_while(Busy busy) {
  const std::uint64_t deadline = monotonic_ns() + 50ull * 1000 * 1000;
  for (int spins = 0; busy() && monotonic_ns() < deadline; ++spins) {
    if (spins < 100) {
      sched_yield();
    } else {
      const timespec pause{0, 10000};
      syscall(SYS_nanosleep, &pause, nullptr);
    }
  }
}

// True while another thread's fork() waits for the moves in progress (the
// forking thread itself, in a signal handler run during its fork, never
// waits for itself).
bool another_thread_forks() {
  const long forker = g_forking_tid.load();
  return forker != 0 && forker != current_tid();
}

void before_fork() {
  g_forking_tid.store(current_tid());
  wait_while([] { return g_opening.load() != 0; });
}
void after_fork() {
  g_forking_tid.store(0);
}

[[gnu::constructor(101)]] void register_fork_guard() {
  pthread_atfork(before_fork, after_fork, after_fork);
}

}  // namespace

int own_fd_floor() {
  rlimit64 lim{};
  long cur = 1024;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &lim) == 0) {
    cur = lim.rlim_cur > 4096 ? 4096 : static_cast<long>(lim.rlim_cur);
  }
  const long floor = cur - cur / 4;
  return floor < 3 ? 3 : static_cast<int>(floor);
}

int open_own(const char* path, int flags, mode_t mode) {
  for (;;) {
    g_opening.fetch_add(1);
    if (!another_thread_forks()) break;
    g_opening.fetch_sub(1);
    wait_while(another_thread_forks);
  }
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, mode));
  const int err = fd < 0 ? errno : 0;
  if (fd >= 0) {
    const int floor = own_fd_floor();
    if (fd < floor) {
      const int high = static_cast<int>(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor));
      if (high >= 0) {
        syscall(SYS_close, fd);
        fd = high;
      }
    }
  }
  g_opening.fetch_sub(1);
  if (fd < 0) {
    errno = err;
    return -err;
  }
  return fd;
}

void grow_descriptor_table() {
  const int fd = open_own("/", O_PATH | O_DIRECTORY);
  if (fd >= 0) syscall(SYS_close, fd);
}

}  // namespace parlot::runtime
