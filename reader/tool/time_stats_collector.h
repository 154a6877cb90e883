// The exporter walk (export_trace) into analysis::TimeStats: the statistics
// of `parlot-read report` (program -> process -> thread -> function).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/time_stats.h"
#include "export/exporter.h"

namespace parlot::tool {

/// An Exporter that writes nothing and builds a TimeStats: processes named
/// "rank R" when `ranked`, else "process K" (K = position in the walk),
/// threads "<process> thread I"; functions merged by name, each of the
/// category its name gives (analysis::classify_function). Times are those
/// of the walk's time axis.
class TimeStatsCollector final : public exporter::Exporter {
 public:
  explicit TimeStatsCollector(bool ranked) : ranked_(ranked) {}

  void begin_process(const exporter::ProcessInfo& p) override;
  void begin_thread(const exporter::ThreadInfo& t) override;
  void event(const CallEvent& e, std::uint64_t time) override;
  void end_thread(std::uint64_t end_time) override;
  void end() override {}

  /// The statistics of every thread walked so far.
  const analysis::TimeStats& stats() const { return stats_; }

 private:
  /// Key and category of the current process's function `id`.
  struct Function {
    std::uint32_t key = 0;
    analysis::TimeCategory category = analysis::TimeCategory::kComputation;
    bool known = false;
  };
  const Function& function(std::uint32_t id);

  bool ranked_;
  std::size_t position_ = 0;
  exporter::FunctionSource* names_ = nullptr;
  std::vector<Function> by_id_;
  std::unordered_map<std::uint32_t, Function> sparse_;
  std::string process_name_, thread_name_;
  analysis::ThreadTimeBuilder thread_;
  analysis::TimeStats stats_;
};

}  // namespace parlot::tool
