// --simplify on the views (loops, classes, diff): the name table with
// shorter C++ names (export/simplify_name.h), keys unchanged.
#pragma once

#include "analysis/event.h"

namespace parlot::tool {

/// `names` with every name passed through exporter::simplify_name() when
/// `simplify`, else a copy. Names that simplify to the same text stay
/// distinct functions (the keys are the full names' hashes).
analysis::NameTable simplified_names(const analysis::NameTable& names, bool simplify);

}  // namespace parlot::tool
