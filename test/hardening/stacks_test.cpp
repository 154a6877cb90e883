// Cases 8 and 9: unusual stacks and scale. makecontext/swapcontext
// coroutines; recursion 100,000 frames deep; 2,000 short-lived threads; a
// program with its own instrumented malloc; instrumented static
// constructors and destructors.
#include <map>
#include <set>
#include <sstream>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;

class Coroutines : public HardeningTest {};

// The coroutine's stack (.bss) lies below the main thread's stack, so its
// frames look nested in whatever resumed it. What the trace shows: co_body
// and step(1) under the first resume; when the coroutine yields, resume()
// returns and its exit closes co_body and yield (corrected); the second
// resume shows step(2) and yield directly under it (co_body is not
// re-entered, its frame was closed); the third shows step(3), and co_body's
// final exit hook matches no open frame (ignored).
TEST_P(Coroutines, CoroutineOnALowerStackNestsUnderResume) {
  const RunResult r = run_traced({prog("coroutines"), "low"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "result 3\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main{ run_coroutines{ resume{ co_body{step yield} }"
                                       " resume{step yield} resume{step} } }"));
}

// The coroutine's stack lies above the thread's stack: entering it looks
// like returns to the shadow stack (docs/DESIGN.md, Known limits). Only
// what is guaranteed is checked: well nested (parlot-read accepts it), the
// program's calls are all there. What it shows today:
//   co_worker { run_coroutines { resume } }     closed when co_body starts
//   co_body { step yield { resume } step yield { resume } step }
TEST_P(Coroutines, CoroutineOnAHigherStackIsAtLeastWellNested) {
  const RunResult r = run_traced({prog("coroutines"), "high"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "result 3\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("main"));
  std::map<std::string, int> calls;
  for (const Event& e : parse_text(threads[1].body)) calls[e.name] += e.enter ? 1 : 0;
  EXPECT_EQ(calls["co_worker()"], 1);
  EXPECT_EQ(calls["run_coroutines()"], 1);
  EXPECT_EQ(calls["co_body()"], 1);
  EXPECT_EQ(calls["step()"], 3);
  EXPECT_EQ(calls["yield()"], 2);
  EXPECT_EQ(calls["resume()"], 3);
  std::printf("[ NOTE     ] coroutine above the thread stack:\n%s", threads[1].body.c_str());
}

PARLOT_HARDENING_VARIANTS_OF(Coroutines);

class Scale : public HardeningTest {};

TEST_P(Scale, Recursion100000FramesDeep) {
  const int depth = 100000;
  const RunResult r = run_traced({prog("deep_recursion"), std::to_string(depth)}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "depth 100000\n");
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  const auto threads = named_events(processes[0]);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0], tree("main"));
  // deep_worker { recurse x 100000 nested { leaf } }, exactly.
  const Events& e = threads[1];
  ASSERT_EQ(e.size(), 2u * (depth + 2));
  EXPECT_EQ(e[0], (Event{true, "deep_worker()"}));
  for (int i = 1; i <= depth; ++i) ASSERT_EQ(e[i], (Event{true, "recurse()"})) << i;
  EXPECT_EQ(e[depth + 1], (Event{true, "leaf()"}));
  EXPECT_EQ(e[depth + 2], (Event{false, "leaf()"}));
  for (int i = 0; i < depth; ++i) ASSERT_EQ(e[depth + 3 + i], (Event{false, "recurse()"})) << i;
  EXPECT_EQ(e.back(), (Event{false, "deep_worker()"}));
  ThreadEventReader reader(processes[0].thread_files[1]);
  ASSERT_TRUE(reader.summary().trailer.has_value());
  EXPECT_EQ(reader.summary().trailer->max_depth, static_cast<std::uint64_t>(depth + 2));
  EXPECT_EQ(reader.summary().trailer->corrected_exits, 0u);
  EXPECT_EQ(reader.summary().trailer->dropped_events, 0u);
  const RunResult stats = parlot_read({"stats", dir.path().string()});
  ASSERT_EQ(stats.exit_status, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr("        100000  recurse\n"));
  EXPECT_THAT(stats.out, HasSubstr("         99999  recurse -> recurse\n"));
}

