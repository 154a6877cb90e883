// Writing a whole file of this process's trace directory (the `libcalls`
// file, a crash record). Defined with the process's other files
// (process/process_files.cpp), which know the directory; declared here for
// the lower levels (libcalls/) that write one.
#pragma once

#include <cstddef>

namespace parlot::runtime {

/// Writes `n` bytes at `data` as file `name` in the process directory
/// (created, or replaced). Returns 0 or an errno. Async-signal-safe.
int write_process_file(const char* name, const char* data, std::size_t n);

}  // namespace parlot::runtime
