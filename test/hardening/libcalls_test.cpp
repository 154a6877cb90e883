// Case 11: calls into uninstrumented shared libraries (PARLOT_LIBCALLS=1,
// runtime/libcalls/libcall_patcher.h). Each mode of libcalls.c (lazily bound) and
// libcalls_now (-z now) must behave exactly as untraced and show the
// library calls nested where they ran; libcalls_cxx checks exceptions and
// thread cancellation through library calls. Expected trees are derived by
// hand from the programs (see the comments in libcalls.c).
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;

// Library calls a build may or may not make (gcc and clang expand some at
// -O2, call them at -O0) or that depend on the C library's internals.
bool optional_call(const std::string& name) {
  static const std::set<std::string> names = {"memset()", "strcmp()", "dladdr()",
                                              "__stack_chk_fail()", "_Unwind_Resume()"};
  return names.contains(name);
}

class Libcalls : public HardeningTest {
 protected:
  // Runs `program mode` untraced and traced with PARLOT_LIBCALLS=1; the two
  // must print the same and end the same. Returns the traced run.
  RunResult run_both(const std::string& program, const std::vector<std::string>& args,
                     const TempDir& into) {
    std::vector<std::string> argv = {prog(program)};
    argv.insert(argv.end(), args.begin(), args.end());
    const RunResult plain = run(argv);
    RunOptions options;
    options.env = {"PARLOT_LIBCALLS=1"};
    const RunResult traced = run_traced(argv, into.path(), options);
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.exit_status, plain.exit_status) << traced.err;
    EXPECT_EQ(traced.signal, plain.signal);
    return traced;
  }
  // parlot-read's call trees of the trace in `from`, one per thread.
  std::vector<ThreadText> threads_in(const TempDir& from) {
    last_read = parlot_read({"trace", from.path().string()});
    EXPECT_EQ(last_read.exit_status, 0) << last_read.err;
    return split_threads(last_read.out);
  }
  // The call tree of one thread with the optional calls taken out.
  static std::string tree_of(const ThreadText& t) {
    return render(strip_frames(parse_text(t.body), optional_call));
  }
  // Both bindings: lazy and -z now.
  std::vector<std::string> programs() const { return {"libcalls", "libcalls_now"}; }
  // Runs `mode` of both builds and checks the exit status and each thread's
  // tree, in trace order, against `trees` (tree_text specs). Returns what
  // the traced runs printed.
  std::string expect_trees(const std::string& mode, int exit_status,
                           const std::vector<std::string>& trees) {
    std::string out;
    for (const std::string& p : programs()) {
      SCOPED_TRACE(p);
      TempDir run_dir;
      const RunResult r = run_both(p, {mode}, run_dir);
      EXPECT_EQ(r.exit_status, exit_status) << r.err;
      out = r.out;
      const auto threads = threads_in(run_dir);
      EXPECT_EQ(threads.size(), trees.size()) << last_read.out;
      for (std::size_t i = 0; i < threads.size() && i < trees.size(); ++i)
        EXPECT_EQ(tree_of(threads[i]), tree_text(trees[i])) << "thread " << i;
    }
    return out;
  }
  // Four threads load, call and unload their own copy of an instrumented
  // plugin (dlopen_threads.c) while the idle flusher patches the copies it
  // finds loaded: it must never read or write a copy being unloaded or one the
  // loader is still relocating. `plugin`: libplugin_now (bound at load, -z
  // now: its GOT lies in RELRO) or libplugin (lazily bound: the patcher looks
  // its entries up as the plugin, returning through the plugin's code, while
  // other threads unload their copies). For each flush interval in
  // `flush_ms`, twice; the process must end as untraced and its trace must
  // read.
  void load_and_unload_in_threads(const std::string& plugin,
                                  const std::vector<std::string>& flush_ms) {
    const std::filesystem::path bin = std::filesystem::path(prog("dlopen_threads")).parent_path();
    const std::filesystem::path library = bin / ("lib" + plugin + "_" + GetParam() + ".so");
    std::vector<std::string> argv = {prog("dlopen_threads"), "1000", "1"};
    for (int i = 0; i < 4; ++i) {
      const std::filesystem::path copy = dir.path() / ("plugin" + std::to_string(i) + ".so");
      std::filesystem::copy_file(library, copy);
      argv.push_back(copy.string());
    }
    const RunResult plain = run(argv);
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    for (const std::string& ms : flush_ms) {
      for (int round = 0; round < 2; ++round) {
        SCOPED_TRACE("PARLOT_FLUSH_MS=" + ms + " round " + std::to_string(round));
        TempDir run_dir;
        RunOptions options;
        options.env = {"PARLOT_LIBCALLS=1", "PARLOT_FLUSH_MS=" + ms};
        const RunResult r = run_traced(argv, run_dir.path(), options);
        ASSERT_EQ(r.signal, 0) << r.err;
        ASSERT_EQ(r.exit_status, 0) << r.err;
        EXPECT_EQ(r.out, plain.out);
        EXPECT_EQ(threads_in(run_dir).size(), 5u) << last_read.out;
      }
    }
  }
};

