// `parlot record` leaves the program as it is untraced: same output, same
// exit status. The front end's own summary must not change the exit
// status of a pipeline whose reader has gone (`| head -1` under pipefail),
// while the program keeps the SIGPIPE disposition it was given.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

// Single-quoted for sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (const char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `PIPELINE`'s exit status under `set -o pipefail`, run by bash.
int pipefail_status(const std::string& pipeline) {
  const RunResult r = run({"bash", "-c", "set -o pipefail; " + pipeline + "; echo status=$?"});
  const auto at = r.out.rfind("status=");
  return at == std::string::npos ? -1000 : std::stoi(r.out.substr(at + 7));
}

// The reader of the pipe (head -1, grep -q) has gone once it saw the
// program's first line; the program then exits 0 without writing more, so
// untraced the pipeline's status is 0. parlot's summary, written after,
// must not kill it with SIGPIPE (141).
TEST(RecordUntraced, ASummaryNobodyReadsDoesNotChangeThePipelineStatus) {
  TempDir dir;
  const std::string program = "sh -c 'echo first; sleep 0.5'";
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -d " + quoted(dir.path().string()) + " -- ";
  for (const std::string reader : {"head -1 >/dev/null", "grep -q first"}) {
    SCOPED_TRACE(reader);
    const int untraced_status = pipefail_status(program + " 2>&1 | " + reader);
    ASSERT_EQ(untraced_status, 0);
    EXPECT_EQ(pipefail_status(traced + program + " 2>&1 | " + reader), untraced_status);
  }
}

// A program that dies of SIGPIPE (yes into head -1) still does under
// parlot, and parlot dies of it too: the pipeline's status is 141 both ways.
TEST(RecordUntraced, AProgramKilledBySigpipeStillIs) {
  TempDir dir;
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -q -d " + quoted(dir.path().string()) + " -- ";
  const int untraced_status = pipefail_status("yes | head -1 >/dev/null");
  ASSERT_EQ(untraced_status, 128 + SIGPIPE);
  EXPECT_EQ(pipefail_status(traced + "yes | head -1 >/dev/null"), untraced_status);
}

// The program starts with the SIGPIPE disposition parlot was given: the
// default, or ignored (`trap '' PIPE` in the shell that started parlot).
TEST(RecordUntraced, TheProgramGetsTheSigpipeDispositionItWasGiven) {
  TempDir dir;
  const std::string show = "grep SigIgn /proc/self/status";
  const std::string traced =
      quoted(PARLOT_FRONTEND_PATH) + " record -q -d " + quoted(dir.path().string()) + " -- ";
  for (const std::string setup : {"", "trap '' PIPE; "}) {
    SCOPED_TRACE(setup);
    const RunResult untraced = run({"bash", "-c", setup + show});
    const RunResult under_parlot = run({"bash", "-c", setup + traced + show});
    ASSERT_EQ(untraced.exit_status, 0) << untraced.err;
    EXPECT_EQ(under_parlot.exit_status, 0) << under_parlot.err;
    EXPECT_EQ(under_parlot.out, untraced.out);
  }
}

}  // namespace
}  // namespace parlot::e2e
