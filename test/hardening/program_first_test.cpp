// Issue 8: the program comes first. Programs that manage their own file
// descriptors, signal dispositions and exits behave exactly as untraced
// (output, files, exit status, signal), and what can be saved of the trace
// is saved: complete where the behaviour is defined (exact call trees, and
// event for event what the independent recorder test/e2e/oracle_hooks.c saw
// where it can run: it holds stdio streams of its own, so not in programs
// that close fds, cap them, fork, exec or die of a signal), cut
// at a block boundary and reported where it cannot be (a frozen thread, a
// file over RLIMIT_FSIZE). program_first.c says what each mode does.
#include <signal.h>

#include <chrono>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

class ProgramFirst : public HardeningTest {
 protected:
  // Empties the trace directory for the next run of a loop.
  void fresh_dir() {
    std::filesystem::remove_all(dir.path());
    std::filesystem::create_directory(dir.path());
  }
  // Runs `args` untraced and traced (trace in `dir`); expects the same
  // output, exit status and signal. Returns the traced run.
  RunResult same_as_untraced(const std::vector<std::string>& args, RunOptions options = {}) {
    std::vector<std::string> argv{prog("program_first")};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult plain = run(argv, options);
    const RunResult traced = run_traced(argv, dir.path(), options);
    EXPECT_FALSE(plain.timed_out);
    EXPECT_FALSE(traced.timed_out) << "traced run hangs where the untraced one ends";
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.exit_status, plain.exit_status) << traced.err;
    EXPECT_EQ(traced.signal, plain.signal) << traced.err;
    EXPECT_THAT(traced.err, Not(HasSubstr("tracing is off")));
    return traced;
  }
  // Runs with `files` as the program's own directory (closefrom, dup2).
  RunResult same_as_untraced_with_files(const std::string& mode, int n) {
    TempDir plain_files, traced_files;
    std::vector<std::string> argv{prog("program_first"), mode, plain_files.path().string(),
                                  std::to_string(n)};
    const RunResult plain = run(argv);
    argv[2] = traced_files.path().string();
    RunOptions small;
    small.env = {"PARLOT_COMPRESS=0", "PARLOT_BUFFER_KB=4"};  // blocks are written meanwhile
    const RunResult traced = run_traced(argv, dir.path(), small);
    EXPECT_EQ(plain.exit_status, 0) << plain.err;
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.exit_status, 0) << traced.err;
    EXPECT_EQ(traced.err, "");
    return traced;
  }
};

// Case 1: the program closes every fd above 2, then opens its own files.
TEST_P(ProgramFirst, ClosingEveryDescriptorKeepsTheProgramsFilesAndTheTrace) {
  const int n = 3000;
  const RunResult r = same_as_untraced_with_files("closefrom", n);
  EXPECT_THAT(r.out, HasSubstr("fds 3 4 5 6 7 8\nsizes 7 7 7 7 7 7\n"));
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body,
            tree_text("main{ work{" + repeat("leaf ", n) + "} work{" + repeat("leaf ", n) + "} }"));
}

// Case 2: log files dup2'd onto fds 5, 6, 7, then a fork child writes to
// them too.
TEST_P(ProgramFirst, DescriptorsDup2dOntoLowNumbersStayTheProgramsInParentAndChild) {
  const int n = 3000;
  const RunResult r = same_as_untraced_with_files("dup2", n);
  EXPECT_THAT(r.out, HasSubstr("log-0: 17 bytes: child 5\nparent 5\n"));
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u) << last_read.out;
  const std::string work = "work{" + repeat("leaf ", n) + "}";
  EXPECT_EQ(threads[0].body, tree_text("main{ " + work + " " + work + " }"));
  EXPECT_EQ(threads[1].body, tree_text("main{ child_work{" + repeat("leaf ", n) + "} }"));
}

// Case 3: the runtime holds no descriptor in the program's range.
TEST_P(ProgramFirst, TheProgramsFirstOpenReturnsThree) {
  const RunResult r = same_as_untraced({"first_fd"});
  EXPECT_EQ(r.out, "first fd 3\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} }"));
  EXPECT_EQ(parlot_threads_as_oracle(dir.path()),
            oracle_threads({prog("program_first"), "first_fd"}));
}

// Case 4: RLIMIT_NOFILE 16 and 64 threads: every descriptor is the program's.
TEST_P(ProgramFirst, SixtyFourThreadsUnderSixteenDescriptorsKeepThemAll) {
  const RunResult r = same_as_untraced({"rlimit", "64"});
  EXPECT_EQ(r.out, "open failures 0 of 64\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 65u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main"));
  for (std::size_t i = 1; i < threads.size(); ++i) {
    EXPECT_EQ(threads[i].body, tree_text("thread_body{leaf}")) << "thread " << i;
  }
}

