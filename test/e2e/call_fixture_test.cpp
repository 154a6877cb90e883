// The fixture's exact call trees, per thread, for gcc -O0/-O2 and clang -O2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class CallFixture : public ::testing::TestWithParam<std::string> {
 protected:
  std::string fixture() const { return GetParam(); }
  /// `parlot-read trace` of the trace directory, one text per thread; empty
  /// (and the test failed) when parlot-read fails.
  std::vector<std::string> trace_threads() {
    const RunResult t = parlot_read({"trace", dir.path().string()});
    EXPECT_EQ(t.exit_status, 0) << t.err;
    return t.exit_status == 0 ? split_threads(t.out) : std::vector<std::string>{};
  }
  TempDir dir;
};

TEST_P(CallFixture, ThreadsGiveTheirExactCallTrees) {
  const RunResult r = run_traced({fixture(), "basic"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "basic done\n");
  EXPECT_EQ(r.err, "");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  recurse() {\n"
            "    recurse() {\n"
            "      recurse() {\n"
            "        recurse();\n"
            "      } /* recurse() */\n"
            "    } /* recurse() */\n"
            "  } /* recurse() */\n"
            "} /* main() */\n");
  const std::string worker =
      "worker() {\n"
      "  level1() {\n"
      "    level2() {\n"
      "      level3();\n"
      "    } /* level2() */\n"
      "  } /* level1() */\n"
      "} /* worker() */\n";
  EXPECT_EQ(threads[1], worker);
  EXPECT_EQ(threads[2], worker);
}

TEST_P(CallFixture, JsonLinesCarryDepthKindNameFileAndLine) {
  ASSERT_EQ(run_traced({fixture(), "basic"}, dir.path()).exit_status, 0);
  const RunResult t = parlot_read({"trace", dir.path().string(), "--format", "jsonl"});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  std::istringstream in(t.out);
  std::string line;
  std::vector<nlohmann::json> events;
  while (std::getline(in, line)) events.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(events.size(), 10u + 2 * 8u);
  const auto& first = events[0];
  EXPECT_EQ(first["kind"], "enter");
  EXPECT_EQ(first["function"], "main");
  EXPECT_EQ(first["depth"], 0);
  EXPECT_THAT(first["file"].get<std::string>(), HasSubstr("call_fixture.c"));
  EXPECT_GT(first["line"].get<int>(), 0);
  EXPECT_EQ(events[4]["function"], "recurse");
  EXPECT_EQ(events[4]["depth"], 4);  // main, then recurse at depths 1..4
  EXPECT_EQ(events[5]["kind"], "exit");
  EXPECT_EQ(events[5]["function"], "recurse");
  EXPECT_EQ(events[5]["depth"], 4);
  EXPECT_EQ(events[9]["function"], "main");
  EXPECT_EQ(events[9]["kind"], "exit");
  EXPECT_EQ(events[9]["depth"], 0);
  EXPECT_EQ(events[10]["function"], "worker");
  EXPECT_NE(events[10]["tid"], events[0]["tid"]);
  EXPECT_EQ(events[10]["pid"], events[0]["pid"]);
}

TEST_P(CallFixture, ExitDeepInTheStackClosesOpenFramesAfterAtexitHandlers) {
  const RunResult r = run_traced({fixture(), "exit"}, dir.path());
  EXPECT_EQ(r.exit_status, 3);  // the program's exit status is unchanged
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  exit_outer() {\n"
            "    exit_inner() {\n"
            "      at_exit_handler() {\n"
            "        level3();\n"
            "      } /* at_exit_handler() */\n"
            "    } /* exit_inner() */\n"
            "  } /* exit_outer() */\n"
            "} /* main() */\n");
  const RunResult info = parlot_read({"info", dir.path().string()});
  EXPECT_THAT(info.out, HasSubstr("3 frames open at the end"));
}

TEST_P(CallFixture, ForkChildWritesItsOwnWellNestedProcessDirectory) {
  const RunResult r = run_traced({fixture(), "fork"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "child status 0\n");
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u);
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u);
  // Parent first (it started first), then the child, whose stream re-enters
  // the frames open at the fork.
  EXPECT_EQ(threads[0], "main() {\n  fork_parent_side();\n} /* main() */\n");
  EXPECT_EQ(threads[1],
            "main() {\n"
            "  fork_parent_side() {\n"
            "    fork_child_side() {\n"
            "      level3();\n"
            "    } /* fork_child_side() */\n"
            "  } /* fork_parent_side() */\n"
            "} /* main() */\n");
  EXPECT_EQ(processes[1].metadata.ppid, processes[0].metadata.pid);
}

