// Namespace calls that need a single-threaded process (unshare of a user
// namespace, setns into a mount namespace) behave traced as untraced: the
// runtime's idle flusher thread steps aside for them (namespace_interposer
// .cpp) and runs again after. Before, both failed traced with EINVAL.
#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

class Namespaces : public HardeningTest {
 protected:
  // Runs `namespaces mode` untraced, then traced with a 20 ms flush period;
  // the call's result line must be the same, and the trace must hold every
  // call around it. Skips where the machine refuses the call untraced.
  std::string check_same_result(const std::string& mode) {
    const RunResult plain = run({prog("namespaces"), mode});
    EXPECT_EQ(plain.exit_status, 0) << plain.err;
    const std::string result_line = plain.out.substr(0, plain.out.find('\n') + 1);
    if (result_line.find(": ok\n") == std::string::npos) {
      return "untraced: " + result_line;
    }
    RunOptions options;
    options.env = {"PARLOT_FLUSH_MS=20"};
    const RunResult traced = run_traced({prog("namespaces"), mode}, dir.path(), options);
    EXPECT_EQ(traced.exit_status, 0) << traced.err;
    EXPECT_EQ(traced.out.substr(0, result_line.size()), result_line) << traced.out;
    traced_out = traced.out;
    return "";
  }
  std::string traced_out;
};

TEST_P(Namespaces, UnshareOfAUserNamespaceSucceedsAndTheFlusherComesBack) {
  if (const std::string skip = check_same_result("unshare"); !skip.empty()) GTEST_SKIP() << skip;
  EXPECT_EQ(traced_out, "unshare(CLONE_NEWUSER): ok\nthreads after: 2\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ before{leaf} after{leaf} }"));
}

// After setns() the flusher, started again, still writes the data of a
// thread that makes no event (idle_wait waits for that).
TEST_P(Namespaces, SetnsIntoTheMountNamespaceSucceedsAndIdleDataIsStillWritten) {
  if (const std::string skip = check_same_result("setns"); !skip.empty()) GTEST_SKIP() << skip;
  EXPECT_EQ(traced_out, "setns(mnt): ok\nidle thread written: yes\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ before{leaf} after{leaf} idle_wait }"));
}

PARLOT_HARDENING_VARIANTS_OF(Namespaces);

}  // namespace
}  // namespace parlot::hardening
