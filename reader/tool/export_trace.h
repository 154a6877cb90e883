// The walk shared by `export` and `report`: every selected thread of every
// selected process through an Exporter, with names from the symbolizer.
#pragma once

#include <vector>

#include "analysis/filter.h"
#include "export/export_walk.h"
#include "export/exporter.h"
#include "parlot/trace_reader.h"
#include "thread_walk.h"

namespace parlot::tool {

/// The time axis of an export of the selected threads: real time (ns from
/// the earliest sample) when every one of them has clock samples (format
/// version 2), else the logical clock.
exporter::TimeAxis choose_time_axis(const std::vector<ProcessTrace>& processes,
                                    const Selection& selection);

/// Events the selected threads' files promise in `window` (trailer, else
/// final block counts; a file without a count counts 0). Opens every
/// selected thread file's summary.
std::uint64_t promised_events(const std::vector<ProcessTrace>& processes,
                              const Selection& selection, const exporter::EventWindow& window);

/// Feeds `out` every selected thread's events in `window` (begin_process,
/// begin_thread, events, end_thread, ..., end), names simplified with
/// --simplify when `simplify`, through `filter` (matched on the full names;
/// a dropped function's callees nest under its nearest kept caller).
/// Returns 1 if a thread file was damaged (the
/// message is printed), else 0. Throws FormatError on corrupt data and
/// std::runtime_error when the output cannot be written, std::regex_error
/// on a bad filter pattern.
int export_trace(const std::vector<ProcessTrace>& processes, const Selection& selection,
                 const exporter::EventWindow& window, const exporter::TimeAxis& time, bool simplify,
                 const analysis::FunctionFilter& filter, exporter::Exporter& out);

}  // namespace parlot::tool