// A thread that made no event before its fork (its code is not
// instrumented) makes events in the child: the child's trace has them.
// Before, the child's first event looked for a parked trace, found none, and
// the thread went untraced for the rest of the child's life.
TEST_P(CallFixture, ForkFromAThreadWithoutEventsStillTracesTheChild) {
  const RunResult r = run_traced({fixture(), "quiet_fork"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "child status 0\n");
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 2u);
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0], "main();\n");  // the parent's main thread
  EXPECT_EQ(threads[1],
            "level1() {\n"
            "  level2() {\n"
            "    level3();\n"
            "  } /* level2() */\n"
            "} /* level1() */\n");
}

TEST_P(CallFixture, ForkChildBelowTheRecordDepthStaysWellNested) {
  // PARLOT_MAX_DEPTH=1: the child forks at depth 2 (main, fork_parent_side)
  // and re-enters only the frames whose entries were recorded.
  const RunResult r = run_traced({fixture(), "fork"}, dir.path(), {"PARLOT_MAX_DEPTH=1"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0], "main();\n");
  EXPECT_EQ(threads[1], "main();\n");
}

TEST_P(CallFixture, CompressedAndUncompressedRunsDecodeToIdenticalEvents) {
  TempDir raw;
  ASSERT_EQ(run_traced({fixture(), "loop"}, dir.path()).exit_status, 0);
  ASSERT_EQ(run_traced({fixture(), "loop"}, raw.path(), {"PARLOT_COMPRESS=0"}).exit_status, 0);
  const auto lz = open_trace_directory(dir.path());
  const auto nc = open_trace_directory(raw.path());
  ASSERT_EQ(lz.size(), 1u);
  ASSERT_EQ(nc.size(), 1u);
  EXPECT_TRUE(lz[0].metadata.compress);
  EXPECT_FALSE(nc[0].metadata.compress);
  const auto a = read_thread_events(lz[0]);
  const auto b = read_thread_events(nc[0]);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a, b);
  EXPECT_EQ(a[0].size(), 2u + 200000u * 6u);
  // The call-dense loop compresses by orders of magnitude.
  ThreadEventReader lz_reader(lz[0].thread_files[0]);
  ThreadEventReader nc_reader(nc[0].thread_files[0]);
  EXPECT_EQ(nc_reader.summary().trailer->raw_bytes, lz_reader.summary().trailer->raw_bytes);
  // Event data alone (the codec): three orders of magnitude.
  EXPECT_GT(lz_reader.summary().trailer->raw_bytes, 1000 * lz_reader.summary().payload_bytes);
  // The whole file, clock samples (every 1024 events) included.
  EXPECT_GT(lz_reader.summary().trailer->raw_bytes, 300 * lz_reader.summary().file_bytes);
}

// PARLOT_DISCARD=1 (benchmarks): the same events are counted, no event
// data reaches the file, and the reader says so instead of decoding.
TEST_P(CallFixture, DiscardCountsEventsButWritesNoData) {
  TempDir discarded;
  ASSERT_EQ(run_traced({fixture(), "loop"}, discarded.path(), {"PARLOT_DISCARD=1"}).exit_status, 0);
  const auto processes = open_trace_directory(discarded.path());
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_TRUE(processes[0].metadata.discard);
  ASSERT_EQ(processes[0].thread_files.size(), 1u);
  ThreadEventReader r(processes[0].thread_files[0]);
  ASSERT_TRUE(r.summary().trailer.has_value());
  EXPECT_EQ(r.summary().trailer->events, 2u + 200000u * 6u);
  // File header, a final block holding only the count, the trailer.
  EXPECT_EQ(r.summary().file_bytes, 64u + 16u + 8u + 16u + 80u);
  const RunResult info = parlot_read({"info", discarded.path().string()});
  EXPECT_EQ(info.exit_status, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("PARLOT_DISCARD"));
  const RunResult trace = parlot_read({"trace", discarded.path().string()});
  EXPECT_EQ(trace.exit_status, 2);  // no event data to decode: reported, the rest shown
  EXPECT_THAT(trace.err, HasSubstr("event data ends after 0 of 1200002 events"));
}

