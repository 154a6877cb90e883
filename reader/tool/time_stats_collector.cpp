#include "time_stats_collector.h"

#include <fmt/core.h>

#include "visible_text.h"

namespace parlot::tool {

void TimeStatsCollector::begin_process(const exporter::ProcessInfo& p) {
  process_name_ = ranked_ ? "rank " + visible_text(p.rank) : fmt::format("process {}", position_);
  ++position_;
  names_ = p.functions;
  by_id_.clear();
  sparse_.clear();
  stats_.begin_process(process_name_);
}

void TimeStatsCollector::begin_thread(const exporter::ThreadInfo& t) {
  thread_name_ = fmt::format("{} thread {}", process_name_, t.index);
}

const TimeStatsCollector::Function& TimeStatsCollector::function(std::uint32_t id) {
  // Dense for the IDs a process has (up to kDenseIds), a map beyond: an ID
  // read from a damaged file never sizes an allocation.
  constexpr std::uint32_t kDenseIds = 1u << 20;
  if (id < kDenseIds && id >= by_id_.size()) by_id_.resize(static_cast<std::size_t>(id) + 1);
  Function& f = id < kDenseIds ? by_id_[id] : sparse_[id];
  if (!f.known) {
    const std::string& name = names_->function(id).name;
    f.key = stats_.key(name);
    f.category = analysis::classify_function(name);
    f.known = true;
  }
  return f;
}

void TimeStatsCollector::event(const CallEvent& e, std::uint64_t time) {
  if (e.kind == CallEvent::Kind::kEnter) {
    const Function& f = function(e.function_id);
    thread_.enter(f.key, f.category, time);
  } else {
    thread_.exit(time);
  }
}

void TimeStatsCollector::end_thread(std::uint64_t end_time) {
  stats_.add_thread(thread_name_, thread_.finish(end_time));
}

}  // namespace parlot::tool
