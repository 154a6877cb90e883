// Writes that failed: one thread's (its file cut back to its last complete
// block), or the whole process's (the directory gone, the disk full), said
// once on stderr and in the `process` file.
#include "process/failure_reports.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hot_path/hook_state.h"
#include "hot_path/thread_trace.h"
#include "hot_path/trace_writes.h"
#include "io/raw_io.h"
#include "io/trace_file.h"
#include "process/process_state.h"

namespace parlot::runtime {

namespace {

std::atomic<int> g_failed_threads{0};
std::atomic<std::uint64_t> g_events_written{0};  // events in blocks written, all threads

}  // namespace

void note_events_written(std::uint64_t events) {
  g_events_written.fetch_add(events, std::memory_order_relaxed);
}

bool is_process_wide_write_error(int error) {
  return error == ENOENT || error == ENOTDIR || error == EROFS || error == EACCES ||
         error == ENOSPC || error == EDQUOT;
}

void report_write_failure(int error) {
  stop_tracing();
  if (g_failure_reported.exchange(true)) return;
  // The trace says it was cut, and why: one short line appended to the
  // "process" file, which usually fits in the block the file already has
  // (a full disk has none to give). Best effort.
  char path[1300];
  if (process_file_path(path, sizeof path, "process")) {
    const int fd = open_trace_file(path, O_WRONLY | O_APPEND);
    if (fd >= 0) {
      char line[64];
      TextBuilder l(line, sizeof line);
      l.str("write_error ").u64(static_cast<std::uint64_t>(error)).ch('\n');
      (void)write_all(fd, l.data(), l.size());
      close_trace_fd(fd);
    }
  }
  char buf[1600];
  TextBuilder msg(buf, sizeof buf);
  msg.str("cannot write the trace in '").str(g_process_dir).str("': ").str(strerrordesc_np(error));
  msg.str("; tracing is off for the whole process from ");
  const std::uint64_t now = realtime_ns();
  const std::uint64_t ms = now > g_start_ns ? (now - g_start_ns) / 1000000 : 0;
  msg.u64(ms / 1000).ch('.').ch(static_cast<char>('0' + ms / 100 % 10));
  msg.ch(static_cast<char>('0' + ms / 10 % 10)).ch(static_cast<char>('0' + ms % 10));
  msg.str(" s after its start (about ").u64(g_events_written.load(std::memory_order_relaxed));
  msg.str(
      " events written; each thread's file ends at its last complete block), the program "
      "runs on");
  log_line(msg.c_str());
}

void report_thread_failure(ThreadTrace& t) {
  if (t.failure_reported) return;
  t.failure_reported = true;
  const int err = t.write_error();
  if (is_process_wide_write_error(err)) {
    // The directory itself is gone or closed to us, or the file system is
    // full: no thread can write. One line for the process, not one per
    // thread.
    report_write_failure(err);
    return;
  }
  if (g_failure_reported.load()) return;  // tracing is off already, said once
  // Capped: a full disk fails every thread in turn.
  const int n = g_failed_threads.fetch_add(1);
  if (n >= 16) return;
  char buf[1600];
  TextBuilder msg(buf, sizeof buf);
  msg.str("cannot write '").str(t.path()).str("': ").str(strerrordesc_np(t.write_error()));
  msg.str("; this thread's trace ends at its last complete block (").u64(t.events());
  msg.str(" events recorded, the later ones lost); the other threads go on");
  if (n == 15) msg.str(" (further thread failures not shown)");
  log_line(msg.c_str());
}

}  // namespace parlot::runtime
