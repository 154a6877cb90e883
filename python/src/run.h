// A trace directory opened for the Python binding: every process of a run
// (or the one process directory given), its functions named through the
// symbolizer, and its threads listed in the order `parlot-read` walks them
// (processes as list_trace_directory() sorts them, threads by index).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/event.h"
#include "parlot/trace_reader.h"
#include "tool/function_names.h"

namespace parlot::python {

/// One process of a Run: its files as open_process_directory() read them,
/// and its function names.
struct RunProcess {
  ProcessTrace trace;
  std::uint64_t rank = 0;  ///< analysis::ThreadId::rank of its threads
  std::uint64_t fork = 0;  ///< analysis::ThreadId::fork of its threads
  /// Function ID -> name, file and line (names of IDs beyond the table: "#<id>").
  std::unique_ptr<tool::FunctionNames> names;
  /// [id] -> analysis::function_key of the function's name ([0] unused),
  /// the keys the views (loops, stacks, classes) compare functions by.
  std::vector<analysis::FunctionKey> keys;
};

/// One thread file of a Run.
struct RunThread {
  std::size_t process = 0;  ///< index into Run::processes()
  std::filesystem::path file;
  analysis::ThreadId id;  ///< rank, fork and thread index, as the views label it
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  /// Events its file promises (trailer, else final block; 0 when unknown).
  std::uint64_t events = 0;
  /// Events before the exits the runtime added at the end for frames still
  /// open (the views stop there); all of them (2^64-1) without a trailer.
  std::uint64_t program_events = 0;
};

/// A trace directory opened for reading: a run directory or one process
/// directory.
class Run {
 public:
  /// Lists and opens `dir` (list_trace_directory, then
  /// open_process_directory with keep_going for each process) and names
  /// every function. Throws FormatError (file and offset) when `dir` is not
  /// a trace directory or a process file is malformed; damage of a load
  /// map, function table or thread file header is kept in messages().
  explicit Run(const std::filesystem::path& dir);

  const std::vector<RunProcess>& processes() const { return processes_; }
  RunProcess& process(std::size_t i) { return processes_[i]; }
  const std::vector<RunThread>& threads() const { return threads_; }
  /// Whether the run has MPI ranks (else ThreadId::rank is the process's
  /// position in the listing).
  bool ranked() const { return ranked_; }
  /// Every function name of every process, keyed as RunProcess::keys.
  const analysis::NameTable& names() const { return names_; }
  /// Warnings and damage found while opening, each naming its file.
  const std::vector<std::string>& messages() const { return messages_; }
  /// "rank R thread T" ("process P thread T" without ranks; "rank R fork K
  /// thread T" for a rank's K-th other process), as `parlot-read` labels it.
  std::string label(const analysis::ThreadId& id) const;
  /// Held by whatever names functions (RunProcess::names caches its
  /// lookups): the views and function tables may be asked for from several
  /// Python threads at once, the GIL released while they work.
  std::mutex& names_lock() { return names_lock_; }

 private:
  std::mutex names_lock_;
  std::vector<RunProcess> processes_;
  std::vector<RunThread> threads_;
  analysis::NameTable names_;
  std::vector<std::string> messages_;
  bool ranked_ = false;
};

}  // namespace parlot::python
