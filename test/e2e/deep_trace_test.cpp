// parlot-read on the trace of a recursion 100,000 calls deep, as deep as a
// stack overflow leaves a thread: every command and every export format
// finishes without a crash (the recursive loop-summary hashing of `diff`
// overflowed the reader's own stack at about 37,000 levels), and the texts
// that print call paths stay linear in the depth (a folded export is
// refused instead of writing ~40 GB).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int kDepth = 100000;

class DeepTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string fixture = fixture_paths().at(0);
    for (const int depth : {kDepth, kDepth - 1}) {
      const fs::path dir = tmp_.path() / std::to_string(depth);
      const RunResult r = run_traced({fixture, "deep", std::to_string(depth)}, dir);
      ASSERT_EQ(r.exit_status, 0) << r.err;
      ASSERT_EQ(r.out, "deep " + std::to_string(depth) + "\n");
    }
  }
  std::string left() const { return (tmp_.path() / std::to_string(kDepth)).string(); }
  std::string right() const { return (tmp_.path() / std::to_string(kDepth - 1)).string(); }
  TempDir tmp_;
};

TEST_F(DeepTrace, EveryCommandReadsIt) {
  for (const std::string command : {"info", "stats", "report", "loops", "classes", "stacks"}) {
    const RunResult r = parlot_read({command, left()});
    EXPECT_EQ(r.exit_status, 0) << command << ": " << r.err;
    EXPECT_EQ(r.signal, 0) << command;
  }
  // Its text is linear in the depth (indent.h); written to a file here.
  const RunResult trace = run({"/bin/sh", "-c",
                               std::string(PARLOT_READ_PATH) + " trace " + left() + " > " +
                                   (tmp_.path() / "trace.txt").string()});
  EXPECT_EQ(trace.exit_status, 0) << trace.err;
  EXPECT_LT(fs::file_size(tmp_.path() / "trace.txt"), 200u * 1024 * 1024);
  const RunResult loops = parlot_read({"loops", left()});
  EXPECT_THAT(loops.out, HasSubstr("recurse { recurse {"));
}

TEST_F(DeepTrace, EveryExportFormatWritesIt) {
  for (const std::string format :
       {"chrome", "speedscope", "callgrind", "dot", "hatchet", "perfetto", "otf2"}) {
    const RunResult r = parlot_read(
        {"export", "-f", format, "-o", (tmp_.path() / ("out." + format)).string(), left()});
    EXPECT_EQ(r.exit_status, 0) << format << ": " << r.err;
    EXPECT_EQ(r.signal, 0) << format;
  }
  // Folded repeats each path whole: sum of d over 10^5 levels is ~5 10^9
  // frames, so the export is refused, and fits once cut at a depth.
  const std::string folded = (tmp_.path() / "out.folded").string();
  const RunResult refused = parlot_read({"export", "-f", "folded", "-o", folded, left()});
  EXPECT_EQ(refused.exit_status, 1);
  EXPECT_THAT(refused.err, HasSubstr("a folded export would take"));
  EXPECT_THAT(refused.err, HasSubstr("frames deep"));
  EXPECT_FALSE(fs::exists(folded)) << "a failed export leaves no partial file";
  const RunResult cut =
      parlot_read({"export", "-f", "folded", "--max-depth", "1000", "-o", folded, left()});
  EXPECT_EQ(cut.exit_status, 0) << cut.err;
  EXPECT_GT(fs::file_size(folded), 0u);
}

TEST_F(DeepTrace, DiffFindsTheBottomAndFoldsTheFrames) {
  const RunResult d = parlot_read({"diff", left(), right()});
  ASSERT_EQ(d.exit_status, 0) << d.err;
  EXPECT_EQ(d.signal, 0);
  // recurse(kDepth) makes kDepth + 1 nested calls; the right side one fewer.
  // The first from deep_worker's line, the others from recurse's own.
  EXPECT_THAT(d.out, HasSubstr("call stack there: deep_worker > recurse at call_fixture.c:50 > "
                               "recurse at call_fixture.c:46 x " +
                               std::to_string(kDepth - 1) + "\n"));
  EXPECT_THAT(d.out, HasSubstr("more levels of \"recurse {\""));
  EXPECT_LT(d.out.size(), 64u * 1024) << d.out.substr(0, 4096);
}

}  // namespace
}  // namespace parlot::e2e
