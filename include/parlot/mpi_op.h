// The reduction operation of an MPI call record (kind 3, field `op`,
// docs/FORMAT.md): its bit in the presence mask and the names of its codes.
#pragma once

#include <cstdint>
#include <string>

namespace parlot {

/// Bit of the `op` field in a kind-3 record's presence mask (after
/// format::MpiField::kRequests): the reduction operation's code.
inline constexpr unsigned kMpiOpField = 16;

/// Name of a reduction operation's code (field `op`): "MPI_MAX" (1) ..
/// "MPI_NO_OP" (14), "user-defined" (0), "op<code>" for a code this
/// reader does not know.
std::string mpi_op_name(std::int64_t code);

}  // namespace parlot
