// The arguments of an MPI call (PARLOT_MPI_ARGS=1) as `trace` shows them.
#pragma once

#include <string>

#include "parlot/trace_reader.h"

namespace parlot::tool {

/// "dest=1, tag=7, bytes=800, comm=0, comm_size=2": the fields present, in
/// field order; completed requests as "completed=[0: source=1 tag=7
/// bytes=8, ...]"; a reduction operation by name ("op=MPI_SUM").
std::string mpi_arguments_text(const MpiCallArguments& a);

/// The same as one JSON object: {"dest":1,"tag":7,...,"completed":
/// [{"index":0,"source":1,"tag":7,"bytes":8}]}; every field a number (the
/// operation its code, docs/FORMAT.md).
std::string mpi_arguments_json(const MpiCallArguments& a);

/// `display_name` ("MPI_Send()") with the arguments between its
/// parentheses: "MPI_Send(dest=1, tag=7, bytes=800)".
std::string mpi_call_text(const std::string& display_name, const MpiCallArguments& a);

}  // namespace parlot::tool
