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
#include <span>
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
    if (pos_ == current_.events.size()) [[unlikely]] {
      if (!refill()) return false;
    }
    e = current_.events[pos_++];
    return true;
  }

  /// The marks of the stream decoded (they do not change while decoding).
  std::span<const Mark> marks() const override { return in_.marks(); }

  /// The stream index of the event next() returned last.
  std::uint64_t last_index() const override { return pos_ == 0 ? 0 : current_.indices[pos_ - 1]; }

  /// The call site of the entry next() returned last (the decoded stream's).
  std::uint64_t last_site() const override { return pos_ == 0 ? 0 : current_.sites[pos_ - 1]; }

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
        Chunk chunk;
        chunk.events.reserve(chunk_);
        chunk.indices.reserve(chunk_);
        chunk.sites.reserve(chunk_);
        analysis::Event e;
        while (chunk.events.size() < chunk_ && (more = in_.next(e))) {
          chunk.events.push_back(e);
          chunk.indices.push_back(in_.last_index());
          chunk.sites.push_back(e.enter ? in_.last_site() : 0);
        }
        if (builder_) {
          for (const analysis::Event& x : chunk.events) builder_->push(x);
        }
        std::unique_lock<std::mutex> g(lock_);
        changed_.wait(g, [&] { return stop_ || ready_.size() < depth_; });
        if (stop_) return;
        if (!chunk.events.empty()) ready_.push_back(std::move(chunk));
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

  // Events decoded ahead, with their indices in the thread's stream and
  // their call sites.
  struct Chunk {
    std::vector<analysis::Event> events;
    std::vector<std::uint64_t> indices;
    std::vector<std::uint64_t> sites;
  };

  analysis::EventSource& in_;
  std::size_t chunk_, depth_;
  std::optional<analysis::LoopBuilder> builder_;
  Chunk current_;
  std::size_t pos_ = 0;
  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<Chunk> ready_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

}  // namespace parlot::tool