constexpr const char* kAround = "before_main{getppid} ";
constexpr const char* kAfter = " after_main{getppid}";

TEST_P(Libcalls, CallbacksNestUnderTheLibraryCall) {
  for (const std::string& p : programs()) {
    SCOPED_TRACE(p);
    TempDir run_dir;
    const RunResult r = run_both(p, {"qsort"}, run_dir);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    // "compares N": the comparator calls the program counted itself.
    const int compares = std::stoi(r.out.substr(r.out.find(' ') + 1));
    ASSERT_GT(compares, 0) << r.out;
    std::string callbacks;
    for (int i = 0; i < compares; ++i) callbacks += " by_value";
    const auto threads = threads_in(run_dir);
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    EXPECT_EQ(tree_of(threads[0]), tree_text(std::string(kAround) + "main{ sort_numbers{ qsort{" +
                                             callbacks + "} } printf }" + kAfter));
  }
}

TEST_P(Libcalls, LongjmpOutOfACallbackEndsTheLibraryCall) {
  expect_trees(
      "longjmp", 0,
      {std::string(kAround) +
       "main{ jump_through_qsort{ qsort{ jump_out } } after_jump{getpid} printf }" + kAfter});
}

TEST_P(Libcalls, SignalHandlerNestsInTheLibraryCallItInterrupted) {
  expect_trees("signal", 0,
               {std::string(kAround) + "main{ raise{ on_usr1{getpid} } printf }" + kAfter});
}

TEST_P(Libcalls, ExitInsideALibraryCall) {
  // The destructor runs inside exit(), called by the callback.
  expect_trees(
      "exit", 3,
      {std::string(kAround) + "main{ qsort{ exit_in_callback{ fflush after_main{getppid} } } }"});
}

TEST_P(Libcalls, PthreadExitInsideALibraryCall) {
  expect_trees("thread", 0,
               {std::string(kAround) + "main{ pthread_join printf }" + kAfter,
                "in_thread{ qsort{ exit_thread_in_callback } }"});
}

TEST_P(Libcalls, ForkSystemAndPosixSpawnFromLibraryCalls) {
  // The parent's process comes first (it started first); the child returns
  // from the same fork() call.
  const std::string out = expect_trees(
      "processes", 0,
      {std::string(kAround) + "main{ fork waitpid system posix_spawnp waitpid printf }" + kAfter,
       "main{ fork child_work{getpid} }"});
  EXPECT_EQ(out, "system 4\n");
}

TEST_P(Libcalls, CallsThroughPointersFromDlsymAreNotRecorded) {
  // dlsym is never patched (it reads its caller's return address).
  expect_trees("pointer", 0,
               {std::string(kAround) + "main{ call_through_pointer printf }" + kAfter});
}