TEST_P(CallFixture, NormalProgramsNeedNoStackCorrection) {
  ASSERT_EQ(run_traced({fixture(), "basic"}, dir.path()).exit_status, 0);
  const auto processes = open_trace_directory(dir.path());
  for (const auto& f : processes[0].thread_files) {
    ThreadEventReader r(f);
    ASSERT_TRUE(r.summary().trailer.has_value());
    EXPECT_EQ(r.summary().trailer->corrected_exits, 0u) << f;
    EXPECT_EQ(r.summary().trailer->unmatched_exits, 0u) << f;
    EXPECT_EQ(r.summary().trailer->dropped_events, 0u) << f;
    EXPECT_EQ(r.summary().trailer->closed_at_end, 0u) << f;
  }
}

// SIGKILL: the files stay readable up to the last block written, names
// included, and the loss per thread is bounded in time: what the thread did
// up to one flush interval (PARLOT_FLUSH_MS, a coarse clock) before the
// kill is on disk, but for up to 16,384 events between two looks at the
// clock, one pending match (65,535 events) and one zero-elimination group.
// The fixture reports its calls 100 ms (two intervals) before the kill.
TEST_P(CallFixture, SigkillLosesAtMostOneFlushInterval) {
  constexpr int kRunMs = 600, kFlushMs = 50;
  const RunResult r = run_traced({fixture(), "killed", std::to_string(kRunMs)}, dir.path(),
                                 {"PARLOT_FLUSH_MS=" + std::to_string(kFlushMs)});
  ASSERT_EQ(r.signal, SIGKILL) << r.err;
  long calls = 0, before = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "calls %ld before %ld", &calls, &before), 2) << r.out;
  // main and kill_self, 6 per level1 call, and elapsed_ms (instrumented too:
  // 2 events) after every 1,000 calls.
  const std::uint64_t made =
      2 + 6 * static_cast<std::uint64_t>(calls) + 2 * static_cast<std::uint64_t>(calls / 1000);
  const std::uint64_t made_before = 1 + 6 * static_cast<std::uint64_t>(before);

  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_GE(processes[0].function_addresses.size(), 5u) << "names written before the kill";
  ThreadEventReader reader(processes[0].thread_files.at(0));
  EXPECT_FALSE(reader.summary().trailer.has_value());
  std::uint64_t got = 0;
  for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) got += b.size();
  const std::uint64_t in_flight = 16384 + 65535 + 4;
  EXPECT_LE(got, made);
  EXPECT_GE(got + in_flight, made_before)
      << "of the " << made_before << " events made 100 ms before the kill, " << got
      << " are on disk";
  std::printf(
      "[ figures  ] SIGKILL after %d ms, PARLOT_FLUSH_MS=%d: %llu of %llu events "
      "recovered, %llu lost; %llu events made until 100 ms before the kill\n",
      kRunMs, kFlushMs, static_cast<unsigned long long>(got), static_cast<unsigned long long>(made),
      static_cast<unsigned long long>(made - got), static_cast<unsigned long long>(made_before));

  // Millions of events: check the names through stats, not the full trace.
  const RunResult t = parlot_read({"stats", dir.path().string()});
  EXPECT_EQ(t.exit_status, 0) << t.err;  // killed: not damage, said once on stderr
  EXPECT_EQ(t.err.find("parlot-read: 1 thread cut short"), 0u) << t.err;
  EXPECT_THAT(t.out, HasSubstr("  main -> level1\n"));
  EXPECT_THAT(t.out, HasSubstr("  level2 -> level3\n"));
}

