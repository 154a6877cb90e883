// A hook leaves errno as it found it: the runtime's slow work inside hooks
// (a thread's trace, a fork child's directory, a function's first sight,
// block writes, idle-flusher rounds) makes system calls that may fail.
// Before, a fork child's first instrumented call left errno at EEXIST.
#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

class KeepsErrno : public HardeningTest {};

TEST_P(KeepsErrno, EveryCaseReadsTheErrnoItSet) {
  const std::string expected =
      "main: errno kept\nthread: errno kept\nchild: errno kept\n"
      "handler: errno is the handler's\n"
      "loop: 400000 calls, errno changed after 0\n";
  const RunResult plain = run({prog("keeps_errno")});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  ASSERT_EQ(plain.out, expected);
  // A 4 KiB buffer: the loop's hooks write blocks; 1 ms flush period: they
  // meet the idle flusher's rounds.
  RunOptions options;
  options.env = {"PARLOT_BUFFER_KB=4", "PARLOT_FLUSH_MS=1"};
  const RunResult traced = run_traced({prog("keeps_errno")}, dir.path(), options);
  EXPECT_EQ(traced.exit_status, 0) << traced.err;
  EXPECT_EQ(traced.out, expected);
  // The loop's thread wrote many blocks, and the trace reads whole.
  const auto threads = trace_threads();
  EXPECT_EQ(threads.size(), 3u) << last_read.out.substr(0, 2000);
  const RunResult stats = parlot_read({"info", dir.path().string()});
  EXPECT_EQ(stats.exit_status, 0) << stats.err;
}

PARLOT_HARDENING_VARIANTS_OF(KeepsErrno);

}  // namespace
}  // namespace parlot::hardening
