// parlot-read's progress bar (reader/tool/progress.cpp): the line's
// formatting, and the display's drawing, redraw rate and erasing, with a
// fake terminal.
#include "progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace parlot::tool {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TEST(SiCount, ThreeSignificantDigits) {
  EXPECT_EQ(si_count(0), "0");
  EXPECT_EQ(si_count(999), "999");
  EXPECT_EQ(si_count(1000), "1.00 k");
  EXPECT_EQ(si_count(12345), "12.3 k");
  EXPECT_EQ(si_count(999'499), "999 k");
  EXPECT_EQ(si_count(999'500), "1.00 M");
  EXPECT_EQ(si_count(123'456'789), "123 M");
  EXPECT_EQ(si_count(4'200'000'000), "4.20 G");
}

TEST(FormatProgress, BarPercentAndCounts) {
  // Wide terminal: the bar is 40 columns.
  EXPECT_EQ(format_progress(250'000, 1'000'000, 120), "parlot-read: [" + std::string(10, '#') +
                                                          std::string(30, ' ') +
                                                          "]  25% 250 k of 1.00 M events decoded");
  // 80 columns: the bar takes what the text leaves (80 - 14 - 1 - 36 = 29).
  const std::string line = format_progress(250'000, 1'000'000, 80);
  EXPECT_THAT(line, HasSubstr("[" + std::string(7, '#') + std::string(22, ' ') + "]  25%"));
  EXPECT_EQ(line.size(), 80u);
}

TEST(FormatProgress, FullAndEmpty) {
  EXPECT_THAT(format_progress(0, 10, 120),
              HasSubstr("[" + std::string(40, ' ') + "]   0% 0 of 10 events"));
  EXPECT_THAT(format_progress(10, 10, 120),
              HasSubstr("[" + std::string(40, '#') + "] 100% 10 of 10 events"));
}

TEST(FormatProgress, MoreDecodedThanPromisedShowsAHundredPercent) {
  EXPECT_THAT(format_progress(15, 10, 80), HasSubstr("] 100% 10 of 10 events"));
}

TEST(FormatProgress, NothingPromisedShowsTheCountAlone) {
  EXPECT_EQ(format_progress(1234, 0, 80), "parlot-read: 1.23 k events decoded");
}

TEST(FormatProgress, NarrowTerminalsDropTheBarThenCut) {
  const std::string mid = format_progress(5, 10, 50);
  EXPECT_EQ(mid, "parlot-read:  50% 5 of 10 events decoded");
  EXPECT_EQ(format_progress(5, 10, 20).size(), 20u);
  // The bar narrows with the width, down to 10 columns.
  const std::string narrow = format_progress(5, 10, 60);
  EXPECT_THAT(narrow, HasSubstr("[" + std::string(8, '#') + std::string(9, ' ') + "]"));
  EXPECT_LE(narrow.size(), 60u);
}

/// What a display wrote, thread-safe.
struct FakeTerminal {
  std::mutex lock;
  std::vector<std::string> writes;
  void write(const std::string& s) {
    const std::lock_guard<std::mutex> guard(lock);
    writes.push_back(s);
  }
};

TEST(ProgressDisplay, NotATerminalWritesNothing) {
  FakeTerminal term;
  std::atomic<int> asked{0};
  {
    const ProgressDisplay display(
        false, [&] { return ++asked, std::string("line"); },
        [&](const std::string& s) { term.write(s); }, 0ms, 1ms);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(term.writes.empty());
  EXPECT_EQ(asked.load(), 0);
}

TEST(ProgressDisplay, NothingBeforeTheDelay) {
  FakeTerminal term;
  {
    const ProgressDisplay display(
        true, [] { return std::string("line"); }, [&](const std::string& s) { term.write(s); }, 1h,
        1ms);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(term.writes.empty());  // a quick command shows no bar, and erases none
}

TEST(ProgressDisplay, RedrawsAtTheIntervalAndErasesAtTheEnd) {
  FakeTerminal term;
  std::atomic<int> n{0};
  {
    const ProgressDisplay display(
        true, [&] { return "step " + std::string(static_cast<std::size_t>(3 - n++ % 3), 'x'); },
        [&](const std::string& s) { term.write(s); }, 0ms, 100ms);
    std::this_thread::sleep_for(350ms);
  }
  // Drawn at 0, 100, 200, 300 ms: 4 times (a slow machine may lose one),
  // never more than the 10-per-second rate allows, then one erase.
  ASSERT_GE(term.writes.size(), 3u + 1);
  EXPECT_LE(term.writes.size(), 4u + 1);
  EXPECT_EQ(term.writes[0], "\rstep xxx");
  EXPECT_EQ(term.writes[1], "\rstep xx ");  // padded over the longer line before
  EXPECT_EQ(term.writes.back(), "\r" + std::string(8, ' ') + "\r");
}

}  // namespace
}  // namespace parlot::tool
