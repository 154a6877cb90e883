// Where an MPI call that `check` names was made, as one line. The single
// place that formats a checked call's location: the call path and loop
// iteration now; a recorded call site (file:line) belongs here too.
#pragma once

#include <string>

#include "analysis/mpi_check.h"

namespace parlot::tool {

/// "main > step > MPI_Reduce, iteration 6 of the loop in main" for `call`
/// (names of its place's keys from `names`); without an enclosing loop just
/// the path; "(call path unknown)" when its place was not found.
std::string call_location_text(const analysis::MpiCallSite& call, const analysis::NameTable& names);

}  // namespace parlot::tool