TEST_P(Libcalls, BacktraceUnwindsThroughALibraryCall) {
  // backtrace is the runtime's own (interposed): not a library call.
  const std::string out = expect_trees(
      "backtrace", 0, {std::string(kAround) + "main{ qsort{ find_main } printf }" + kAfter});
  EXPECT_EQ(out, "main found 1\n");
}

// backtrace() from a callback called by qsort lists the same frames as
// untraced (run_both compares the outputs): each frame's object, offset in
// it and name, from the callback to _start. Failed before: the list held
// the return thunk (a frame of libparlotrt) and the caller of qsort one
// byte early; backtrace() itself, a recorded library call, listed only
// the thunk.
TEST_P(Libcalls, BacktraceFromACallbackSeesTheFramesUntracedSees) {
  for (const std::string& p : programs()) {
    SCOPED_TRACE(p);
    TempDir run_dir;
    const RunResult r = run_both(p, {"frames"}, run_dir);  // same frames printed
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr(" record_frames\n"));
    EXPECT_THAT(r.out, HasSubstr(" frames_through_qsort\n"));
    EXPECT_THAT(r.out, HasSubstr(" main\n"));
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("parlotrt")));
    // The program's calls (backtrace is the runtime's: not recorded).
    const auto threads = threads_in(run_dir);
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    const auto not_kept = [](const std::string& name) {
      static const std::set<std::string> kept = {
          "before_main()", "getppid()",       "main()",      "frames_through_qsort()",
          "qsort()",       "record_frames()", "after_main()"};
      return !kept.contains(name);
    };
    EXPECT_EQ(render(strip_frames(parse_text(threads[0].body), not_kept)),
              tree_text(std::string(kAround) +
                        "main{ frames_through_qsort{ qsort{record_frames} } }" + kAfter));
  }
}

TEST_P(Libcalls, DlopenedLibrariesArePatchedByTheIdleFlusher) {
  for (const std::string& p : programs()) {
    SCOPED_TRACE(p);
    TempDir run_dir;
    std::vector<std::string> argv = {prog(p), "dlopen", plugin_library(GetParam())};
    const RunResult plain = run(argv);
    RunOptions options;
    options.env = {"PARLOT_LIBCALLS=1", "PARLOT_FLUSH_MS=20"};
    const RunResult r = run_traced(argv, run_dir.path(), options);
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
    const auto threads = threads_in(run_dir);
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    EXPECT_EQ(tree_of(threads[0]),
              tree_text(std::string(kAround) +
                        "main{ plugin_init{plugin_leaf} usleep plugin_pid{getpid}"
                        " dlclose{ plugin_fini{plugin_leaf} } printf }" +
                        kAfter));
  }
}

