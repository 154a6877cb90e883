// Cases 3 and 4: a process or a thread that ends in the middle of nested
// calls: exit() (atexit handlers nest under the frame that called exit),
// exit() from a second thread, _exit() and abort() (the trace is best
// effort: readable, possibly cut short); pthread_exit and pthread_cancel
// (cleanup handlers run in the frame that pushed them).
#include <signal.h>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;

class ExitPaths : public HardeningTest {
 protected:
  // The complete tree of `exit_paths MODE N` up to the call that ends the
  // process, with the frames open there closed.
  static std::string ended_tree(int n) {
    std::string work;
    for (int i = 0; i < n; ++i) work += " leaf";
    return tree_text("main{ do_work{" + work + "} exit_outer{exit_middle{exit_inner}} }");
  }

  // Events of the complete trace of `exit_paths MODE N`: main, do_work,
  // exit_outer, exit_middle, exit_inner (enter and exit each), N leaf calls.
  static std::uint64_t complete_events(int n) { return 10 + 2 * static_cast<std::uint64_t>(n); }

  // _exit and abort run no destructor: the runtime cannot finish the trace
  // and what sat in the thread's buffer may be lost (docs/DESIGN.md, Known
  // limits). Checks what must hold whatever the runtime does: the program's
  // status is unchanged, parlot-read exits 0 with the complete tree or
  // says the file was cut short (exit status 0, or 2 inside a block), and what it prints is a
  // prefix of the complete tree. Returns the number of events readable.
  std::uint64_t check_abrupt_end(const std::filesystem::path& where, const std::string& mode, int n,
                                 const RunOptions& options) {
    const RunResult r = run_traced({prog("exit_paths"), mode, std::to_string(n)}, where, options);
    if (mode == "abort") {
      EXPECT_EQ(r.signal, SIGABRT) << r.err;  // still killed by SIGABRT
    } else {
      EXPECT_EQ(r.exit_status, 4) << r.err;  // _exit's status unchanged
    }
    EXPECT_EQ(r.out, mode + "\n");
    const RunResult t = parlot_read({"trace", where.string()});
    const auto threads = split_threads(t.out);
    EXPECT_EQ(threads.size(), 1u) << t.out << t.err;
    if (threads.size() != 1) return 0;
    // Cut short after a whole block: exit status 0 and one line saying so;
    // inside a block: damage, exit status 2.
    const bool complete = t.exit_status == 0 && t.err.empty();
    if (complete) {
      EXPECT_EQ(threads[0].body, ended_tree(n));
    } else {
      EXPECT_TRUE(t.exit_status == 0 || t.exit_status == 2) << t.err;
      EXPECT_THAT(t.err, HasSubstr("cut short")) << t.err;
      EXPECT_TRUE(is_prefix_of_tree(threads[0].body, ended_tree(n)));
    }
    const auto processes = open_trace_directory(where);
    const auto events = named_events(processes.at(0));
    const std::uint64_t read = events.empty() ? 0 : events[0].size();
    std::printf("[ NOTE     ] %s after %d calls: %llu of %llu events readable, trace %s\n",
                mode.c_str(), n, static_cast<unsigned long long>(read),
                static_cast<unsigned long long>(complete_events(n)),
                complete ? "complete" : "cut short");
    return read;
  }
};

TEST_P(ExitPaths, ExitDeepInTheStackNestsAtexitHandlersUnderItsCaller) {
  const RunResult r = run_traced({prog("exit_paths"), "exit"}, dir.path());
  EXPECT_EQ(r.exit_status, 3) << r.err;
  EXPECT_EQ(r.out, "exit\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ do_work{leaf leaf leaf} exit_outer{exit_middle{"
                                       "exit_inner{at_exit_second{leaf} at_exit_first{leaf}}}} }"));
  EXPECT_THAT(info(), HasSubstr("4 frames open at the end"));
}

TEST_P(ExitPaths, ExitFromASecondThreadClosesTheWaitingMainThread) {
  const RunResult r = run_traced({prog("exit_paths"), "exit_thread"}, dir.path());
  EXPECT_EQ(r.exit_status, 3) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ do_work{leaf leaf leaf} wait_outer{wait_inner} }"));
  EXPECT_EQ(threads[1].body, tree_text("exiting_thread{ exit_outer{exit_middle{"
                                       "exit_inner{at_exit_second{leaf} at_exit_first{leaf}}}} }"));
}

TEST_P(ExitPaths, UnderscoreExitKeepsItsStatusAndLeavesAReadableTrace) {
  check_abrupt_end(dir.path(), "_exit", 3, {});
}

TEST_P(ExitPaths, AbortKeepsItsSignalAndLeavesAReadableTrace) {
  check_abrupt_end(dir.path(), "abort", 3, {});
}

// With small uncompressed blocks, all but the last buffer reached the file
// before _exit / abort: at most one buffer (4 KiB = 2,048 one-word events)
// plus the events of the frames still open are lost.
TEST_P(ExitPaths, AbruptEndsLoseAtMostTheLastBuffer) {
  const int n = 20000;
  RunOptions small;
  small.env = {"PARLOT_COMPRESS=0", "PARLOT_BUFFER_KB=4"};
  for (const std::string mode : {"_exit", "abort"}) {
    SCOPED_TRACE(mode);
    TempDir where;
    const std::uint64_t read = check_abrupt_end(where.path(), mode, n, small);
    EXPECT_GE(read + 2048 + 10, complete_events(n));
  }
}

PARLOT_HARDENING_VARIANTS_OF(ExitPaths);

class ThreadExit : public HardeningTest {};

// Was failing before pthread_exit/pthread_cancel marked the stack cut.
//
// The cleanup handler runs in the frame that pushed it (glibc longjmps there
// while unwinding), after the callee that called pthread_exit or blocked
// was left without its exit hook. ShadowStack::enter compares post-prologue
// stack pointers, so a handler with a larger frame than that callee nests
// in it: tx_cleanup(void*) vs tx_inner(void) on every build, c_cleanup vs
// c_inner at -O2.
TEST_P(ThreadExit, PthreadExitAndCancelRunCleanupHandlersInThePushingFrame) {
  const RunResult r = run_traced({prog("thread_exit")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "exit 42 pause 1 cond 1\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 4u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{run_exit run_pause run_cond}"));
  EXPECT_EQ(threads[1].body,
            tree_text("exit_worker{ tx_outer{ tx_inner{leaf} tx_cleanup{leaf} } }"));
  EXPECT_EQ(threads[2].body, tree_text("pause_worker{ c_outer{ c_inner{leaf} c_cleanup{leaf} } }"));
  EXPECT_EQ(threads[3].body, tree_text("cond_worker{ w_outer{ w_inner{leaf} w_cleanup{leaf} } }"));
}

PARLOT_HARDENING_VARIANTS_OF(ThreadExit);

}  // namespace
}  // namespace parlot::hardening
