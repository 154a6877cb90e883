// The line `parlot-read info` prints about a process's library calls
// (PARLOT_LIBCALLS): what was patched, and what was left and why.
#pragma once

#include <string>

#include "parlot/trace_reader.h"

namespace parlot::tool {

/// "library calls: 1,234 relocations patched in 5 objects, 40 functions;
/// 12 left: 8 GLOB_DAT (function pointers, -fno-plt calls), 4 returns twice
/// (setjmp, vfork, *context)" or, with nothing left, "...; none left". A
/// reason this reader does not know shows as its key.
std::string describe_library_calls(const LibraryCalls& calls);

}  // namespace parlot::tool
