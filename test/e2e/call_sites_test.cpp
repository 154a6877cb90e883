// Call sites (PARLOT_CALL_SITES): each frame shown with the file:line it was
// called from, in `trace` and `stacks` (frames of one function called from
// different lines are different stack-tree nodes), hidden with --no-sites
// and absent with PARLOT_CALL_SITES=0; and the site of every entry of real
// programs equals what an independent recorder of the hooks saw, including
// programs with many more (caller, callee) pairs than the runtime's table
// has slots (collisions cost records, never a wrong site).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e_support.h"
#include "parlot/call_sites.h"
#include "parlot/call_stack_tracker.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

// "call_sites_fixture.c:<line>" of the line marked SITE(name) in the
// fixture's source.
std::string site(const std::string& name) {
  std::ifstream in(PARLOT_CALL_SITES_SOURCE);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("/* SITE(" + name + ") */") != std::string::npos) {
      return "call_sites_fixture.c:" + std::to_string(n);
    }
  }
  ADD_FAILURE() << "no SITE(" << name << ") in " << PARLOT_CALL_SITES_SOURCE;
  return "?";
}

std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  std::istringstream in(PARLOT_CALL_SITES_FIXTURES);
  for (std::string p; std::getline(in, p, ',');) out.push_back(p);
  return out;
}

class CallSitesFixture : public ::testing::TestWithParam<std::string> {
 protected:
  TempDir dir;
};

