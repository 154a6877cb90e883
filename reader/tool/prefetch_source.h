// An event stream decoded ahead on its own thread, optionally building the
// stream's loop summary there too: `diff` reads two threads in lock step,
// and this puts each side's decoding and loop recognition on its own core.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "analysis/event.h"
#include "analysis/loops.h"

namespace parlot::tool {

class PrefetchSource : public analysis::EventSource {
 public:
  /// Starts decoding `in` (which must outlive this object) in chunks of
  /// `chunk` events, at most `depth` chunks ahead. With `max_body` > 0 the
  /// producer also builds the loop summary (loop_summary()).
  PrefetchSource(analysis::EventSource& in, std::size_t max_body, std::size_t chunk = 1 << 16,
                 std::size_t depth = 4)
      : in_(in), chunk_(chunk), depth_(depth) {
    if (max_body > 0) builder_.emplace(max_body);
    producer_ = std::thread([this] { produce(); });
  }
  ~PrefetchSource() override {
    {
      const std::lock_guard<std::mutex> g(lock_);
      stop_ = true;
    }
    changed_.notify_all();
    producer_.join();
  }
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  /// Rethrows what decoding threw (a FormatError), at the point the stream
  /// ends.
  bool next(analysis::Event& e) override {
    if (pos_ == current_.size()) [[unlikely]] {
      if (!refill()) return false;
    }
    e = current_[pos_++];
    return true;
  }

  /// Reads the rest of the stream, then returns its loop summary (built
  /// with `max_body` > 0 only). Call once.
  analysis::LoopSummary loop_summary() {
    for (analysis::Event e; next(e);) {
    }
    return builder_->finish();
  }

 private:
  void produce() {
    try {
      for (bool more = true; more;) {
        std::vector<analysis::Event> chunk;
        chunk.reserve(chunk_);
        analysis::Event e;
        while (chunk.size() < chunk_ && (more = in_.next(e))) chunk.push_back(e);
        if (builder_) {
          for (const analysis::Event& x : chunk) builder_->push(x);
        }
        std::unique_lock<std::mutex> g(lock_);
        changed_.wait(g, [&] { return stop_ || ready_.size() < depth_; });
        if (stop_) return;
        if (!chunk.empty()) ready_.push_back(std::move(chunk));
        if (!more) done_ = true;
        changed_.notify_all();
      }
    } catch (...) {
      const std::lock_guard<std::mutex> g(lock_);
      error_ = std::current_exception();
      done_ = true;
      changed_.notify_all();
    }
  }

  bool refill() {
    std::unique_lock<std::mutex> g(lock_);
    changed_.wait(g, [&] { return !ready_.empty() || done_; });
    if (ready_.empty()) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      return false;
    }
    current_ = std::move(ready_.front());
    ready_.pop_front();
    pos_ = 0;
    changed_.notify_all();
    return true;
  }

  analysis::EventSource& in_;
  std::size_t chunk_, depth_;
  std::optional<analysis::LoopBuilder> builder_;
  std::vector<analysis::Event> current_;
  std::size_t pos_ = 0;
  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<std::vector<analysis::Event>> ready_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace parlot::tool
