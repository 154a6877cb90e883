// The node layout (docs/DESIGN.md, "Node files"): every process of a node
// appends its files, as self-describing records, to one node file
// "<trace dir>/node-<name>.parlot" instead of a directory of its own. A
// process's files keep their paths, below the node file's path
// ("<node file>/rank-R.pid-P/functions"), so the code that writes them is
// the same in both layouts: trace_file.h's functions and write_all turn a
// write to such a path into one record, appended with one write(2) on a
// descriptor opened once per process (O_APPEND; kept across fork).
// Async-signal-safe: raw system calls, no malloc.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "parlot/node_format.h"

namespace parlot::runtime {

/// Turns the node layout on: records go to `node_path` (absolute,
/// "<trace dir>/node-<name>.parlot"; created at the first record). Call
/// once, before the first file is written. Returns 0 or ENAMETOOLONG.
int node_layout_start(const char* node_path);

/// True once node_layout_start() succeeded.
bool node_layout_on();

/// The node file's path ("" when the node layout is off).
const char* node_file_path();

/// Sets the process start time the records carry (CLOCK_REALTIME ns; a
/// fork child sets its own).
void node_set_process_start(std::uint64_t start_ns);

/// When `path` names a file of a process directory inside the node file
/// ("<node file>/<process>/<file>"), its record name "<process>/<file>";
/// else nullptr.
const char* node_record_name(const char* path);

/// Appends one record of `kind` for file `name` ("<process>/<file>") with
/// `n` bytes of `data` as payload (`offset`: kWriteAt's logical offset).
/// One write(2). Returns 0 or an errno (ENAMETOOLONG for a name over
/// format::kMaxNodeRecordName, EFBIG for a record over
/// format::kMaxNodeRecordBytes, EIO for a short write).
int node_write_record(format::NodeRecordKind kind, const char* name, const void* data,
                      std::size_t n, std::uint64_t offset = 0);

/// A virtual descriptor (virtual_fd.h) for file `name` ("<process>/<file>")
/// of the node file, whose writes become records; with `truncate`, the file
/// first becomes empty (a kReplace record without payload). Returns the
/// descriptor, or -errno (-EMFILE when all 32 are in use).
int node_open_virtual(const char* name, bool truncate);

/// Releases virtual descriptor `fd`.
void node_close_virtual(int fd);

}  // namespace parlot::runtime