TEST_P(Libcalls, WithoutTheVariableNoLibraryCallIsRecorded) {
  const RunResult r = run_traced({prog("libcalls"), "qsort"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_THAT(threads[0].body, ::testing::Not(HasSubstr("qsort")));
  EXPECT_THAT(threads[0].body, HasSubstr("by_value"));
}

TEST_P(Libcalls, ExceptionsAndCancellationUnwindThroughLibraryCalls) {
  const RunResult r = run_both("libcalls_cxx", {}, dir);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "caught at\nfrom comparator\n~Noisy\n~Noisy\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 3u) << last_read.out;
  // Only the program's own functions and the library calls that matter.
  const auto kept = [](const std::string& name) {
    static const std::set<std::string> names = {
        "main()",
        "element_or_zero(std::vector<int, std::allocator<int> > const&, unsigned long)",
        "std::__throw_out_of_range_fmt(char const*, ...)",
        "sort_or_catch()",
        "throwing_compare(void const*, void const*)",
        "puts()",
        "exits_in_callback(void*)",
        "sleeps_until_cancelled(void*)",
        "qsort()",
        "exit_thread(void const*, void const*)",
        "pause()",
        "Noisy::~Noisy()"};
    return !names.contains(name);
  };
  // Spaces in names (C++ parameter lists) as '_', for tree_text.
  const auto tree = [&](const ThreadText& t) {
    Events events = strip_frames(parse_text(t.body), kept);
    for (Event& e : events) std::replace(e.name.begin(), e.name.end(), ' ', '_');
    return render(events);
  };
  EXPECT_EQ(
      tree(threads[0]),
      tree_text(
          "main{ element_or_zero(std::vector<int,_std::allocator<int>_>_const&,_unsigned_long){ "
          "std::__throw_out_of_range_fmt(char_const*,_...) puts }"
          " sort_or_catch{ qsort{ throwing_compare(void_const*,_void_const*) } puts } }"));
  EXPECT_EQ(tree(threads[1]),
            tree_text("exits_in_callback(void*){ qsort{ exit_thread(void_const*,_void_const*) }"
                      " Noisy::~Noisy(){puts} }"));
  EXPECT_EQ(tree(threads[2]),
            tree_text("sleeps_until_cancelled(void*){ pause Noisy::~Noisy(){puts} }"));
}

// A thread cancelled inside a library call, in plain C (libcall_cancel.c):
// glibc longjmps to the frame that pushed each cleanup handler. Blocked in
// read() or usleep(), or acting on a cancellation requested before the call
// (after instrumented calls that saw the request); the call made by the
// function that pushed the handler or one call deeper. The library call's
// frame must end before the handlers run, each handler nest under the
// function that pushed it, and the trace end well nested: no exit left
// unmatched, and open at the end only the two frames that never returned.
// Failed before: the thunk's personality routine found no _Unwind_GetCFA in
// a C program (libgcc_s is not in its global scope), so the handlers nested
// under the cancelled call or under __pthread_unwind_next.
TEST_P(Libcalls, CancelledInsideALibraryCallHandlersNestWherePushed) {
  for (const std::string call : {"read", "usleep"}) {
    for (const std::string when : {"blocked", "pending"}) {
      for (const std::string where : {"deeper", "here"}) {
        SCOPED_TRACE(call + " " + when + " " + where);
        TempDir run_dir;
        const RunResult r = run_both("libcall_cancel", {call, when, where}, run_dir);
        ASSERT_EQ(r.exit_status, 0) << r.err;
        EXPECT_EQ(r.out, call + " " + when + " " + where + " cancelled 1 cleanups 2\n");
        const auto threads = threads_in(run_dir);
        ASSERT_EQ(threads.size(), 2u) << last_read.out;
        // pthread_create and pthread_cancel are the runtime's own.
        EXPECT_EQ(tree_of(threads[0]),
                  tree_text(std::string("main{ run_cancel{ pipe ") +
                            (when == "blocked" ? "usleep " : "") + "pthread_join } printf }"));
        const std::string blocking = "leaf " + call;
        EXPECT_EQ(tree_of(threads[1]),
                  tree_text("cancelled_worker{ outer{ __pthread_register_cancel"
                            " inner{ __pthread_register_cancel " +
                            (where == "deeper" ? "blocks{ " + blocking + " }" : blocking) +
                            " inner_cleanup{leaf} } outer_cleanup{leaf} } }"));
        const auto processes = open_trace_directory(run_dir.path());
        ASSERT_EQ(processes.size(), 1u);
        for (const auto& file : processes[0].thread_files) {
          ThreadEventReader reader(file);
          ASSERT_TRUE(reader.summary().trailer.has_value()) << file;
          const auto& trailer = *reader.summary().trailer;
          EXPECT_EQ(trailer.unmatched_exits, 0u) << file;
          EXPECT_EQ(trailer.dropped_events, 0u) << file;
          // The worker: cancelled_worker and outer; main: none.
          EXPECT_EQ(trailer.closed_at_end, reader.summary().thread_index == 0 ? 0u : 2u) << file;
        }
      }
    }
  }
}

// uftrace (record with its default, library calls on) on the modes where it
// is right: the same tree, but for the calls only one of the two records
// (Parlot does not record functions it interposes itself, sigaction and
// dlsym among them; uftrace does).
TEST_P(Libcalls, SameTreesAsUftraceWhereUftraceIsRight) {
  const RunResult which = run({"/bin/sh", "-c", "command -v uftrace"});
  if (which.exit_status != 0)
    GTEST_SKIP() << "uftrace is not installed (scripts/install-deps.sh installs it)";
  const std::string uftrace = which.out.substr(0, which.out.find('\n'));
  const auto only_one_records = [](const std::string& name) {
    return optional_call(name) || name == "sigaction()" || name == "dlsym()";
  };
  for (const std::string mode : {"qsort", "signal", "pointer"}) {
    SCOPED_TRACE(mode);
    TempDir ours, theirs;
    run_both("libcalls", {mode}, ours);
    const auto threads = threads_in(ours);
    ASSERT_EQ(threads.size(), 1u) << last_read.out;
    const std::string data = (theirs.path() / "uftrace.data").string();
    const RunResult rec =
        run({uftrace, "record", "--no-event", "-d", data, prog("libcalls"), mode});
    ASSERT_EQ(rec.exit_status, 0) << rec.err;
    const RunResult replay = run({uftrace, "replay", "-d", data, "--no-pager", "-f", "none"});
    ASSERT_EQ(replay.exit_status, 0) << replay.err;
    // uftrace closes a call with "} /* name */", Parlot with "} /* name() */".
    std::string text;
    std::istringstream lines(replay.out);
    for (std::string line; std::getline(lines, line);) {
      // uftrace's own events ("/* linux:schedule */", preemption): not calls.
      if (line.find_first_not_of(' ') != std::string::npos &&
          line.compare(line.find_first_not_of(' '), 2, "/*") == 0) {
        continue;
      }
      if (const auto close = line.find("} /* "); close != std::string::npos)
        line.insert(line.size() - 3, "()");
      text += line + '\n';
    }
    EXPECT_EQ(render(strip_frames(parse_text(threads[0].body), only_one_records)),
              render(strip_frames(parse_text(text), only_one_records)));
  }
}

// Every register the System V ABI passes arguments and results in reaches
// the callee and the caller unchanged (libcall_abi.c): %ymm/%zmm vectors,
// x87 results, %rax:%rdx, %xmm0:%xmm1, varargs' %al, the floating-point
// environment. Irregular calls in between make the trace encoder run its
// AVX2 code (which ends with vzeroupper) inside the library calls' hooks.
TEST_P(Libcalls, ArgumentAndResultRegistersAreKept) {
  const RunResult r = run_both("libcall_abi", {}, dir);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 3u) << last_read.out;
  // The calls were recorded (through the stubs and the return thunk).
  for (const std::string name :
       {"abi_ld_mul()", "abi_cld_mul()", "abi_i128_mul()", "abi_vsum()", "abi_fp_environment()"})
    EXPECT_THAT(threads[0].body, HasSubstr(name));
  for (const std::string kind : {"ymm", "zmm"}) {
    if (r.out.find("\n" + kind + " ") != std::string::npos) {
      for (const ThreadText& t : threads) EXPECT_THAT(t.body, HasSubstr("abi_" + kind + "_sum()"));
    }
  }
}

TEST_P(Libcalls, ThreadsLoadingAndUnloadingPlugins) {
  load_and_unload_in_threads("plugin_now", {"0", "1", "2", "5", "20"});
}

TEST_P(Libcalls, ThreadsLoadingAndUnloadingLazilyBoundPlugins) {
  load_and_unload_in_threads("plugin", {"0", "1", "5"});
}

PARLOT_HARDENING_VARIANTS_OF(Libcalls);

}  // namespace
}  // namespace parlot::hardening