// Fatal signals and _exit: the process ends exactly as it would untraced,
// and the trace is complete: every thread's data, the open frames closed,
// and for a signal the crash record with the faulting thread's real stack.
struct Death {
  const char* mode;
  int signal;        // the signal the process dies of, or 0
  int exit_status;   // else its exit status
  const char* name;  // crash record name, or nullptr
};

class FixtureDeath : public ::testing::TestWithParam<std::tuple<std::string, Death>> {};

TEST_P(FixtureDeath, TraceIsCompleteAndTheProcessEndsAsUntraced) {
  const auto& [fixture, death] = GetParam();
  TempDir dir;
  const RunResult plain = run({fixture, death.mode});
  const RunResult r = run_traced({fixture, death.mode}, dir.path());
  EXPECT_EQ(r.signal, death.signal) << r.err;
  EXPECT_EQ(plain.signal, death.signal);
  if (death.signal == 0) {
    EXPECT_EQ(r.exit_status, death.exit_status);
    EXPECT_EQ(plain.exit_status, death.exit_status);
  }
  EXPECT_EQ(r.out, plain.out);

  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;  // complete: no file was cut short
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 1u) << t.out;
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  die_outer() {\n"
            "    die_inner();\n"
            "  } /* die_outer() */\n"
            "} /* main() */\n");
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  ThreadEventReader reader(processes[0].thread_files.at(0));
  ASSERT_TRUE(reader.summary().trailer.has_value());
  EXPECT_EQ(reader.summary().trailer->closed_at_end, 3u);
  if (death.name == nullptr) {
    EXPECT_FALSE(processes[0].crash.has_value());
    return;
  }
  ASSERT_TRUE(processes[0].crash.has_value());
  const CrashRecord& crash = *processes[0].crash;
  EXPECT_EQ(crash.name, death.name);
  EXPECT_EQ(crash.signal, death.signal);
  EXPECT_FALSE(crash.in_tracer);
  // The real stack, from the signal context: the functions that were
  // running, innermost first, then the C library's start-up frames.
  const RunResult info = parlot_read({"info", dir.path().string()});
  EXPECT_THAT(info.out, HasSubstr(std::string("crashed: ") + death.name));
  const std::string stack = info.out.substr(info.out.find("crashed: "));
  const auto inner = stack.find(" die_inner");
  const auto outer = stack.find(" die_outer");
  const auto main_frame = stack.find(" main");
  EXPECT_NE(inner, std::string::npos) << stack;
  EXPECT_LT(inner, outer) << stack;
  EXPECT_LT(outer, main_frame) << stack;
  EXPECT_THAT(t.out, HasSubstr(std::string("# crashed: ") + death.name));
}

