#include "timed_thread_collector.h"

#include <fmt/core.h>

#include "visible_text.h"

namespace parlot::tool {

void TimedThreadCollector::begin_process(const exporter::ProcessInfo& p) {
  ++position_;
  thread_seen_ = false;
  rank_ = visible_text(p.rank);
  functions_ = p.functions;
  keys_.clear();
  pid_ = p.pid;
}

void TimedThreadCollector::begin_thread(const exporter::ThreadInfo& t) {
  keep_ = !first_only_ || !thread_seen_;
  thread_seen_ = true;
  current_ = {};
  current_.process = position_ - 1;
  current_.pid = pid_;
  current_.tid = t.tid;
  current_.index = t.index;
  current_.thread.name =
      first_only_ ? "rank " + rank_ : fmt::format("process {} thread {}", position_ - 1, t.index);
}

std::uint32_t TimedThreadCollector::key_of(std::uint32_t id) {
  const auto [it, inserted] = keys_.try_emplace(id, 0);
  if (inserted) it->second = names_.key(visible_text(functions_->function(id).name));
  return it->second;
}

void TimedThreadCollector::event(const CallEvent& e, std::uint64_t time) {
  if (!keep_) return;
  const bool enter = e.kind == CallEvent::Kind::kEnter;
  current_.thread.events.push_back(
      {enter ? e.function_id : 0, enter ? key_of(e.function_id) : 0, time});
}

void TimedThreadCollector::mark(std::string_view label, std::uint32_t, std::uint64_t time) {
  if (!keep_) return;
  current_.thread.marks.push_back({current_.thread.events.size(), time, std::string(label)});
}

void TimedThreadCollector::end_thread(std::uint64_t end_time) {
  if (!keep_) return;
  current_.thread.end_time = end_time;
  threads_.push_back(std::move(current_));
}

}  // namespace parlot::tool
