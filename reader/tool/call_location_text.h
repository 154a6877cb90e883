// Where an MPI call that `check` names was made, as one line. The single
// place that formats a checked call's location: its call path with the
// call site (file:line) and the loop iteration.
#pragma once

#include <string>

#include "analysis/mpi_check.h"

namespace parlot::tool {

/// "main > step > MPI_Reduce at halo.c:88, iteration 6 of the loop in
/// main" for `call` (names of its place's keys from `names`; " at
/// file:line" when its site is known); without an enclosing loop just the
/// path; "(call path unknown)" when its place was not found.
std::string call_location_text(const analysis::MpiCallSite& call, const analysis::NameTable& names);

/// The short form for a finding's one-line summary: "rank 1: MPI_Reduce
/// at halo.c:88, iteration 6 of the loop in main" ("rank 1 thread 2: ..."
/// for a thread other than the first; the site and the iteration left out
/// when unknown or none).
std::string call_brief_text(const analysis::MpiCallSite& call, const analysis::NameTable& names);

}  // namespace parlot::tool
