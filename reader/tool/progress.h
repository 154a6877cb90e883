// parlot-read's progress bar: events decoded (events_decoded_so_far) of the
// events the selected threads' trailers promise, on stderr when stderr is a
// terminal and the command has run for more than 2 s, redrawn at most 10
// times a second, erased when the command ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace parlot::tool {

/// Adds `events` to the total the progress bar shows: a command calls it
/// once per selected thread with the count its trailer (or final block)
/// promises. Thread-safe.
void add_promised_events(std::uint64_t events);
/// The sum of add_promised_events so far.
std::uint64_t promised_events_total();

/// One line of progress, at most `width` columns:
/// "parlot-read: [#####     ] 45% 1.2 M of 2.7 M events decoded". `decoded`
/// above `total` shows as 100% (some commands read a thread twice); `total`
/// 0 (nothing promised yet, or damaged files) shows the count alone.
std::string format_progress(std::uint64_t decoded, std::uint64_t total, std::size_t width);

/// "123", "12.3 k", "1.2 M", "3.4 G": `n` with an SI suffix, 3 significant
/// digits at most.
std::string si_count(std::uint64_t n);

/// Shows progress while alive. Draws nothing unless `terminal`; then waits
/// `delay`, and redraws "\r<line>" every `interval` with the line from
/// `line()`, through `write`; the destructor erases the line ("\r", blanks,
/// "\r") if it drew one. The drawing runs on a thread of its own.
class ProgressDisplay {
 public:
  using Clock = std::chrono::steady_clock;
  ProgressDisplay(bool terminal, std::function<std::string()> line,
                  std::function<void(const std::string&)> write,
                  Clock::duration delay = std::chrono::seconds(2),
                  Clock::duration interval = std::chrono::milliseconds(100));
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  /// parlot-read's: stderr, if it is a terminal (isatty), with
  /// format_progress of events_decoded_so_far and promised_events_total, as
  /// wide as the terminal (TIOCGWINSZ, else 80 columns).
  static std::unique_ptr<ProgressDisplay> for_stderr();

 private:
  void run(Clock::duration delay, Clock::duration interval);

  std::function<std::string()> line_;
  std::function<void(const std::string&)> write_;
  std::mutex lock_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::size_t drawn_ = 0;  // columns of the line on screen, 0 if none
  std::thread thread_;
};

}  // namespace parlot::tool