// `parlot-read trace` indents two spaces per level up to depth 256, then
// writes "[depth N] " instead (as `stacks` does): the text of a thread that
// died of a stack overflow grows with its events, not with their depth
// squared (4.6 GB in 120 s for 200,000 frames before).
TEST_P(Scale, TraceTextStopsIndentingAtDepth256) {
  const int depth = 1000;
  const RunResult r = run_traced({prog("deep_recursion"), std::to_string(depth)}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 2u);
  std::vector<std::string> lines;
  std::istringstream text(threads[1].body);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  // deep_worker at depth 0, recurse at 1..1000, leaf at 1001; then the
  // closing lines in reverse: depth d closes on line 2002 - d.
  ASSERT_EQ(lines.size(), 2u * (depth + 1) + 1) << threads[1].body.substr(0, 2000);
  const std::string spaces(512, ' ');
  EXPECT_EQ(lines[0], "deep_worker() {");
  EXPECT_EQ(lines[1], "  recurse() {");
  EXPECT_EQ(lines[256], spaces + "recurse() {");
  EXPECT_EQ(lines[257], spaces + "[depth 257] recurse() {");
  EXPECT_EQ(lines[depth], spaces + "[depth 1000] recurse() {");
  EXPECT_EQ(lines[depth + 1], spaces + "[depth 1001] leaf();");
  EXPECT_EQ(lines[depth + 2], spaces + "[depth 1000] } /* recurse() */");
  EXPECT_EQ(lines[2 * depth + 1 - 256], spaces + "[depth 257] } /* recurse() */");
  EXPECT_EQ(lines[2 * depth + 2 - 256], spaces + "} /* recurse() */");
  EXPECT_EQ(lines.back(), "} /* deep_worker() */");
  std::size_t longest = 0;
  for (const auto& line : lines) longest = std::max(longest, line.size());
  EXPECT_LE(longest, spaces.size() + 40);
}

// 2,000 threads, 16 alive at a time: thread i runs
// worker { step_a { leaf } (i % 4 + 1) x step_b { leaf } }.
TEST_P(Scale, TwoThousandShortLivedThreads) {
  const int count = 2000;
  const RunResult r = run_traced({prog("many_threads"), std::to_string(count)}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "threads 2000\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), count + 1u);
  EXPECT_EQ(threads[0].body, tree_text("main"));
  std::map<std::string, int> shapes;
  std::set<std::uint64_t> tids, indices;
  for (std::size_t i = 1; i < threads.size(); ++i) {
    shapes[threads[i].body]++;
    tids.insert(threads[i].tid);
    indices.insert(threads[i].index);
  }
  std::map<std::string, int> want;
  std::string shape[5];
  for (int k = 1; k <= 4; ++k) {
    std::string spec = "worker{ step_a{leaf}";
    for (int j = 0; j < k; ++j) spec += " step_b{leaf}";
    shape[k] = tree_text(spec + " }");
    want[shape[k]] = count / 4;
  }
  EXPECT_EQ(shapes, want);
  // Threads are numbered by creation: the i-th thread main created is #i.
  for (std::size_t i = 1; i < threads.size(); ++i) {
    ASSERT_EQ(threads[i].index, i);
    ASSERT_EQ(threads[i].body, shape[(i - 1) % 4 + 1]) << "thread #" << i;
  }
  EXPECT_EQ(tids.size(), static_cast<std::size_t>(count));
  EXPECT_EQ(indices.size(), static_cast<std::size_t>(count));
  EXPECT_THAT(info(), HasSubstr("total: 2001 threads"));
}

// malloc, calloc, realloc, free (and the aligned variants) are the
// program's own, instrumented: every allocation in the process comes here,
// including stdio's buffer inside printf.
TEST_P(Scale, ProgramWithItsOwnInstrumentedMalloc) {
  const RunResult r = run_traced({prog("own_malloc")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "ok 1 frees 2\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body,
            tree_text("main{ run_allocs{ malloc{bump} calloc{bump} realloc{bump} free free }"
                      " report{ malloc{bump} } }"));
}

// The first event runs inside the program's malloc, under its lock: the
// runtime must not allocate there (it once started its flusher thread
// there, and pthread_create's calloc waited for that lock forever).
TEST_P(Scale, FirstEventInsideAMallocThatHoldsALock) {
  RunOptions options;
  options.timeout_s = 30;
  const RunResult r = run_traced({prog("malloc_lock")}, dir.path(), options);
  ASSERT_FALSE(r.timed_out) << "the program hung";
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "allocations 1\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_THAT(threads[0].body, ::testing::StartsWith("count_allocation();\n"));
}

// Compiler-generated wrappers of the global constructors (instrumented by
// gcc, not by clang) are left out of the comparison.
bool compiler_generated(const std::string& name) {
  return name.starts_with("_GLOBAL__sub_I_") ||
         name.starts_with("__static_initialization_and_destruction") ||
         name.starts_with("__cxx_global_var_init") || name.starts_with("__tcf_");
}

TEST_P(Scale, StaticConstructorsAndDestructorsOfCppObjects) {
  const RunResult r = run_traced({prog("static_init")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "ids 1 2 3 3\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  const std::string ctor = "Tracked::Tracked(int){note(int)}";
  const std::string dtor = "Tracked::~Tracked(){note(int)}";
  EXPECT_EQ(render(strip_frames(parse_text(threads[0].body), compiler_generated)),
            tree_text(ctor + " " + ctor + " main{ use_local{" + ctor + "} use_local } " + dtor +
                      " " + dtor + " " + dtor));
}

TEST_P(Scale, ConstructorAndDestructorAttributesInC) {
  const RunResult r = run_traced({prog("ctor_attr")}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "main\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(threads[0].body, tree_text("init_early{leaf} init_late{leaf} main{leaf}"
                                       " fini_late{leaf} fini_early{leaf}"));
}

PARLOT_HARDENING_VARIANTS_OF(Scale);

}  // namespace
}  // namespace parlot::hardening
