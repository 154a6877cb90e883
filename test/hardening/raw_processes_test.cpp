// Processes started behind the C library's back, with raw system calls:
// what the trace keeps, and that the program's own trace is never
// corrupted. raw_processes.c says what the program does.
#include <algorithm>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RawProcesses : public HardeningTest {};

// A raw execve skips the exec interposers: the old image's trace is not
// finished (its thread file ends at its last complete block, which the
// reader reports as cut short); the new image, instrumented and with the
// runtime still preloaded, is traced in a directory of its own.
TEST_P(RawProcesses, ARawExecveCutsTheOldImageShortAndTracesTheNewOne) {
  RunOptions small;
  small.env = {"PARLOT_BUFFER_KB=4", "PARLOT_COMPRESS=0"};  // blocks go out as it runs
  const RunResult r = run_traced({prog("raw_processes"), "execve", prog("exec_target"), "20000"},
                                 dir.path(), small);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "target raw_execve\n");
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u);
  // The same pid, two images: pid-P and pid-P.1.
  EXPECT_EQ(processes[0].metadata.pid, processes[1].metadata.pid);
  std::vector<std::string> names;
  for (const auto& p : processes) names.push_back(p.directory.filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names[1], names[0] + ".1");

  const RunResult info = parlot_read({"info", dir.path().string()});
  // Cut short is not damage: shown, exit 0, one line saying so.
  EXPECT_EQ(info.exit_status, 0) << info.out << info.err;
  EXPECT_THAT(info.err, HasSubstr("1 thread cut short"));
  EXPECT_THAT(info.out, HasSubstr("did not finish"));
  EXPECT_THAT(info.out, HasSubstr("cut short at offset"));
  const RunResult t = parlot_read({"trace", dir.path().string()});
  EXPECT_THAT(t.err, HasSubstr("cut short"));
  EXPECT_THAT(t.err, Not(HasSubstr("corrupt")));
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 2u) << t.out << t.err;
  const ThreadText& first =
      threads[0].executable.find("raw_processes") != std::string::npos ? threads[0] : threads[1];
  const ThreadText& second = &first == &threads[0] ? threads[1] : threads[0];
  std::string leaves;
  for (int i = 0; i < 20000; ++i) leaves += "leaf ";
  EXPECT_TRUE(is_prefix_of_tree(first.body, tree_text("main{ work{" + leaves + "} }")));
  EXPECT_GT(parse_text(first.body).size(), 1000u) << "the blocks written before the exec";
  EXPECT_EQ(second.body, tree_text("main{ target_work{leaf} }"));
}

// A raw clone without CLONE_VM is a fork that the atfork handlers never
// see: the child holds a copy of its parent's trace state. It must not
// write into the parent's files: the parent's trace stays complete and
// exact; the child is not traced.
TEST_P(RawProcesses, ARawCloneChildLeavesTheParentsTraceIntact) {
  RunOptions small;
  small.env = {"PARLOT_BUFFER_KB=4", "PARLOT_COMPRESS=0", "PARLOT_FLUSH_MS=1"};
  const std::vector<std::string> argv{prog("raw_processes"), "clone", "50000"};
  const RunResult plain = run(argv);
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  const RunResult r = run_traced(argv, dir.path(), small);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(r.err, "");
  const auto threads = trace_threads();  // parlot-read exits 0: nothing cut or corrupt
  ASSERT_EQ(threads.size(), 1u) << last_read.out << last_read.err;
  EXPECT_EQ(threads[0].body, tree_text("main{ work{leaf leaf leaf} work{leaf leaf leaf} }"));
  EXPECT_EQ(last_read.err, "");
}

PARLOT_HARDENING_VARIANTS_OF(RawProcesses);

}  // namespace
}  // namespace parlot::hardening
