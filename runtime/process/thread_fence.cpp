// membarrier: the slow half of the asymmetric fence between the hooks and
// the threads that stop or flush them (thread_fence.h).
#include "process/thread_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>

#include "process/process_state.h"

namespace parlot::runtime {

bool register_membarrier() {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Makes every thread's earlier stores visible and later loads see
// g_hooks_off (the slow half of an asymmetric fence; the hooks only
// use a compiler fence).
void fence_all_threads() {
  if (g_membarrier_ready && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  const timespec pause{0, 20 * 1000 * 1000};
  nanosleep(&pause, nullptr);
}

}  // namespace parlot::runtime
