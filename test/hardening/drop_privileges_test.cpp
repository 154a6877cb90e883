// A traced server that drops root for another user keeps a whole trace:
// the runtime hands its trace directory and files to the new user before
// the switch (credentials_interposer.cpp). Before, every write after the
// switch failed with EACCES ("tracing is off"), the thread files ended
// without a trailer and the thread and child started after it had no trace.
#include <filesystem>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

namespace fs = std::filesystem;

class DropPrivileges : public HardeningTest {};

TEST_P(DropPrivileges, TraceAfterSetuidToAnotherUserIsComplete) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (it drops root for user 65534)";
  // The test's directory must let user 65534 through; the runtime creates
  // the trace directory below it (mode 0700) and hands it over.
  fs::permissions(dir.path(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const fs::path trace = dir.path() / "trace";
  const RunResult r = run_traced({prog("drop_privileges")}, trace);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "setuid: ok\nchild status 0\n");
  EXPECT_EQ(r.err, "");  // no "cannot write the trace"
  const RunResult read = parlot_read({"trace", trace.string()});
  EXPECT_EQ(read.exit_status, 0) << read.err;  // every file complete, with its trailer
  const auto threads = split_threads(read.out);
  ASSERT_EQ(threads.size(), 3u) << read.out;
  EXPECT_EQ(threads[0].process, 0u);
  EXPECT_EQ(threads[0].body, tree_text("main{ before{leaf} after{leaf} }"));
  EXPECT_EQ(threads[1].process, 0u);
  EXPECT_EQ(threads[1].body, tree_text("worker{leaf}"));
  EXPECT_EQ(threads[2].process, 1u);
  EXPECT_EQ(threads[2].body, tree_text("main{ child_work{leaf} }"));
}

PARLOT_HARDENING_VARIANTS_OF(DropPrivileges);

}  // namespace
}  // namespace parlot::hardening
