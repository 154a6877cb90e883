// The runtime's own file descriptors, kept out of the program's way: every
// descriptor the runtime opens is close-on-exec from its creation and moved
// at once to a number far above the ones the program uses (the kernel gives
// the lowest free number, which is the program's next open()). A fork()
// waits for a move in progress, so a fork child never starts with one of
// the runtime's descriptors at a low number. Async-signal-safe: raw system
// calls only.
#pragma once

#include <sys/types.h>

namespace parlot::runtime {

/// Lowest number the runtime's descriptors take: three quarters of the soft
/// RLIMIT_NOFILE, counting at most 4096 of it (768 at the usual limit of
/// 1024, 3072 from 4096 up, 12 at a limit of 16). Never below 3.
int own_fd_floor();

/// Grows this process's descriptor table to own_fd_floor() now, by one
/// open_own() of "/" closed at once. Call it while the process has one
/// thread: once a second thread shares the table, the kernel waits for an
/// RCU grace period to grow it (10-20 ms here), which the first open_own
/// would then pay. Errors are ignored (open_own pays later).
void grow_descriptor_table();

/// Opens `path` (openat(AT_FDCWD, path, flags | O_CLOEXEC, mode)) and moves
/// the descriptor to the lowest free number at or above own_fd_floor(),
/// closing the low one. When no number there is free, the descriptor stays
/// where the kernel put it (still close-on-exec). Returns the descriptor,
/// or -errno (errno itself is also set, as open() would).
int open_own(const char* path, int flags, mode_t mode = 0);

}  // namespace parlot::runtime
