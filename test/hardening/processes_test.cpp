// Cases 6 and 7: new processes (fork with another thread blocked, fork +
// exec, vfork + exec, posix_spawn, daemon) and code loaded at run time
// (dlopen, dlclose, a second dlopen of a copy at another address).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

class Processes : public HardeningTest {
 protected:
  // An exec'd instrumented program: parent { main { do_X } } and the target
  // { main { target_work { leaf } } }, two process directories.
  void check_parent_and_target(const std::string& mode, const std::string& parent_fn,
                               const std::string& word) {
    const RunResult r = run_traced({prog("fork_exec"), mode, prog("exec_target")}, dir.path());
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out, "target " + word + "\nchild status 0\n");
    const auto threads = trace_threads();
    ASSERT_EQ(threads.size(), 2u) << last_read.out;
    EXPECT_EQ(threads[0].process, 0u);
    EXPECT_EQ(threads[0].executable, fs::canonical(prog("fork_exec")).string());
    EXPECT_EQ(threads[0].body, tree_text("main{" + parent_fn + "}"));
    EXPECT_EQ(threads[1].process, 1u);
    EXPECT_EQ(threads[1].executable, fs::canonical(prog("exec_target")).string());
    EXPECT_EQ(threads[1].body, tree_text("main{target_work{leaf}}"));
    const auto processes = open_trace_directory(dir.path());
    ASSERT_EQ(processes.size(), 2u);
    EXPECT_EQ(processes[1].metadata.ppid, processes[0].metadata.pid);
  }
};

// The parent forks while a second thread waits two calls deep: the parent's
// two threads are untouched, the child (only the forking thread) starts its
// own directory re-entering the frames open at the fork.
TEST_P(Processes, ForkWithAnotherThreadBlocked) {
  const RunResult r = run_traced({prog("fork_exec"), "fork"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "child status 0\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 3u) << last_read.out;
  EXPECT_EQ(threads[0].process, 0u);
  EXPECT_EQ(threads[0].body, tree_text("main{ do_fork{ parent_work{leaf} } }"));
  EXPECT_EQ(threads[1].process, 0u);
  EXPECT_EQ(threads[1].body, tree_text("helper{ h_outer{ h_inner{leaf} } }"));
  EXPECT_EQ(threads[2].process, 1u);
  EXPECT_EQ(threads[2].index, 0u);
  EXPECT_EQ(threads[2].body, tree_text("main{ do_fork{ child_work{leaf} } }"));
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[1].metadata.ppid, processes[0].metadata.pid);
  EXPECT_EQ(processes[0].metadata.threads, 2u);
  EXPECT_EQ(processes[1].metadata.threads, 1u);
}

TEST_P(Processes, ForkThenExecOfAnotherInstrumentedProgram) {
  check_parent_and_target("fork_exec", "do_fork_exec", "forked");
}

// Was failing before the runtime finished the trace in the exec functions.
//
// The child's thread file is cut short at its header (no event at all) and
// parlot-read exits 1 (docs/DESIGN.md, Known limits: exec loses the pre-exec
// image's buffered data).
TEST_P(Processes, ForkChildThatWorksBeforeExecKeepsItsTrace) {
  const RunResult r =
      run_traced({prog("fork_exec"), "fork_work_exec", prog("exec_target")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "target forked\nchild status 0\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 3u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{do_fork_exec}"));
  // The child before exec: the frames open at the fork re-entered, its own
  // call, then everything closed when the image is replaced.
  EXPECT_EQ(threads[1].executable, fs::canonical(prog("fork_exec")).string());
  EXPECT_EQ(threads[1].body, tree_text("main{ do_fork_exec{ child_work{leaf} } }"));
  EXPECT_EQ(threads[2].executable, fs::canonical(prog("exec_target")).string());
  EXPECT_EQ(threads[2].pid, threads[1].pid);
  EXPECT_EQ(threads[2].body, tree_text("main{target_work{leaf}}"));
}

TEST_P(Processes, VforkThenExec) {
  check_parent_and_target("vfork", "do_vfork", "vforked");
}

TEST_P(Processes, PosixSpawn) {
  check_parent_and_target("spawn", "do_spawn", "spawned");
}

// daemon() forks and the original process _exits inside it: the original's
// trace is best effort like any _exit (readable; complete, or cut short with
// a prefix of its tree), the daemon's is exact.
TEST_P(Processes, Daemon) {
  const fs::path lock = dir.path() / "daemon.lock";
  const std::string trace_dir = (dir.path() / "trace").string();
  RunOptions options;
  // The daemon holds a flock on `lock` until its last descriptor closes,
  // after its trace was written.
  options.after_exit = [&](pid_t) {
    const int fd = open(lock.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the daemon did not end";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    close(fd);
  };
  const RunResult r = run_traced({prog("fork_exec"), "daemon", lock.string()}, trace_dir, options);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  unsigned original = 0, daemon = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "original %u\ndaemon %u", &original, &daemon), 2) << r.out;
  const RunResult t = parlot_read({"trace", trace_dir});
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 2u) << t.out << t.err;
  EXPECT_EQ(threads[0].pid, original);
  EXPECT_EQ(threads[1].pid, daemon);
  EXPECT_EQ(threads[1].body, tree_text("main{ do_daemon{ daemon_work{leaf} } }"));
  const std::string original_tree = tree_text("main{ before_daemon{leaf} do_daemon }");
  // A thread cut short (its file ends after a whole block) is counted on
  // one line, exit status 0; the daemon's own trace is complete.
  EXPECT_EQ(t.exit_status, 0) << t.err;
  if (t.err.empty()) {
    EXPECT_EQ(threads[0].body, original_tree);
  } else {
    EXPECT_EQ(t.err.find("parlot-read: 1 thread cut short"), 0u) << t.err;
    EXPECT_EQ(std::count(t.err.begin(), t.err.end(), '\n'), 1) << t.err;
    EXPECT_TRUE(is_prefix_of_tree(threads[0].body, original_tree));
    std::printf(
        "[ NOTE     ] the original process's trace was cut short: %zu lines of %zu\n",
        static_cast<std::size_t>(std::count(threads[0].body.begin(), threads[0].body.end(), '\n')),
        static_cast<std::size_t>(std::count(original_tree.begin(), original_tree.end(), '\n')));
  }
}

PARLOT_HARDENING_VARIANTS_OF(Processes);

class Dlopen : public HardeningTest {};

TEST_P(Dlopen, NamesStayRightAcrossDlcloseAndASecondLoadElsewhere) {
  TempDir copy_dir;
  const fs::path copy = copy_dir.path() / "libplugin_copy.so";
  fs::copy_file(plugin_library(GetParam()), copy);
  const RunResult r =
      run_traced({prog("dlopen_main"), plugin_library(GetParam()), copy.string()}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "bases differ\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_THAT(last_read.err, Not(HasSubstr("warning"))) << last_read.err;
  const std::string load =
      "load_and_call{ plugin_init{plugin_leaf} plugin_entry{plugin_helper{plugin_leaf}}"
      " plugin_fini{plugin_leaf} }";
  EXPECT_EQ(threads[0].body, tree_text("main{" + load + " " + load + "}"));
  // Both objects, at different addresses, are in the load map.
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  std::vector<std::uint64_t> starts;
  for (const auto& o : processes[0].load_map) {
    if (o.path == plugin_library(GetParam()) || o.path == copy.string()) starts.push_back(o.start);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  EXPECT_GE(starts.size(), 2u) << "load map lacks one of the two copies";
}

PARLOT_HARDENING_VARIANTS_OF(Dlopen);

}  // namespace
}  // namespace parlot::hardening
