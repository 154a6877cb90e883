// The exporter walk (export_trace) into analysis::TimedThread: each
// thread's events with their times and the program's marks, for
// `parlot-read iterations` and `reduce`.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/iterations.h"
#include "export/exporter.h"

namespace parlot::tool {

/// One thread the walk handed over, and where it came from.
struct CollectedThread {
  analysis::TimedThread thread;
  std::size_t process = 0;  ///< position of its process in the walk (0 = first)
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t index = 0;  ///< thread index within the process
};

/// An Exporter that writes nothing and keeps the events of the threads it
/// is given: with `first_thread_only` (an MPI run: a unit is a rank) only
/// the first thread of each process, named "rank R"; otherwise every
/// thread, named "process K thread I" ("thread I" in a one-process run is
/// left to the caller). Memory: 16 bytes per event kept.
class TimedThreadCollector final : public exporter::Exporter {
 public:
  TimedThreadCollector(analysis::NameIndex& names, bool first_thread_only)
      : names_(names), first_only_(first_thread_only) {}
  void begin_process(const exporter::ProcessInfo& p) override;
  void begin_thread(const exporter::ThreadInfo& t) override;
  void event(const CallEvent& e, std::uint64_t time) override;
  void mark(std::string_view label, std::uint32_t depth, std::uint64_t time) override;
  void end_thread(std::uint64_t end_time) override;
  void end() override {}
  /// The threads kept, in walk order (moved out).
  std::vector<CollectedThread> take() { return std::move(threads_); }

 private:
  std::uint32_t key_of(std::uint32_t id);

  analysis::NameIndex& names_;
  bool first_only_;
  std::size_t position_ = 0;
  bool keep_ = false;
  bool thread_seen_ = false;
  std::string rank_;
  std::uint64_t pid_ = 0;
  exporter::FunctionSource* functions_ = nullptr;
  std::unordered_map<std::uint32_t, std::uint32_t> keys_;  // function ID -> name key
  CollectedThread current_;
  std::vector<CollectedThread> threads_;
};

}  // namespace parlot::tool
