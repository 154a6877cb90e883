// Writes the `loadmap` file of a process directory (docs/FORMAT.md): one line
// per loaded object (DSO) with its run-time address range, load bias, GNU
// build ID and path, from dl_iterate_phdr. Cold path only.
#pragma once

namespace parlot::runtime {

/// Writes the load map into file `name` under `dir_fd`: created with the
/// magic line when `append` is false, otherwise appended to (a reader keeps
/// one entry per distinct object). Returns 0 or an errno.
int write_load_map(int dir_fd, const char* name, bool append);

}  // namespace parlot::runtime
