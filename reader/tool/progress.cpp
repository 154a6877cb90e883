#include "progress.h"

#include <fmt/core.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

#include "parlot/decode_progress.h"

namespace parlot::tool {
namespace {

std::atomic<std::uint64_t> g_promised{0};

std::size_t terminal_columns() {
  winsize w{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  return 80;
}

}  // namespace

void add_promised_events(std::uint64_t events) {
  g_promised.fetch_add(events, std::memory_order_relaxed);
}

std::uint64_t promised_events_total() {
  return g_promised.load(std::memory_order_relaxed);
}

std::string si_count(std::uint64_t n) {
  static constexpr const char* kSuffix[] = {"", " k", " M", " G", " T", " P", " E"};
  if (n < 1000) return std::to_string(n);
  double v = static_cast<double>(n);
  std::size_t s = 0;
  while (v >= 999.5 && s + 1 < std::size(kSuffix)) {
    v /= 1000;
    ++s;
  }
  const int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f}{}", v, decimals, kSuffix[s]);
}

std::string format_progress(std::uint64_t decoded, std::uint64_t total, std::size_t width) {
  std::string line;
  if (total == 0) {
    line = fmt::format("parlot-read: {} events decoded", si_count(decoded));
  } else {
    decoded = std::min(decoded, total);
    const double fraction = static_cast<double>(decoded) / static_cast<double>(total);
    const std::string text =
        fmt::format(" {:3d}% {} of {} events decoded", static_cast<int>(fraction * 100),
                    si_count(decoded), si_count(total));
    const std::string prefix = "parlot-read: [";
    // The bar takes what the text leaves, 10 to 40 columns.
    const std::size_t room =
        width > prefix.size() + 1 + text.size() ? width - prefix.size() - 1 - text.size() : 0;
    const std::size_t bar = std::min<std::size_t>(room, 40);
    if (bar >= 10) {
      const auto full = static_cast<std::size_t>(fraction * static_cast<double>(bar));
      line = prefix + std::string(full, '#') + std::string(bar - full, ' ') + "]" + text;
    } else {
      line = "parlot-read:" + text;
    }
  }
  if (line.size() > width) line.resize(width);
  return line;
}

ProgressDisplay::ProgressDisplay(bool terminal, std::function<std::string()> line,
                                 std::function<void(const std::string&)> write,
                                 Clock::duration delay, Clock::duration interval)
    : line_(std::move(line)), write_(std::move(write)) {
  if (terminal) thread_ = std::thread([this, delay, interval] { run(delay, interval); });
}

ProgressDisplay::~ProgressDisplay() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> guard(lock_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_ != 0) write_("\r" + std::string(drawn_, ' ') + "\r");
}

void ProgressDisplay::run(Clock::duration delay, Clock::duration interval) {
  std::unique_lock<std::mutex> guard(lock_);
  if (wake_.wait_for(guard, delay, [this] { return stop_; })) return;
  do {
    const std::string line = line_();
    // Pad over a longer line drawn before.
    const std::size_t pad = drawn_ > line.size() ? drawn_ - line.size() : 0;
    write_("\r" + line + std::string(pad, ' '));
    drawn_ = std::max(drawn_, line.size());
  } while (!wake_.wait_for(guard, interval, [this] { return stop_; }));
}

std::unique_ptr<ProgressDisplay> ProgressDisplay::for_stderr() {
  const std::size_t width = terminal_columns() - 1;  // no wrap in the last column
  return std::make_unique<ProgressDisplay>(
      ::isatty(STDERR_FILENO) == 1,
      [width] { return format_progress(events_decoded_so_far(), promised_events_total(), width); },
      [](const std::string& s) {
        std::fwrite(s.data(), 1, s.size(), stderr);
        std::fflush(stderr);
      });
}

}  // namespace parlot::tool
