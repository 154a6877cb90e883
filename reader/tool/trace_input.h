// The analysis views' input (loops, classes, stacks, diff): a trace
// directory opened once, every function of every process named and keyed
// (analysis::FunctionKey), the filter compiled per process, and each
// selected thread opened on demand as a filtered analysis::EventSource.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/event.h"
#include "analysis/filter.h"
#include "parlot/call_sites.h"
#include "parlot/call_stack_tracker.h"
#include "parlot/trace_reader.h"
#include "thread_walk.h"

namespace parlot::tool {

/// Options every view takes: the directory, --pid/--tid and the filters.
struct ViewOptions {
  std::string dir;
  Selection selection;
  analysis::FunctionFilter filter;
  unsigned jobs = 0;  ///< decoding threads (0: one per hardware thread)
  /// Show each frame's call site (file:line); --no-sites hides them.
  bool sites = true;
};

/// Adds --include, --exclude, --module and --max-depth, filling `filter`
/// (the views, export and report: one set of filter options).
void add_filter_options(CLI::App* cmd, analysis::FunctionFilter& filter);

/// Adds --no-sites (clears `sites`): hide call sites.
void add_sites_option(CLI::App* cmd, bool& sites);

/// Adds --pid, --tid, the filter options (add_filter_options), --jobs and
/// --no-sites.
void add_view_options(CLI::App* cmd, ViewOptions& o);

/// Function key and filter decision of each function ID of one process.
struct ProcessFunctions {
  std::vector<analysis::FunctionKey> key;  ///< [id]; [0] unused
  std::vector<bool> keep;                  ///< [id]
  analysis::FunctionKey key_of(std::uint32_t id) const {
    return id < key.size() ? key[id] : unknown_key(id);
  }
  /// Key of an ID beyond the table: hash of "#<id>".
  static analysis::FunctionKey unknown_key(std::uint32_t id);
};

/// One thread's events, decoded, call-tracked and filtered. The stream ends
/// before the exits the runtime added at the end for frames still open
/// (trailer "frames closed at the end": a SIGTERM'd or exiting thread), so
/// the analyses see the calls that were open when the program stopped.
class ThreadStream final : public analysis::EventSource {
 public:
  /// `sites`: track each entry's call site (last_site()).
  ThreadStream(const std::filesystem::path& file, std::uint64_t function_count,
               const ProcessFunctions& functions, std::uint32_t max_depth, bool filtering,
               bool sites = false);
  bool next(analysis::Event& e) override {
    CallEvent c;
    if (!next_call(c)) return false;
    e = {c.kind == CallEvent::Kind::kEnter, functions_.key_of(c.function_id), c.depth};
    return true;
  }
  /// The same stream as CallEvents with the process's function IDs
  /// (filtered depth and nearest kept caller). Do not mix with next().
  /// Inline: the per-event loop of every view.
  bool next_call(CallEvent& c) {
    for (;;) {
      if (pos_ == batch_.size()) [[unlikely]] {
        batch_ = reader_.next_batch();
        pos_ = 0;
        if (batch_.empty()) return false;
      }
      if (consumed_ == program_events_) return false;
      ++consumed_;
      c = tracker_.push(batch_[pos_++]);
      // The site of the raw (unfiltered) caller's call.
      if (sites_) [[unlikely]]
        track_site(c);
      if (!filtering_ || filter_.push(c, c)) return true;
    }
  }
  /// The same stream as next_call(), a batch at a time: the next up to
  /// kCallBatch CallEvents (tracked, filtered), empty at the end. The span
  /// stays valid until the next call. Do not mix with next() or
  /// next_call(), but to take the rest of the stream after them. Throws
  /// FormatError (the decoder's, the tracker's).
  std::span<const CallEvent> next_calls();
  /// Most events next_calls() returns at once.
  static constexpr std::size_t kCallBatch = 4096;
  /// next_calls() as analysis Events (functions keyed as next() keys them),
  /// into `out` (resized to the batch); false at the end.
  bool next_events(std::vector<analysis::Event>& out) override {
    const auto calls = next_calls();
    out.resize(calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      out[i] = {calls[i].kind == CallEvent::Kind::kEnter, functions_.key_of(calls[i].function_id),
                calls[i].depth};
    }
    return !calls.empty();
  }
  /// The rest of the stream's entries, as next_calls() gives them
  /// (tracked, filtered: the nearest kept caller), one call of
  /// `on_entry(caller_id, function_id)` each (caller 0 at the outermost
  /// frame); exits are only tracked. Unfiltered, it reads the raw events
  /// in one pass (CallStackTracker::for_each_entry). Throws FormatError as
  /// next_calls(). Do not mix with next() or next_call() but after them.
  template <class OnEntry>
  void for_each_entry(OnEntry&& on_entry) {
    if (filtering_) {
      for (auto calls = next_calls(); !calls.empty(); calls = next_calls()) {
        for (const CallEvent& c : calls) {
          if (c.kind == CallEvent::Kind::kEnter) on_entry(c.caller_id, c.function_id);
        }
      }
      return;
    }
    constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
    for (auto in = raw_ahead(kAll); !in.empty(); in = raw_ahead(kAll)) {
      tracker_.for_each_entry(in.data(), in.size(), on_entry);
      consume_raw(in.size());
    }
  }
  const ThreadTraceSummary& summary() const { return reader_.summary(); }
  /// The call site (return address, run-time; 0 = unknown) of the entry
  /// next_call() returned last, when the stream was opened with `sites`
  /// (0 otherwise, and for traces without call sites).
  std::uint64_t last_site() const override { return sites_ ? sites_->last() : 0; }
  /// The thread's marks, labels quoted and escaped (quoted_visible_text).
  std::span<const Mark> marks() const override { return shown_marks_; }
  std::uint64_t last_index() const override { return consumed_ - 1; }