// Cases 5 and 6: SA_RESTART, SA_NODEFER, sa_mask, SA_ONSTACK, SA_SIGINFO,
// signal()'s BSD semantics and sigaction's old action, for every signal the
// runtime watches and one it does not.
TEST_P(ProgramFirst, EveryFlagOfEverySignalBehavesAsUntraced) {
  for (const int sig : {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGUSR1}) {
    SCOPED_TRACE(strsignal(sig));
    fresh_dir();
    const RunResult r = same_as_untraced({"flags", std::to_string(sig)});
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_THAT(r.out, HasSubstr("signal() restart: read 1 (ok), handled 1"));
    EXPECT_THAT(r.out, HasSubstr("flags 0 restart: read -1 (Interrupted system call), handled 1"));
    EXPECT_THAT(r.out,
                HasSubstr("SA_RESTART|SA_NODEFER, mask SIGUSR2 raise: handled 2, max depth 2"));
    const auto threads = trace_threads();
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    EXPECT_THAT(info(), Not(HasSubstr("events dropped")));
    // Every handler call recorded, event for event as the independent recorder saw it.
    EXPECT_EQ(parlot_threads_as_oracle(dir.path()),
              oracle_threads({prog("program_first"), "flags", std::to_string(sig)}));
  }
}

// Cases 5 and 6: a one-shot handler (SA_RESETHAND, SIGUSR2 in its mask):
// the second signal kills, with a complete trace.
TEST_P(ProgramFirst, OneShotHandlersLetTheSecondSignalKill) {
  for (const int sig : {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGUSR1}) {
    SCOPED_TRACE(strsignal(sig));
    fresh_dir();
    const RunResult r = same_as_untraced({"resethand", std::to_string(sig)});
    EXPECT_EQ(r.signal, sig);
    EXPECT_THAT(r.out, HasSubstr("after the first signal: old action handler SIG_DFL"));
    const auto threads = trace_threads();
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} on_sig }"));
  }
}

// Case 6: a crash reporter that returns: the fault happens again and kills.
TEST_P(ProgramFirst, OneShotCrashReporterDiesOfTheRefault) {
  RunOptions quick;
  quick.timeout_s = 10;
  const RunResult r = same_as_untraced({"refault"}, quick);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.out, "reporter ran\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} fault{crash_reporter} }"));
}

// Case 7: exit() or _exit() from a SIGALRM handler (every 50 us over a
// call-dense loop, so handlers keep interrupting hooks): the trace is
// complete, and every handler that ran is in it.
TEST_P(ProgramFirst, ExitFromATimerHandlerKeepsACompleteTrace) {
  for (const std::string how : {"exit", "_exit"}) {
    for (int run = 0; run < 5; ++run) {
      SCOPED_TRACE(how + " run " + std::to_string(run));
      fresh_dir();
      const RunResult r = run_traced({prog("program_first"), "alarm_exit", how}, dir.path());
      EXPECT_EQ(r.exit_status, 5) << r.err;
      const auto threads = trace_threads();
      ASSERT_EQ(threads.size(), 1u) << last_read.out;
      const auto processes = open_trace_directory(dir.path());
      const Events events = named_events(processes.at(0)).at(0);
      int handlers = 0;
      for (const Event& e : events) handlers += e.enter && e.name == "on_alarm()" ? 1 : 0;
      EXPECT_EQ(handlers, 20);
      EXPECT_THAT(info(), Not(HasSubstr("events dropped")));
    }
  }
}

// Case 8: 500 threads and main call exit() at once.
TEST_P(ProgramFirst, FiveHundredThreadsCallingExitAtOnceLoseNothing) {
  const RunResult r = same_as_untraced({"mass_exit", "500"});
  EXPECT_EQ(r.exit_status, 0);
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 501u) << last_read.err;
  std::size_t main_threads = 0;
  for (const auto& t : threads) {
    if (t.body == tree_text("main{ exiter{ work{leaf leaf leaf} } }")) {
      ++main_threads;
    } else {
      EXPECT_EQ(t.body, tree_text("exiting_thread{ exiter{ work{leaf leaf leaf} } }"));
    }
  }
  EXPECT_EQ(main_threads, 1u);
}

