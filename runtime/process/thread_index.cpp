#include "process/thread_index.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace parlot::runtime {
namespace {

std::atomic<std::uint64_t> g_next_creation_index{1};
// 0: the thread was not created through the interposers.
constinit thread_local std::uint64_t tls_creation_index __attribute__((tls_model("initial-exec"))) =
    0;

// Only the forking thread lives on in a fork child: it is the child's
// thread 0 (tid == pid), and the child's own threads count from 1.
void restart_in_fork_child() {
  g_next_creation_index.store(1, std::memory_order_relaxed);
}

// Registered before main (and before any fork the program makes).
[[gnu::constructor(101)]] void register_fork_handler() {
  pthread_atfork(nullptr, nullptr, restart_in_fork_child);
}

}  // namespace

std::uint64_t take_creation_index() {
  return g_next_creation_index.fetch_add(1, std::memory_order_relaxed);
}

void set_creation_index(std::uint64_t index) {
  tls_creation_index = index;
}

std::uint64_t current_thread_index() {
  if (syscall(SYS_gettid) == getpid()) return 0;
  if (tls_creation_index != 0) return tls_creation_index;
  return take_creation_index();
}

}  // namespace parlot::runtime
