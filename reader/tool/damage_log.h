// What a parlot-read command could not read, gathered while it runs and
// told once at the end (main): one line on stderr naming the first few
// damaged or unreadable files (file and offset) and counting the rest, or
// one line counting the threads a killed process left cut short. Threads of
// a process that is still running are not reported at all. The exit status
// follows from it: 0 everything shown, 2 shown but some input damaged, 1
// nothing readable. Under mpirun each member sends its entries to the
// leader with its partial result (take_bytes / merge_bytes), which prints
// the one line for the whole team.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "parlot/trace_reader.h"

namespace parlot::tool {

/// Whether a process was still writing its trace when it was read.
enum class ProcessState {
  kFinished,  ///< its `process` file has an end time: the trace is complete
  kRunning,   ///< no end time, and its pid is alive on this host: being written
  kEnded,     ///< no end time, and not running: killed (SIGKILL, power loss)
};

/// The state of the process `m` describes: kFinished when m.end_ns != 0;
/// else kRunning when m.host is this host and m.pid exists (kill(pid, 0);
/// a reused pid reads as running), else kEnded. No error.
ProcessState process_state(const ProcessMetadata& m);

class DamageLog {
 public:
  /// The log of this parlot-read process (thread-safe).
  static DamageLog& get();

  /// A process directory was listed (its `process` file read): counts it
  /// and remembers its state (process_state) for its thread files.
  void listed(const std::filesystem::path& process_dir, const ProcessMetadata& m);
  /// A process whose `process` file cannot be read: none of it is shown.
  void unreadable_process(const UnreadableProcess& p);
  /// Damage that loses part of a process (a thread file, a load map, ...):
  /// `message` names the file and offset ("<file>: offset N: what").
  /// The same message twice counts once.
  void damaged(const std::string& message);
  /// A process's warnings and errors found while opening it (missing or
  /// malformed load map or function table, missing thread files). A
  /// function table missing from a process that has not finished is not
  /// damage (the runtime writes it with its first block).
  void opened(const ProcessTrace& p);
  /// A thread file read to its end (or opened for its summary only): a
  /// file without a trailer is silent when its process is running, counted
  /// as cut short when it ends at a block boundary (a killed process) and
  /// damage otherwise (it ends inside a block). Returns 1 for damage, else 0.
  int thread_read(const ThreadTraceSummary& s);

  /// Whether anything was damaged or unreadable.
  bool any_damage() const;
  /// The line(s) for stderr ("parlot-read: ...\n"), empty when there is
  /// nothing to say. At most 3 files are named; the rest are counted.
  std::string summary() const;
  /// 0 when nothing is damaged (cut-short threads of a killed process and
  /// running processes included), 1 when no process could be read at all,
  /// else 2.
  int exit_status() const;

  /// This member's entries as bytes, emptying the log (a member other than
  /// the leader sends them to the leader, which merge_bytes them).
  std::string take_bytes();
  /// Adds entries another member took. Throws std::runtime_error on bytes
  /// that take_bytes did not write.
  void merge_bytes(std::string_view bytes);

 private:
  DamageLog() = default;

  void add_message(const std::string& message, bool whole_process);

  mutable std::mutex lock_;
  std::map<std::string, ProcessState> listed_;  // process directory -> state
  std::set<std::string> unreadable_;            // process directories
  std::vector<std::string> messages_;           // in order of arrival, unique
  std::set<std::string> message_set_;
  std::size_t other_damage_ = 0;     // messages not about an unreadable process
  std::set<std::string> cut_short_;  // thread files
};

}  // namespace parlot::tool
