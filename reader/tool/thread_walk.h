// Shared by the subcommands: walk every selected thread of every process,
// event by event, with call depth; report damaged files once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/filter.h"
#include "parlot/call_sites.h"
#include "parlot/call_stack_tracker.h"
#include "parlot/mark_cursor.h"
#include "parlot/trace_reader.h"

namespace parlot::tool {

/// The MPI rank of a process's `rank` metadata ("3" -> 3), or nullopt when
/// it has none or it is not a plain decimal number.
std::optional<std::uint64_t> parsed_rank(const ProcessMetadata& m);

/// Which processes and threads a command looks at (empty = all).
struct Selection {
  std::optional<std::uint64_t> pid;
  std::optional<std::uint64_t> tid;
  /// Only the processes of this MPI rank (the launcher's rank: a rank's
  /// fork children and the programs it started record their parent's).
  std::optional<std::uint64_t> rank = std::nullopt;
  bool selects(const ProcessTrace& p) const {
    return (!pid || p.metadata.pid == *pid) && (!rank || parsed_rank(p.metadata) == rank);
  }
  bool selects(const ThreadTraceSummary& t) const { return !tid || t.tid == *tid; }
};

/// Records a thread file read to its end in the command's DamageLog
/// (DamageLog::thread_read: a file without a trailer is damage, a thread
/// cut short by a kill, or nothing when its process is running); returns 1
/// for damage, else 0. Prints nothing: main prints the summary.
int report_damage(const ThreadTraceSummary& summary);
/// Records the process's warnings and errors found while opening it in the
/// DamageLog (DamageLog::opened); returns 1 if there were errors, else 0.
int report_warnings(const ProcessTrace& process);
/// Records `e` (a file that could not be read from its offset on) in the
/// DamageLog. Thread-safe.
void report_error(const FormatError& e);

/// Lists `dir` (list_trace_directory) keeping going past processes whose
/// `process` file cannot be read: those are recorded in the DamageLog
/// (unreadable), the others registered there (DamageLog::listed). Throws
/// FormatError when `dir` is not a directory, cannot be listed or holds no
/// process directory at all.
std::vector<ProcessListing> list_run(const std::string& dir);
/// open_process_directory(listed, keep_going), its warnings and errors
/// recorded (report_warnings). No FormatError for damaged metadata files.
ProcessTrace open_process(ProcessListing listed);
/// list_run, then open_process of every listed process that `selection`
/// selects, in listing order.
std::vector<ProcessTrace> open_run(const std::string& dir, const Selection& selection);

class FunctionNames;

/// "crashed: SIGSEGV (signal 11, code 1) at address 0x0 in thread T" and one
/// line per frame of the faulting thread's stack, each starting with
/// `prefix`, symbolized with `names`.
std::string describe_crash(const CrashRecord& crash, FunctionNames& names,
                           const std::string& prefix);

/// Calls `on_event(const CallEvent&, std::uint64_t index)` for every event
/// of the thread file `reader`, in order, with the event's absolute index in
/// the thread's stream (the index side records refer to, e.g.
/// ThreadTraceSummary::mpi_call_at), through `filter` when given (depths and
/// callers as filtered), and `on_mark(const Mark&, std::uint32_t depth)` for
/// each of the thread's marks just before the event it precedes (marks
/// beyond the last event after it); `depth` = frames open there (filtered).
/// The filter never drops a mark. With `sites`, each entry's call site is
/// tracked before filtering (from its unfiltered caller): during
/// `on_event` of an entry, sites->last() is its site. Throws FormatError
/// on corrupt data.
template <class OnEvent, class OnMark>
void walk_thread_indexed(ThreadEventReader& reader, std::uint64_t function_count,
                         OnEvent&& on_event, analysis::FilterStage* filter, OnMark&& on_mark,
                         CallSites* sites = nullptr) {
  CallStackTracker tracker(function_count, reader.summary().path);
  MarkCursor marks(reader.summary().marks);
  auto depth = [&] {
    return filter ? filter->depth() : static_cast<std::uint32_t>(tracker.open_calls().size());
  };
  auto mark = [&](const Mark& m) { on_mark(m, depth()); };
  std::uint64_t index = 0;
  for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
    CallEvent out;
    for (const std::uint32_t id : batch) {
      if (marks.due(index)) [[unlikely]] {
        marks.visit_until(index, mark);
      }
      const CallEvent raw = tracker.push(id);
      if (sites != nullptr) [[unlikely]] {
        if (raw.kind == CallEvent::Kind::kEnter) {
          sites->at_entry(index, raw.caller_id, raw.function_id);
        } else {
          sites->at_exit();
        }
      }
      if (filter == nullptr) {
        on_event(raw, index);
      } else if (filter->push(raw, out)) {
        on_event(out, index);
      }
      ++index;
    }
  }
  marks.visit_rest(mark);
}

/// walk_thread_indexed without the index.
template <class OnEvent, class OnMark>
void walk_thread(ThreadEventReader& reader, std::uint64_t function_count, OnEvent&& on_event,
                 analysis::FilterStage* filter, OnMark&& on_mark) {
  walk_thread_indexed(
      reader, function_count, [&](const CallEvent& e, std::uint64_t) { on_event(e); }, filter,
      on_mark);
}

/// walk_thread without marks.
template <class OnEvent>
void walk_thread(ThreadEventReader& reader, std::uint64_t function_count, OnEvent&& on_event,
                 analysis::FilterStage* filter = nullptr) {
  walk_thread(reader, function_count, on_event, filter, [](const Mark&, std::uint32_t) {});
}

}  // namespace parlot::tool
