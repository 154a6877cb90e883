// Writes of the trace that failed in a way no thread can get past (the
// directory gone, the disk full), for the process's own files and the
// thread traces (failure_reports.cpp; a thread's own failure:
// hot_path/trace_writes.h).
#pragma once

namespace parlot::runtime {

/// Called when a write of the trace failed with errno `error` in a way no
/// thread can get past: stops tracing for the whole process and, the first
/// time only, appends `write_error <error>` to the process's `process` file
/// (docs/FORMAT.md; best effort) and prints one line on stderr naming the
/// error, the directory, when tracing stopped (seconds after the start) and
/// about how many events were written. The program goes on unharmed; the
/// thread files end at their last complete block. Async-signal-safe.
void report_write_failure(int error);

/// True for the write errors (`error`: an errno) that concern the whole
/// process rather than one file: the directory gone or closed to the
/// process (ENOENT, ENOTDIR, EROFS, EACCES) or the file system full
/// (ENOSPC, EDQUOT).
bool is_process_wide_write_error(int error);

}  // namespace parlot::runtime
