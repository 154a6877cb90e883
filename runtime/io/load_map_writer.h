// Writes the `loadmap` file of a process directory (docs/FORMAT.md): one line
// per loaded object (DSO) with its run-time address range, load bias, GNU
// build ID and path, from dl_iterate_phdr. Cold path only.
#pragma once

namespace parlot::runtime {

/// Writes the load map to the open file `fd`, after the magic line when
/// `with_magic` (a new file; otherwise it is appended to what is there, and
/// a reader keeps one entry per distinct object). Returns 0 or an errno.
int write_load_map(int fd, bool with_magic);

}  // namespace parlot::runtime
