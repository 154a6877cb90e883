// What a function's own (exclusive) time counts as in `parlot-read report`:
// computation, MPI communication, MPI waiting/synchronisation or I/O,
// decided by the function's name alone (the MPI wrappers and the library
// calls of PARLOT_LIBCALLS record calls under the names the MPI standard
// and the C library give them). docs/DESIGN.md "Statistics" lists the rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parlot::analysis {

/// The kinds of time a thread's time is split into.
enum class TimeCategory : std::uint8_t {
  kComputation,       ///< everything that is not one of the others
  kMpiCommunication,  ///< MPI calls that post or move data without waiting for a peer
  kMpiWait,           ///< MPI calls that wait for other ranks or for requests to complete
  kIo,                ///< file and stream I/O calls (C library, POSIX, MPI-IO)
};

/// Number of TimeCategory values.
inline constexpr std::size_t kTimeCategories = 4;

/// Short name of `c` for tables and JSON keys: "computation",
/// "mpi_communication", "mpi_wait", "io".
std::string_view category_key(TimeCategory c);

/// Human name of `c`: "computation", "MPI communication", "MPI waiting",
/// "I/O".
std::string_view category_label(TimeCategory c);

/// The category of a function's own time, from its `name` as the reader
/// shows it: an MPI call in C (`MPI_Recv`), profiling (`PMPI_Recv`) or
/// Fortran (`mpi_recv_`, any case) spelling; a library call, possibly with
/// a `@VERSION` suffix (`read`, `fwrite@GLIBC_2.2.5`). MPI waiting: the
/// Wait and Test families, blocking receives and probes, Sendrecv, Ssend,
/// the blocking collectives, one-sided synchronisation, and MPI_Init,
/// MPI_Finalize and the communicator constructors (collective). Other MPI
/// calls are communication; MPI_File_* is I/O. Any other name is
/// computation. No error.
TimeCategory classify_function(std::string_view name);

}  // namespace parlot::analysis
