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

namespace parlot::tool {

/// A run's iterations.
struct IterationRun {
  exporter::TimeAxis axis;
  analysis::NameIndex names;
  analysis::IterationTable table;
  /// For each unit of the table, how its iterations were found ("loop of
  /// F", "calls of F", "marks", "reduced: METRIC"; empty: none found).
  std::vector<std::string> hows;
  bool ranked = false;  ///< an MPI run: one unit per rank (its first thread)
  int status = 0;       ///< 1 when a thread file was damaged (reported)
};

/// Reads the iterations of every selected process of `dir`, one process
/// at a time (its events are dropped once its iterations are timed).
/// `loop`: the function whose calls start the iterations ("" = found per
/// unit: marks, else the first unit's outermost repeating loop, whose
/// first function then starts the iterations of every other unit that
/// calls it, so that iteration k is the same step on every rank). Segments
/// of a reduced trace come from its `reduced` file, each original
/// iteration taking its representative's times. Throws FormatError on
/// unreadable input, CLI::ValidationError when `loop` is called nowhere.
IterationRun read_iterations(const std::string& dir, const Selection& selection,
                             const std::string& loop);

/// The iterations of unit `t` by the run-wide rule: the calls of `loop`
/// when given; else its marks when it has two or more; else the calls of
/// `head` (the first unit's loop head) when they make two iterations or
/// more; else its own outermost repeating loop, whose head becomes `head`
/// when `head` is empty. Call it for every unit in walk order with the same
/// `head`, so that iteration k is the same step on every rank.
analysis::Segmentation segment_unit(const analysis::TimedThread& t,
                                    const analysis::NameIndex& names, const std::string& loop,
                                    std::string& head);

/// A duration on `axis` for people: "12.3 ms", "850.0 us", "120 ns" or
/// "37 events".
std::string format_duration(double value, const exporter::TimeAxis& axis);

/// The cause of standout `s` of table `t` on one line: "iteration 40: 61.2
/// ms (median 10.1 ms, +51.1 ms): rank 1 compute +50.0 ms in step (+50.0
/// ms); ranks 0, 2, 3 waited +49.8 ms (mean over the others) in
/// MPI_Allreduce". When that rank's work grew by less than a quarter of
/// the excess, the line says no rank's own work explains it.
std::string standout_line(const analysis::Standout& s, const analysis::IterationTable& t,
                          const analysis::NameIndex& names, const exporter::TimeAxis& axis);

}  // namespace parlot::tool