TEST_P(CallSitesFixture, TraceShowsTheLineEachCallCameFrom) {
  const RunResult r = run_traced({GetParam(), "lines"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult t = parlot_read_with_sites({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 1u);
  // main's own site lies in the C library (no line table unless its debug
  // information is installed): only the first line's start is fixed.
  EXPECT_THAT(threads[0], ::testing::StartsWith("main()"));
  const std::string body = threads[0].substr(threads[0].find('\n') + 1);
  EXPECT_EQ(body, "  step() at " + site("first") + ";\n" +       //
                      "  step() at " + site("second") + ";\n" +  //
                      "  step() at " + site("loop") + ";\n" +    //
                      "  step() at " + site("loop") + ";\n" +    //
                      "} /* main() */\n");
  // --no-sites hides them.
  const RunResult plain = parlot_read_with_sites({"trace", "--no-sites", dir.path().string()});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_EQ(split_threads(plain.out)[0],
            "main() {\n  step();\n  step();\n  step();\n  step();\n} /* main() */\n");
}

TEST_P(CallSitesFixture, StacksTellTheSwappedCallApart) {
  const RunResult r = run_traced({GetParam(), "abba"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  ASSERT_EQ(r.out, "abba held\n");
  const RunResult s = parlot_read_with_sites({"stacks", dir.path().string()});
  ASSERT_EQ(s.exit_status, 0) << s.err;
  // Thread 3 took the other line: its own node, not merged with 1, 2, 4.
  EXPECT_THAT(s.out, HasSubstr("\n    transfer at " + site("ordered") +
                               " [3 threads: process 0 threads 1-2,4]\n" + "      hold at " +
                               site("hold") + " [3 threads: process 0 threads 1-2,4]\n"));
  EXPECT_THAT(s.out, HasSubstr("\n    transfer at " + site("swapped") +
                               " [1 thread: process 0 thread 3]\n" + "      hold at " +
                               site("hold") + " [1 thread: process 0 thread 3]\n"));
  // Without sites the four stacks are one.
  const RunResult plain = parlot_read_with_sites({"stacks", "--no-sites", dir.path().string()});
  ASSERT_EQ(plain.exit_status, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("\n    transfer [4 threads: process 0 threads 1-4]\n"
                                   "      hold [4 threads: process 0 threads 1-4]\n"));
}

TEST_P(CallSitesFixture, SwitchedOffNoSiteIsRecorded) {
  const RunResult r = run_traced({GetParam(), "lines"}, dir.path(), {"PARLOT_CALL_SITES=0"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  ThreadEventReader reader(processes[0].thread_files.at(0));
  EXPECT_TRUE(reader.summary().call_sites.empty());
  const RunResult t = parlot_read_with_sites({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  EXPECT_THAT(t.out, Not(HasSubstr(" at ")));
}

INSTANTIATE_TEST_SUITE_P(Optimizations, CallSitesFixture, ::testing::ValuesIn(fixtures()),
                         [](const auto& info) { return fs::path(info.param).filename().string(); });

using ThreadLines = std::vector<std::string>;

// The oracle's per-thread entries as "E <function> @ <site>", the site "-"
// where it is the caller's own and the function another (a callee inlined
// into its caller, whose hook is handed the caller's call site: Parlot
// shows it as unknown); exits as "X".
std::vector<ThreadLines> oracle_sites(const std::vector<std::string>& argv) {
  TempDir dir;
  const RunResult r =
      run(argv, {std::string("LD_PRELOAD=") + PARLOT_ORACLE_PATH,
                 "PARLOT_ORACLE_DIR=" + dir.path().string(), "PARLOT_ORACLE_SITES=1"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::vector<ThreadLines> threads;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    std::ifstream in(f.path());
    ThreadLines lines;
    std::vector<std::pair<std::string, std::string>> open;  // function, site
    for (std::string line; std::getline(in, line);) {
      if (line == "X") {
        if (!open.empty()) open.pop_back();
        lines.push_back(line);
        continue;
      }
      const std::size_t at = line.find(" @ ");
      const std::string function = line.substr(0, at);
      const std::string where = line.substr(at + 3);
      const bool inlined =
          !open.empty() && open.back().second == where && open.back().first != function;
      lines.push_back(function + " @ " + (inlined ? "-" : where));
      open.emplace_back(function, where);
    }
    if (!lines.empty()) threads.push_back(std::move(lines));
  }
  return threads;
}

// "<object basename>+<hex offset>" of a run-time address of `process`.
std::string where(const ProcessTrace& process, std::uint64_t address) {
  for (const auto& o : process.load_map) {
    if (!o.contains(address)) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "+%lx", static_cast<unsigned long>(address - o.load_bias));
    return fs::path(o.path).filename().string() + buf;
  }
  return "?";
}

// Parlot's per-thread entries with the site CallSites gives each.
std::vector<ThreadLines> parlot_sites(const ProcessTrace& process) {
  std::vector<ThreadLines> threads;
  for (const auto& file : process.thread_files) {
    ThreadEventReader reader(file);
    CallStackTracker tracker(process.function_addresses.size(), file);
    CallSites sites(reader.summary().call_sites);
    ThreadLines lines;
    std::uint64_t index = 0;
    for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
      for (const std::uint32_t id : b) {
        const CallEvent e = tracker.push(id);
        if (e.kind == CallEvent::Kind::kExit) {
          sites.at_exit();
          lines.push_back("X");
        } else {
          const std::uint64_t s = sites.at_entry(index, e.caller_id, e.function_id);
          lines.push_back("E " + where(process, process.function_addresses.at(id - 1)) + " @ " +
                          (s == 0 ? "-" : where(process, s)));
        }
        ++index;
      }
    }
    threads.push_back(std::move(lines));
  }
  return threads;
}

struct Program {
  std::string name;
  std::vector<std::string> args;
  std::size_t threads;
};

class CallSitesOfExamples : public ::testing::TestWithParam<Program> {};

TEST_P(CallSitesOfExamples, EveryEntrysSiteIsTheOnesTheHookWasHanded) {
  const Program& p = GetParam();
  const std::string program = examples_dir() + "/" + p.name;
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built";
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), p.args.begin(), p.args.end());
  TempDir dir;
  const RunResult traced = run_traced(argv, dir.path());
  ASSERT_EQ(traced.exit_status, 0) << traced.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  auto got = parlot_sites(processes[0]);
  auto want = oracle_sites(argv);
  ASSERT_EQ(got.size(), p.threads);
  ASSERT_EQ(want.size(), p.threads);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  for (std::size_t t = 0; t < got.size(); ++t) {
    ASSERT_EQ(got[t].size(), want[t].size()) << p.name << " thread " << t;
    for (std::size_t i = 0; i < got[t].size(); ++i) {
      // main is called through the runtime's start-up interposer: its hook
      // is handed a return address into libparlotrt.so, where the oracle's
      // was handed one into the C library. Only the function must agree.
      const std::size_t at = got[t][i].find(" @ libparlotrt.so");
      if (at != std::string::npos) {
        ASSERT_EQ(got[t][i].substr(0, at), want[t][i].substr(0, want[t][i].find(" @ ")))
            << p.name << " thread " << t << " event " << i;
        continue;
      }
      ASSERT_EQ(got[t][i], want[t][i]) << p.name << " thread " << t << " event " << i;
    }
  }
  // Records only where the table could not prove the reader knew the site:
  // far fewer than entries for the loops of these programs.
  std::uint64_t records = 0, entries = 0;
  for (const auto& file : processes[0].thread_files) {
    ThreadEventReader reader(file);
    records += reader.summary().call_sites.size();
    entries += reader.summary().trailer->events / 2;
  }
  EXPECT_GT(records, 0u);
  EXPECT_LE(records, entries);
}

// many_functions: main calls 70000 functions, each from its own line: 70000
// (caller, callee) pairs for a table of 1024 slots.
INSTANTIATE_TEST_SUITE_P(Examples, CallSitesOfExamples,
                         ::testing::Values(Program{"quicksort_threads", {"2000", "3"}, 4},
                                           Program{"cpp_features", {"4"}, 1},
                                           Program{"many_functions", {}, 1}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace parlot::e2e