 private:
  // The next raw events still before the closing exits, at most `most`
  // (> 0), from the current batch (the next one once it is used up); empty
  // at the end. They stay unconsumed until consume_raw(their count), so
  // that an error while tracking them leaves last_index() as it was.
  std::span<const std::uint32_t> raw_ahead(std::size_t most) {
    if (pos_ == batch_.size()) {
      batch_ = reader_.next_batch();
      pos_ = 0;
    }
    const auto take = static_cast<std::size_t>(
        std::min<std::uint64_t>({batch_.size() - pos_, program_events_ - consumed_, most}));
    return {batch_.data() + pos_, take};
  }
  void consume_raw(std::size_t n) {
    pos_ += n;
    consumed_ += n;
  }

  // The site of raw event `c` (the consumed_-th), for last_site().
  void track_site(const CallEvent& c) {
    if (c.kind == CallEvent::Kind::kEnter) {
      sites_->at_entry(consumed_ - 1, c.caller_id, c.function_id);
    } else {
      sites_->at_exit();
    }
  }

  ThreadEventReader reader_;
  CallStackTracker tracker_;
  analysis::FilterStage filter_;
  const ProcessFunctions& functions_;
  bool filtering_;
  std::span<const std::uint32_t> batch_;
  std::size_t pos_ = 0;
  std::uint64_t consumed_ = 0;                        // raw events taken from the file
  std::uint64_t program_events_ = ~std::uint64_t{0};  // events before the closing exits
  std::vector<CallEvent> calls_;                      // next_calls()' batch
  std::vector<Mark> shown_marks_;
  std::optional<CallSites> sites_;  // with `sites` and call-site records
};

class TraceInput {
 public:
  struct Thread {
    analysis::ThreadId id;
    std::size_t process = 0;  ///< index into processes()
    std::filesystem::path file;
  };

  /// Which processes an input opens: by index in the (selected) directory
  /// listing and by rank (ThreadId::rank of its threads).
  using Owns = std::function<bool(std::size_t process, std::uint64_t rank)>;

  /// Lists `o.dir` (list_trace_directory: process files only), then opens
  /// the selected processes and names every function (prints their
  /// warnings and errors). With `owns`, only the processes it accepts are
  /// opened, named and their threads listed: a member of an mpirun'd team
  /// reads its share; the others' process files are still read, so
  /// ThreadIds and labels are those of the whole run. Throws FormatError,
  /// std::regex_error.
  explicit TraceInput(const ViewOptions& o, const Owns& owns = nullptr);

