// The runtime's own descriptors never take the program's low numbers and
// are close-on-exec from their creation: fork children, the programs they
// exec and the program's own next open() see only the program's
// descriptors, whether the runtime has walked the stack (after a longjmp),
// writes blocks from several threads and the idle flusher, or records
// library calls. own_fds.c says what the program does.
#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;

class OwnFds : public HardeningTest {};

TEST_P(OwnFds, ForkChildrenAndExecdShellsSeeOnlyTheProgramsDescriptors) {
  for (const std::string libcalls : {"0", "1"}) {
    SCOPED_TRACE("PARLOT_LIBCALLS=" + libcalls);
    // With library calls every fork child is a traced process (its dup2,
    // close and execve are recorded), which takes longer: fewer forks.
    const std::string forks = libcalls == "0" ? "300" : "10";
    const std::vector<std::string> argv{prog("own_fds"), forks, "2"};
    const RunResult plain = run(argv);
    ASSERT_EQ(plain.exit_status, 0) << plain.err;
    ASSERT_EQ(plain.out, "forks " + forks +
                             ", children with a foreign low fd 0, listings not '0 1 2' 0\nfirst "
                             "fd 3\n");
    std::filesystem::remove_all(dir.path());
    RunOptions busy;
    busy.timeout_s = 90;  // a loaded machine: every fork waits for CPUs
    busy.env = {"PARLOT_FLUSH_MS=1", "PARLOT_BUFFER_KB=4", "PARLOT_LIBCALLS=" + libcalls};
    const RunResult traced = run_traced(argv, dir.path(), busy);
    EXPECT_EQ(traced.out, plain.out) << traced.err;
    EXPECT_EQ(traced.exit_status, 0) << traced.err;
    // The program's process is the first.
    std::vector<ThreadText> threads;
    for (const auto& t : trace_threads()) {
      if (t.process == 0) threads.push_back(t);
    }
    ASSERT_EQ(threads.size(), 3u) << last_read.err;
    // The program's own functions (library calls aside).
    const auto own = [](const std::string& body) {
      return render(strip_frames(parse_text(body), [](const std::string& name) {
        return name != "main()" && name != "jump_once()" && name != "jumper()" &&
               name != "leaf()" && name != "spin()";
      }));
    };
    EXPECT_EQ(own(threads[0].body), tree_text("main{ jump_once{ jumper{leaf} leaf } }"));
    for (std::size_t i = 1; i < threads.size(); ++i) {
      EXPECT_THAT(own(threads[i].body), HasSubstr("spin() {\n  leaf();\n  leaf();\n"));
    }
  }
}

// A process that loads the runtime but is not instrumented.
TEST_P(OwnFds, AShellUnderThePreloadListsOnlyItsOwnDescriptors) {
  const RunResult r = run_traced({"/bin/sh", "-c", "ls /proc/$$/fd"}, dir.path());
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "0\n1\n2\n");
}

PARLOT_HARDENING_VARIANTS_OF(OwnFds);

}  // namespace
}  // namespace parlot::hardening
