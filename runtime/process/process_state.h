// The process's trace, shared by the files that make it up (process/: the
// trace directory, the process files, the start, the thread registry, fork,
// failure reports, finish): its state and the functions one part calls in
// another. Internal to those files: nothing else includes this header
// (the rest of the runtime uses the small headers: finish.h,
// thread_registry.h, hot_path/current_trace.h, ...). Cold paths only.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "io/object_table.h"
#include "process/config.h"
#include "time/monotonic_clock.h"

namespace parlot::runtime {

class ThreadTrace;

/// Where the process is in its tracing life.
enum class ProcessState : int { kUninitialised, kInitialising, kReady, kOff };
/// Where the calling thread is in its tracing life.
enum class ThreadState : unsigned char { kNone, kAttaching, kAttached, kEnded };

/// The process's tracing state (process_trace.cpp moves it on).
extern std::atomic<ProcessState> g_state;
/// Settings, read from the environment at the first event.
extern Config g_config;
/// PARLOT_DIR made absolute at initialisation.
extern char g_trace_dir[1024];
/// This process's directory (absolute); "" = none.
extern char g_process_dir[1200];
/// When this process's trace started (CLOCK_REALTIME ns).
extern std::uint64_t g_start_ns;
/// When the parent forked (CLOCK_REALTIME ns): the child's start time, so
/// that children forked one after another are ordered as forked, whichever
/// makes its first event first.
extern std::uint64_t g_fork_ns;
/// The pid whose trace this is (0 until the first event).
extern std::atomic<pid_t> g_traced_pid;
/// Thread traces started (indices: thread_index.h).
extern std::atomic<std::uint64_t> g_threads_started;
/// True in a fork child until its first event made its own directory.
extern std::atomic<bool> g_fork_child_pending;
/// True once a process-wide write failure was reported (tracing is off).
extern std::atomic<bool> g_failure_reported;
/// True once membarrier's private expedited fence is registered.
extern bool g_membarrier_ready;
/// The loaded objects that hold traced functions (for the load map).
extern ObjectTable g_objects;
/// Held while the function table and load map are appended to.
extern std::atomic_flag g_metadata_lock;
/// Guards g_registry; held across fork.
extern pthread_mutex_t g_registry_lock;
/// Live thread traces (linked by ThreadTrace::next), under g_registry_lock.
extern ThreadTrace* g_registry;
/// The calling thread's tracing state. initial-exec TLS.
extern constinit thread_local ThreadState tls_state __attribute__((tls_model("initial-exec")));
/// In a fork child: the forking thread's trace, waiting for the child's
/// next event. initial-exec TLS.
extern constinit thread_local ThreadTrace* tls_forked_trace
    __attribute__((tls_model("initial-exec")));

/// Prints one line on stderr: `what`, then `path` quoted (unless nullptr),
/// then errno `error` described, then that tracing is off.
void log_error(const char* what, const char* path, int error);

// trace_directory.cpp

/// mkdir -p for the trace directory `path` (mode 0700 for what it
/// creates). Returns 0 or an errno (ENOTDIR when `path` is not a directory).
int make_dirs(const char* path);

/// The MPI rank the launcher put in the environment, or nullptr.
const char* rank_from_environment();

/// Makes PARLOT_DIR absolute in g_trace_dir, once, against the directory
/// the process was started in (a relative directory followed by a chdir and
/// a fork or an exec must not move the new process's trace). Returns 0 or
/// an errno.
int resolve_trace_dir();

/// Makes a fresh directory for this process's first files under a name no
/// reader takes for a process ("<dir>/.pid-P.K.tmp") and names it in
/// g_process_dir; publish_process_dir() gives it its real name once the
/// files are written, so a process directory is never seen half made.
/// Returns 0 or an errno.
int make_staging_process_dir();

/// Gives the staging directory in g_process_dir its name,
/// "<dir>/[rank-R.]pid-P[.K]" (K counts up if an earlier image of this pid,
/// before an exec, already made one), atomically, and names it in
/// g_process_dir. Returns 0 or an errno.
int publish_process_dir();

/// Removes the staging directory in g_process_dir and what it holds (its
/// first files, no subdirectory), after a failure to publish it.
void remove_staging_process_dir();

// process_files.cpp

/// Path of file `name` of the process directory, in `out` (`cap` bytes);
/// false when there is no process directory or the path does not fit.
bool process_file_path(char* out, std::size_t cap, const char* name);

/// Writes the "process" metadata file (docs/FORMAT.md); `end_ns` 0 =
/// running. Returns 0 or an errno.
int write_process_metadata(std::uint64_t end_ns);

/// Creates the "functions" file: its header's count stays 0 (entries
/// follow to the end of the file) until finish_process() writes the final
/// count (docs/FORMAT.md). Returns 0 or an errno.
int create_function_table();

/// Appends the entries (object index, offset) of the IDs assigned since
/// the last append, up to the first one not yet published by the thread
/// assigning it; appends the objects they need to the load map first.
/// Async-signal-safe. Returns 0 or an errno.
int append_function_table();

/// Appends the objects recorded since the last append to the load map and
/// their `load_bias` lines to the process file. Async-signal-safe. Returns
/// 0 or an errno.
int append_load_map();

/// Creates the load map (a new file) with the objects recorded so far and
/// appends their `load_bias` lines to the process file, which must exist.
/// Returns 0 or an errno.
int create_load_map();

/// Writes the final count into the function table's header. Returns 0 or
/// an errno.
int seal_function_table();

// process_trace.cpp

/// Opens this process's directory and writes its first files; false (said
/// on stderr) when it cannot.
bool start_process_directory();

// thread_registry.cpp

/// Links thread trace `t` into g_registry (its lock held).
void link_trace(ThreadTrace* t);

/// The thread-specific key's destructor: finishes the exiting thread's
/// trace `p` (a ThreadTrace*), unlinks and destroys it.
void on_thread_exit(void* p);

/// A new trace for the calling thread, linked into the registry (its lock
/// held). Returns nullptr, said on stderr, when it cannot be had: this
/// thread goes untraced, the others go on.
ThreadTrace* create_thread_trace();

// fork_handling.cpp

/// pthread_atfork's prepare handler: holds the registry across the fork.
void before_fork();

/// pthread_atfork's parent handler: releases the registry.
void after_fork_in_parent();

/// pthread_atfork's child handler. Only the forking thread lives on in the
/// child. Other threads' traces are dropped (their data belongs to the
/// parent's files); the forking thread's trace is parked until the child's
/// next event starts its own directory.
void after_fork_in_child();

/// Maps the page of the own-memory word (MADV_WIPEONFORK; is_untraced_copy)
/// and sets the word.
void mark_own_memory();

/// First event of a fork child: its own directory, then the parked trace.
/// Returns the calling thread's trace, or nullptr.
ThreadTrace* resume_in_fork_child();

}  // namespace parlot::runtime
