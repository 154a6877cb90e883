// A run's threads with times (TimedThreadCollector) and their iterations
// (analysis/iterations.h), shared by `parlot-read iterations` and `reduce`.
// A trace that `reduce` made is expanded back: each original iteration
// takes the times of the kept segment that stands for it (reduced_file.h).
#pragma once

#include <string>
#include <vector>

#include "analysis/iterations.h"
#include "export/exporter.h"
#include "thread_walk.h"
#include "timed_thread_collector.h"

namespace parlot::tool {

/// A run read for its iterations.
struct TimedRun {
  std::vector<ProcessTrace> processes;
  exporter::TimeAxis axis;
  analysis::NameIndex names;
  std::vector<CollectedThread> threads;  ///< the units, in walk order
  bool ranked = false;                   ///< an MPI run: one unit per rank (its first thread)
  int status = 0;                        ///< 1 when a thread file was damaged (reported)
};

/// Reads every selected process of `dir` (open_run, export_trace). Throws
/// FormatError on unreadable input.
TimedRun read_timed_run(const std::string& dir, const Selection& selection);

/// The iteration table of `run`, and for each unit how its iterations were
/// found (`hows`, same order as the table's units). Units without
/// iterations have none in the table. Segments of a reduced trace come
/// from its `reduced` file (`hows` then says "reduced: METRIC").
analysis::IterationTable iteration_table(const TimedRun& run,
                                         const analysis::IterationChoice& choice,
                                         std::vector<std::string>& hows);

/// A duration on `axis` for people: "12.3 ms", "850.0 us", "120 ns" or
/// "37 events".
std::string format_duration(double value, const exporter::TimeAxis& axis);

/// The cause of standout `s` of table `t` on one line: "iteration 40: 61.2
/// ms (median 10.1 ms, +51.1 ms): rank 1 compute +50.0 ms in step (+50.0
/// ms); ranks 0, 2, 3 waited +49.8 ms (mean over the others) in
/// MPI_Allreduce".
std::string standout_line(const analysis::Standout& s, const analysis::IterationTable& t,
                          const analysis::NameIndex& names, const exporter::TimeAxis& axis);

}  // namespace parlot::tool
