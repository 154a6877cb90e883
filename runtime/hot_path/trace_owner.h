// Which process owns the trace state in this memory: the traced process,
// a vfork child running in its memory, or a copy a raw clone made that no
// atfork handler saw (a thread trace checks before it writes). Defined with
// the fork handling (process/fork_handling.cpp).
#pragma once

#include <cstdint>

namespace parlot::runtime {

/// True when the calling process is the one whose trace this is (false in
/// a vfork child, which shares the parent's memory).
bool is_traced_process();

/// True when the calling process holds a copy of the trace state of
/// process `owner_pid` (a thread trace's pid) but is not that process and
/// does not share its memory: a child started by a raw clone without
/// CLONE_VM, which no atfork handler saw. Its writes would land in its
/// parent's files, so it stops tracing (in its own copy; the parent goes
/// on) and the caller writes nothing. False for `owner_pid` itself and
/// for a vfork child (it runs in its suspended parent's memory and
/// records as its parent). Where the kernel cannot tell the two apart
/// (no MADV_WIPEONFORK, before Linux 4.14) any other process counts as a
/// copy. Cold: one getpid(2). Async-signal-safe.
bool is_untraced_copy(std::uint64_t owner_pid);

}  // namespace parlot::runtime