std::vector<std::tuple<std::string, Death>> deaths() {
  const Death all[] = {
      {"segv", SIGSEGV, -1, "SIGSEGV"},
      {"abort", SIGABRT, -1, "SIGABRT"},
      {"term", SIGTERM, -1, nullptr},
      {"_exit", 0, 4, nullptr},
  };
  std::vector<std::tuple<std::string, Death>> v;
  for (const auto& f : fixture_paths()) {
    for (const auto& d : all) v.emplace_back(f, d);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Deaths, FixtureDeath, ::testing::ValuesIn(deaths()), [](const auto& info) {
  std::string mode = std::get<1>(info.param).mode;
  if (mode[0] == '_') mode = "underscore" + mode;
  return std::filesystem::path(std::get<0>(info.param)).filename().string() + "_" + mode;
});

// The program's own SIGSEGV handler, installed after tracing started, runs
// as it would untraced; it ends the process with _exit, which completes the
// trace.
TEST_P(CallFixture, ProgramsOwnSignalHandlerStillRuns) {
  const RunResult r = run_traced({fixture(), "handler"}, dir.path());
  EXPECT_EQ(r.exit_status, 7) << r.err;
  EXPECT_EQ(r.out, "handled\n");
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  // The handler runs nested under the frame the signal interrupted.
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  die_outer() {\n"
            "    die_inner() {\n"
            "      own_segv_handler();\n"
            "    } /* die_inner() */\n"
            "  } /* die_outer() */\n"
            "} /* main() */\n");
}

// Disk full, as a file-size limit: the trace's write fails with EFBIG (no
// SIGXFSZ kills the program), one line names the file, that thread's trace
// stops at its last complete block, and the program runs on with its
// output and exit status unchanged.
TEST_P(CallFixture, FileSizeLimitStopsTheThreadsTraceNotTheProgram) {
  const RunResult plain = run({fixture(), "loop"});
  const RunResult r = run_traced({"sh", "-c", "ulimit -f 16 && exec \"$0\" loop", fixture()},
                                 dir.path(), {"PARLOT_COMPRESS=0", "PARLOT_BUFFER_KB=4"});
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  // The thread's file is named; a file over the limit stops that thread's
  // trace only (issue 8, case 10).
  EXPECT_THAT(r.err, HasSubstr("parlot: cannot write '" + dir.path().string()));
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // What was written before the limit stays readable.
  const RunResult info = parlot_read({"info", dir.path().string()});
  EXPECT_NE(info.signal, SIGSEGV);
}

// The trace directory deleted while the program runs: one line, the program
// unaffected.
TEST_P(CallFixture, DirectoryDeletedMidRunLeavesTheProgramAlone) {
  const RunResult plain = run({fixture(), "slow"});
  const RunResult r = run_traced({"sh", "-c", "\"$0\" slow & sleep 0.1; rm -rf \"$1\"; wait $!",
                                  fixture(), dir.path().string()},
                                 dir.path());
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, plain.out);
  EXPECT_THAT(r.err, HasSubstr("parlot: cannot write the trace in"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_P(CallFixture, StatsCountCallsAndEdges) {
  ASSERT_EQ(run_traced({fixture(), "basic"}, dir.path()).exit_status, 0);
  const RunResult s = parlot_read({"stats", dir.path().string()});
  ASSERT_EQ(s.exit_status, 0) << s.err;
  EXPECT_THAT(s.out, HasSubstr("             4  recurse\n"));
  EXPECT_THAT(s.out, HasSubstr("             2  level1\n"));
  EXPECT_THAT(s.out, HasSubstr("             3  recurse -> recurse\n"));
  EXPECT_THAT(s.out, HasSubstr("             2  worker -> level1\n"));
  EXPECT_THAT(s.out, HasSubstr("             2  <thread> -> worker\n"));
  EXPECT_THAT(s.out, HasSubstr("             1  <thread> -> main\n"));
  const RunResult by_thread = parlot_read({"stats", dir.path().string(), "--by", "thread"});
  EXPECT_THAT(by_thread.out, HasSubstr("             1  level1\n"));
}

TEST_P(CallFixture, UnwritableDirectoryLeavesTheProgramAlone) {
  const RunResult r = run_traced({fixture(), "exit"}, "/proc/parlot-cannot-exist/x");
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_THAT(r.err,
              HasSubstr("parlot: cannot create trace directory '/proc/parlot-cannot-exist/x'"));
  EXPECT_THAT(r.err, HasSubstr("tracing is off"));
  // One line, not one per thread or event.
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(LinkedRuntime, LinkingWithLibparlotrtTracesWithoutPreload) {
  TempDir dir;
  const RunResult r = run({PARLOT_LINKED_FIXTURE, "basic"}, {"PARLOT_DIR=" + dir.path().string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 3u) << t.out;
  EXPECT_THAT(threads[0], HasSubstr("main() {\n  recurse() {\n"));
  EXPECT_THAT(threads[1], HasSubstr("worker() {\n  level1() {\n"));
}

INSTANTIATE_TEST_SUITE_P(Compilers, CallFixture, ::testing::ValuesIn(fixture_paths()),
                         [](const auto& info) {
                           return std::filesystem::path(info.param).filename().string();
                         });

}  // namespace
}  // namespace parlot::e2e