  /// The selected threads of the processes this input owns.
  const std::vector<Thread>& threads() const { return threads_; }
  /// Every selected process; one this input did not open (not owned, not
  /// loaded by find_or_load) holds only its directory and metadata.
  const std::vector<ProcessTrace>& processes() const { return processes_; }
  const ProcessFunctions& functions(std::size_t process) const { return functions_[process]; }
  const analysis::NameTable& names() const { return names_; }
  /// The selected thread with this id, or nullptr.
  const Thread* find(analysis::ThreadId id) const;
  /// find(), loading the thread's process first when this input does not
  /// own it (the leader of a team, showing another member's thread). The
  /// pointer stays valid for the input's lifetime. Not thread-safe.
  const Thread* find_or_load(analysis::ThreadId id);
  /// Adds names learnt elsewhere (another member's partial result).
  void add_names(const analysis::NameTable& names) { names_.merge(names); }
  std::unique_ptr<ThreadStream> open(const Thread& t) const { return open(t, with_sites_); }
  /// open(), tracking each entry's call site when `sites` (whatever
  /// track_sites() says).
  std::unique_ptr<ThreadStream> open(const Thread& t, bool sites) const;
  /// "rank R thread T" (or "process P thread T" when the run has no ranks);
  /// "rank R fork K thread T" for the threads of a rank's K-th other process.
  std::string label(analysis::ThreadId id) const;
  /// ThreadId::rank of process `process`' threads: its MPI rank, or its
  /// index when the run has no ranks (or the rank does not parse).
  std::uint64_t rank_of(std::size_t process) const;
  /// ThreadId::fork of process `process`' threads: how many processes
  /// before it in the listing have the same rank_of() (0 for a rank's own
  /// process; a fork child of a rank records its parent's rank).
  std::uint64_t fork_of(std::size_t process) const { return fork_of_[process]; }
  /// Whether the run has MPI ranks (else ThreadId::rank is the process's
  /// position in the directory).
  bool ranked() const { return ranked_; }
  /// Streams open()ed from now on track each entry's call site
  /// (ThreadStream::last_site; next_call() only). Off by default: it costs
  /// a hash-map lookup per entry.
  void track_sites(bool on) { with_sites_ = on; }
  /// 1 if any damage was reported so far (opening, or reported through
  /// finished()), else 0.
  int status() const { return status_; }
  /// Reports damage of a stream read to its end (a file cut short).
  /// Thread-safe.
  void finished(const ThreadStream& s) {
    const int damage = report_damage(s.summary());
    const std::lock_guard<std::mutex> guard(lock_);
    status_ |= damage;
  }
  /// Opens thread `t` (open()), runs `read(ThreadStream&)` on it and
  /// reports the end of the stream (finished()). A FormatError while
  /// opening or reading it is recorded in the DamageLog (report_error)
  /// instead of thrown: returns false then, and the caller leaves out what
  /// it gathered of that thread. Thread-safe as open() and finished().
  template <class Read>
  bool read_thread(const Thread& t, Read&& read) {
    try {
      auto stream = open(t);
      read(*stream);
      finished(*stream);
      return true;
    } catch (const FormatError& e) {
      report_error(e);
      const std::lock_guard<std::mutex> guard(lock_);
      status_ = 1;
      return false;
    }
  }
  unsigned jobs() const { return options_.jobs; }

 private:
  /// Names and keys process `i`'s functions, compiles the filter, lists its
  /// selected threads into `threads` and its names into `names`.
  void load(std::size_t i, analysis::NameTable& names, std::vector<Thread>& threads);
  ViewOptions options_;
  std::vector<ProcessTrace> processes_;
  std::vector<bool> loaded_;  ///< [process]
  /// Processes already named, by fingerprint of their load map and function
  /// table: a process with the same tables (the children of a fork, the
  /// ranks of one executable) copies their keys instead of symbolising again.
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> named_by_tables_;
  std::mutex named_lock_;
  std::vector<ProcessFunctions> functions_;
  std::vector<Thread> threads_;
  std::deque<Thread> borrowed_;  ///< threads of processes loaded by find_or_load()
  analysis::NameTable names_;
  bool ranked_ = false;
  bool with_sites_ = false;
  std::vector<std::uint64_t> fork_of_;  // per process, see fork_of()
  int status_ = 0;
  std::mutex lock_;
};

/// The keep-vector of the filter for `process` (for trace and stats, which
/// work on function IDs): keep[id] for IDs 1..function count. With
/// `mpi_paths_of` (the views' --mpi), a function is kept only if it is also
/// on an MPI call's path in the threads that selection selects
/// (mpi_call_paths).
std::vector<bool> keep_vector(const ProcessTrace& process, FunctionNames& names,
                              const analysis::FunctionMatcher& matcher,
                              const Selection* mpi_paths_of = nullptr);

/// Whether `name` is an MPI call's: MPI_*, PMPI_*, mpi_* or pmpi_* (C and
/// Fortran bindings, any case).
bool is_mpi_function(const std::string& name);

/// on_path[id] for IDs 1..function count of `process`: whether function
/// `id` is an MPI call (is_mpi_function) or was open above one, in some
/// thread `selection` selects. One decoding pass over those threads (O(1)
/// amortised per event: a frame is marked once); a damaged thread counts
/// up to where it can be read (the view reports the damage).
std::vector<bool> mpi_call_paths(const ProcessTrace& process, FunctionNames& names,
                                 const Selection& selection);

}  // namespace parlot::tool
