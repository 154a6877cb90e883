// Case 5: signal handlers that run instrumented code, synchronous (raise)
// and asynchronous (SIGPROF and SIGALRM every 50 us over a call-dense loop,
// so that hooks are interrupted inside hooks), on the thread's stack and on
// a sigaltstack. Handler calls must nest under the interrupted frame or be
// counted as dropped; the rest of the trace must be untouched.
#include <map>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;

class Signals : public HardeningTest {};

TEST_P(Signals, RaisedSignalsHandlerNestsUnderTheRaisingFrame) {
  const RunResult r = run_traced({prog("signals"), "raise"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "raised\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ s_outer{ s_inner{ on_usr1{leaf} leaf } } }"));
}

TEST_P(Signals, HandlerOnAnAltstackBelowTheStackNests) {
  const RunResult r = run_traced({prog("signals"), "altstack_low"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "altstack below the main stack\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ s_outer{ s_inner{ on_usr1{leaf} leaf } } }"));
}

// Was failing before the shadow stack knew the thread stack bounds.
//
// ShadowStack::enter pops every open frame below the handler's stack
// pointer: the handler becomes a root of the thread, and the interrupted
// function's later calls land at depth 0 as well (docs/DESIGN.md, Known
// limits).
TEST_P(Signals, HandlerOnAnAltstackAboveTheStackNests) {
  const RunResult r = run_traced({prog("signals"), "altstack_high"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "altstack above the thread stack\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main"));
  // Nested under the interrupted frame, or (if the runtime cannot tell)
  // dropped and counted.
  const std::string nested = tree_text("alt_worker{ s_outer{ s_inner{ on_usr1{leaf} leaf } } }");
  const std::string dropped = tree_text("alt_worker{ s_outer{ s_inner{ leaf } } }");
  if (threads[1].body == dropped) {
    EXPECT_THAT(info(), HasSubstr("events dropped"));
  } else {
    EXPECT_EQ(threads[1].body, nested);
  }
}

// SIGPROF (ITIMER_PROF) and SIGALRM (ITIMER_REAL) every 50 us while
// main { run_loop { N x level1 { level2 { level3 } } } } runs. Each handler
// invocation is on_tick { tick_leaf }: 4 hook calls, recorded or dropped
// together (a handler that interrupts a hook finds the thread busy).
TEST_P(Signals, TimerSignalsInterruptingHooksKeepTheTraceExact) {
  const int n = 1000000;
  const RunResult r = run_traced({prog("signals"), "timer", std::to_string(n)}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  long long sum = 0, ticks = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "sum %lld ticks %lld", &sum, &ticks), 2) << r.out;
  long long want = 0;
  for (int i = 0; i < n; ++i) want += (i & 7) + 2;  // level3: i & 7, +1 in level2 and level1
  EXPECT_EQ(sum, want);                             // the program's own result is unchanged
  EXPECT_GT(ticks, 0);

  // Well nested (parlot-read rejects anything else) ...
  const RunResult stats = parlot_read({"stats", dir.path().string()});
  ASSERT_EQ(stats.exit_status, 0) << stats.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  ASSERT_EQ(processes[0].thread_files.size(), 1u);
  ThreadEventReader reader(processes[0].thread_files[0]);
  ASSERT_TRUE(reader.summary().trailer.has_value());
  const std::uint64_t dropped = reader.summary().trailer->dropped_events;
  Events events = named_events(processes[0]).at(0);

  // ... every recorded handler nests under a frame of the loop (or under
  // another handler it interrupted) and calls tick_leaf once ...
  std::vector<std::string> stack;
  std::map<std::string, int> parents;
  int recorded = 0, outermost = 0, leaves = 0;
  for (const Event& e : events) {
    if (!e.enter) {
      stack.pop_back();
      continue;
    }
    const std::string parent = stack.empty() ? "<root>" : stack.back();
    if (e.name == "on_tick()") {
      ++recorded;
      if (parent != "on_tick()" && parent != "tick_leaf()") {
        ++outermost;
        ++parents[parent];
      }
    } else if (e.name == "tick_leaf()") {
      ++leaves;
      EXPECT_EQ(parent, "on_tick()");
    }
    stack.push_back(e.name);
  }
  EXPECT_EQ(leaves, recorded);
  for (const auto& [parent, count] : parents) {
    EXPECT_TRUE(parent == "main()" || parent == "run_loop()" || parent == "level1()" ||
                parent == "level2()" || parent == "level3()")
        << count << " handler(s) under " << parent;
  }
  if (dropped != 0) {
    EXPECT_THAT(info(), HasSubstr(std::to_string(dropped) + " events dropped"));
  }
  // ... each handler invocation is either recorded or dropped as a whole ...
  EXPECT_EQ(dropped % 4, 0u);
  EXPECT_EQ(recorded + static_cast<long long>(dropped / 4), ticks)
      << recorded << " recorded, " << dropped << " hook calls dropped";
  std::printf("[ NOTE     ] %lld ticks: %d handlers recorded, %llu dropped (hook interrupted)\n",
              ticks, recorded, static_cast<unsigned long long>(dropped / 4));

  // ... and without the handlers the trace is exactly the loop's.
  EXPECT_EQ(remove_subtrees(events, "on_tick()"), static_cast<std::size_t>(outermost));
  const Events iteration = tree("level1{level2{level3}}");
  ASSERT_EQ(events.size(), 4 + iteration.size() * n);
  EXPECT_EQ(events[0], (Event{true, "main()"}));
  EXPECT_EQ(events[1], (Event{true, "run_loop()"}));
  std::size_t mismatches = 0;
  for (int i = 0; i < n && mismatches < 5; ++i) {
    for (std::size_t k = 0; k < iteration.size(); ++k) {
      if (events[2 + i * iteration.size() + k] != iteration[k]) {
        ADD_FAILURE() << "iteration " << i << " event " << k;
        ++mismatches;
        break;
      }
    }
  }
  EXPECT_EQ(events[events.size() - 2], (Event{false, "run_loop()"}));
  EXPECT_EQ(events.back(), (Event{false, "main()"}));
}

PARLOT_HARDENING_VARIANTS_OF(Signals);

}  // namespace
}  // namespace parlot::hardening
