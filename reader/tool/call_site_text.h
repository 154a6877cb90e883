// How the views show a frame's call site: "name at file:line", the line of
// the call in the caller's source (STAT-like), shared by every view that
// prints a call path (trace, stacks, classes, diff).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "parlot/symbolizer.h"

namespace parlot::tool {

/// The source line of the call whose return address is `site` (run-time,
/// of the process `symbolizer` was made for): the line of `site - 1`, the
/// call instruction's last byte. Null when `site` is 0 (unknown, inlined),
/// lies in Parlot's runtime (libparlotrt.so: main and thread start routines
/// called through its interposers) or in the C library (libc.so: thread
/// start routines, callbacks) or no line table covers it. Valid for
/// the symbolizer's lifetime.
const SourceLine* call_site_line(Symbolizer& symbolizer, std::uint64_t site);

/// "file:line" of the call whose return address is `site` (run-time, of
/// the process `symbolizer` was made for), call_site_line() with the
/// file's last path component only. Empty when call_site_line() is null. The text passes through
/// visible_text() (control bytes escaped).
std::string call_site_text(Symbolizer& symbolizer, std::uint64_t site);

/// `frame` (a function's shown name) with its call site `site` (from
/// call_site_text()): "frame at site", or `frame` alone when `site` is
/// empty.
std::string frame_with_site(std::string_view frame, std::string_view site);

}  // namespace parlot::tool
