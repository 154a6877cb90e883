// The slow half of the asymmetric fence between the hooks and the threads
// that stop or flush them (finish, the idle flusher): membarrier. Defined
// in thread_fence.cpp.
#pragma once

namespace parlot::runtime {

/// Registers the process for membarrier's private expedited fence (what
/// fence_all_threads() uses); true on success. Once registered, a call
/// returns at once. The first call takes about 0.1 ms while the process has
/// one thread, but 8-12 ms with two or more (the kernel waits for an RCU
/// grace period; measured under strace on this project's VM): the runtime
/// registers before it starts its flusher thread.
bool register_membarrier();

/// Makes every thread's earlier stores visible and its later loads see
/// g_hooks_off (the slow half of an asymmetric fence: membarrier; the hooks
/// only use a compiler fence). Async-signal-safe.
void fence_all_threads();

}  // namespace parlot::runtime
