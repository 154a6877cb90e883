// Whether `parlot record` preloads the MPI wrappers (libparlotmpi.so): only
// into a program that loads an MPI library. Preloaded into any other
// program, the wrappers would define the MPI functions where untraced there
// are none, so a weak reference (`if (MPI_Initialized)`) or a lookup
// (dlsym) would find them and the program would take another path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace parlot::frontend {

/// The file execvp(3) runs for `name`: `name` itself when it contains a
/// '/', else the first `DIR/name` that is an executable regular file, for
/// the directories DIR of $PATH in order (`/bin:/usr/bin` when PATH is
/// unset; an empty entry is the current directory). nullopt when there is
/// none.
std::optional<std::filesystem::path> find_program(const std::string& name);

/// True when `program` loads an MPI library at start: a shared object that
/// defines PMPI_Init among the objects its dynamic loader lists for it
/// (`LOADER --list PROGRAM`, with this process's environment; the program
/// itself does not run). False for a program without one, for a statically
/// linked program or a script (their MPI calls, if any, are made by the
/// programs they start), and when the loader cannot be run; a program that
/// loads MPI later (dlopen) is not seen.
bool program_loads_mpi(const std::filesystem::path& program);

}  // namespace parlot::frontend