// Case 9: SIGTERM every 20 us while the runtime finishes the trace.
TEST_P(ProgramFirst, TerminationSignalsDuringTheFinishWaitForIt) {
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    fresh_dir();
    const RunResult r = run_traced({prog("program_first"), "term_storm", "8"}, dir.path());
    EXPECT_TRUE(r.exit_status == 0 || r.signal == SIGTERM) << r.exit_status << " " << r.signal;
    const auto threads = trace_threads();  // parlot-read exits 0: every file complete
    EXPECT_EQ(threads.size(), 9u) << last_read.err;
  }
}

// Case 10: one thread's file goes over RLIMIT_FSIZE; the others are complete
// and the message names what was lost.
TEST_P(ProgramFirst, OneThreadsWriteFailureKeepsTheOtherThreads) {
  RunOptions raw;
  raw.env = {"PARLOT_COMPRESS=0", "PARLOT_BUFFER_KB=4"};
  const RunResult r = run_traced({prog("program_first"), "fsize", "3"}, dir.path(), raw);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_THAT(r.err, HasSubstr("thread-1-"));
  // The thread's file ends at its last whole block: cut short, told on
  // one line, not damage (exit status 0).
  const RunResult t = parlot_read({"trace", dir.path().string()});
  EXPECT_EQ(t.exit_status, 0) << t.err;
  EXPECT_THAT(t.err, HasSubstr("parlot-read: 1 thread cut short"));
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 5u) << t.err;
  EXPECT_EQ(threads[0].body, tree_text("main"));
  EXPECT_TRUE(is_prefix_of_tree(
      threads[1].body, tree_text("busy_thread{ work{" + repeat("leaf ", 1000000) + "} }")));
  for (std::size_t i = 2; i < 5; ++i) {
    EXPECT_EQ(threads[i].body, tree_text("busy_thread{ work{leaf leaf leaf} }")) << i;
  }
}

// Case 11: a thread frozen inside a hook (in a write of its trace file) at
// exit: never finished by another thread, its file ends at its last
// complete block; exit does not wait for it.
TEST_P(ProgramFirst, AThreadFrozenInAHookIsCutNotCorrupted) {
  RunOptions frozen;
  frozen.env = {std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + " " + PARLOT_HARDENING_BIN_DIR +
                    "/libfreeze_writes.so",
                "PARLOT_DIR=" + dir.path().string(), "PARLOT_COMPRESS=0", "PARLOT_BUFFER_KB=4"};
  frozen.timeout_s = 20;
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = run({prog("program_first"), "frozen"}, frozen);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "frozen 1\n");
  EXPECT_LT(seconds, 2.0);
  std::printf("[ NOTE     ] exit with a frozen thread took %.3f s\n", seconds);
  const RunResult t = parlot_read({"trace", dir.path().string()});
  EXPECT_EQ(t.exit_status, 0) << t.err;  // cut short at a block boundary: not damage
  EXPECT_THAT(t.err, HasSubstr("parlot-read: 1 thread cut short")) << t.err;
  EXPECT_THAT(t.err, Not(HasSubstr("corrupt"))) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 2u) << t.out << t.err;
  EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} }"));
  EXPECT_TRUE(is_prefix_of_tree(threads[1].body,
                                tree_text("frozen_thread{ work{" + repeat("leaf ", 1000) + "} }")));
}

// Case 12: a relative PARLOT_DIR and a chdir before fork.
TEST_P(ProgramFirst, ARelativeTraceDirectoryIsResolvedOnce) {
  RunOptions here;
  here.cwd = dir.path().string();
  here.env = {std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH, "PARLOT_DIR=rel-trace"};
  const RunResult r = run({prog("program_first"), "chdir_fork"}, here);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "child done\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "moved" / "rel-trace"));
  const RunResult t = parlot_read({"trace", (dir.path() / "rel-trace").string()});
  EXPECT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 2u) << t.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} }"));
  EXPECT_EQ(threads[1].body, tree_text("main{ child_work{leaf leaf leaf} }"));
}

// Case 13: every exec entry point of glibc ends the trace first.
TEST_P(ProgramFirst, EveryExecEntryPointEndsTheTraceFirst) {
  for (const std::string fn : {"execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
                               "fexecve", "execveat"}) {
    SCOPED_TRACE(fn);
    fresh_dir();
    const RunResult r =
        run_traced({prog("program_first"), "exec", fn, prog("exec_target")}, dir.path());
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out, "target " + fn + "\n");
    const auto threads = trace_threads();
    ASSERT_EQ(threads.size(), 2u) << last_read.out << last_read.err;
    EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} }"));
    EXPECT_EQ(threads[1].body, tree_text("main{ target_work{leaf} }"));
  }
}

PARLOT_HARDENING_VARIANTS_OF(ProgramFirst);

}  // namespace
}  // namespace parlot::hardening
