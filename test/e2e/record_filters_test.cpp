// Record-time filters end to end: PARLOT_EXCLUDE / PARLOT_INCLUDE (and
// `parlot record --exclude/--include`) on function names and object paths,
// PARLOT_MAX_DEPTH. The fixture's call trees are known exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class RecordFilters : public ::testing::TestWithParam<std::string> {
 protected:
  // The fixture's `basic` run traced with `env`; its per-thread trace text.
  std::vector<std::string> traced_threads(const std::vector<std::string>& env) {
    const RunResult r = run_traced({GetParam(), "basic"}, dir.path(), env);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const RunResult t = parlot_read({"trace", dir.path().string()});
    EXPECT_EQ(t.exit_status, 0) << t.err;
    return split_threads(t.out);
  }
  std::vector<format::TrailerPayload> trailers() {
    std::vector<format::TrailerPayload> out;
    for (const auto& process : open_trace_directory(dir.path())) {
      for (const auto& f : process.thread_files) {
        ThreadEventReader r(f);
        EXPECT_TRUE(r.summary().trailer.has_value()) << f;
        if (r.summary().trailer) out.push_back(*r.summary().trailer);
      }
    }
    return out;
  }
  TempDir dir;
};

TEST_P(RecordFilters, CalleesOfAnExcludedFunctionNestUnderItsCaller) {
  const auto threads = traced_threads({"PARLOT_EXCLUDE=level2;nothing*"});
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_THAT(threads[0], HasSubstr("recurse();"));
  const std::string worker =
      "worker() {\n"
      "  level1() {\n"
      "    level3();\n"
      "  } /* level1() */\n"
      "} /* worker() */\n";
  EXPECT_EQ(threads[1], worker);
  EXPECT_EQ(threads[2], worker);
  for (const auto& t : trailers()) {
    EXPECT_EQ(t.unmatched_exits, 0u);
    EXPECT_EQ(t.corrected_exits, 0u);
    EXPECT_EQ(t.dropped_events, 0u);
  }
}

TEST_P(RecordFilters, IncludeListKeepsOnlyMatchingFunctions) {
  const auto threads = traced_threads({"PARLOT_INCLUDE=level[13];recurse"});
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0],
            "recurse() {\n"
            "  recurse() {\n"
            "    recurse() {\n"
            "      recurse();\n"
            "    } /* recurse() */\n"
            "  } /* recurse() */\n"
            "} /* recurse() */\n");
  const std::string worker =
      "level1() {\n"
      "  level3();\n"
      "} /* level1() */\n";
  EXPECT_EQ(threads[1], worker);
  EXPECT_EQ(threads[2], worker);
}

TEST_P(RecordFilters, ObjectPathPatterns) {
  // Every traced function is in the fixture: excluding its path leaves
  // empty threads; including it changes nothing.
  const auto none = traced_threads({"PARLOT_EXCLUDE=dso:*/call_fixture*"});
  for (const auto& t : none) EXPECT_EQ(t, "");
  TempDir other;
  ASSERT_EQ(run_traced({GetParam(), "basic"}, other.path(), {"PARLOT_INCLUDE=dso:*/call_fixture*"})
                .exit_status,
            0);
  const auto all = split_threads(parlot_read({"trace", other.path().string()}).out);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_THAT(all[1], HasSubstr("level3();"));
}

TEST_P(RecordFilters, MaxDepthRecordsTheTopOfEachThreadAndCountsTheRest) {
  const auto threads = traced_threads({"PARLOT_MAX_DEPTH=2"});
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  recurse();\n"
            "} /* main() */\n");
  EXPECT_EQ(threads[1],
            "worker() {\n"
            "  level1();\n"
            "} /* worker() */\n");
  const auto t = trailers();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].dropped_events, 3u);  // recurse at depths 3, 4, 5
  EXPECT_EQ(t[1].dropped_events, 2u);  // level2, level3
  EXPECT_EQ(t[0].max_depth, 5u);       // the shadow stack still saw them
}

TEST_P(RecordFilters, TheFrontEndPassesItsFilters) {
  const RunResult r =
      run({PARLOT_FRONTEND_PATH, "record", "-d", dir.path().string(), "--exclude", "level2",
           "--exclude", "recurse", "--max-depth", "3", "--", GetParam(), "basic"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = split_threads(parlot_read({"trace", dir.path().string()}).out);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0], "main();\n");
  EXPECT_EQ(threads[1],
            "worker() {\n"
            "  level1() {\n"
            "    level3();\n"
            "  } /* level1() */\n"
            "} /* worker() */\n");
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RecordFilters, ::testing::ValuesIn(fixture_paths()),
                         [](const auto& info) {
                           return std::filesystem::path(info.param).filename().string();
                         });

TEST(RecordFiltersCpp, QualifiedNamesExcludeConstructorsAndDestructors) {
  const std::string program = examples_dir() + "/cpp_features";
  TempDir dir;
  const RunResult r =
      run_traced({program, "20"}, dir.path(), {"PARLOT_EXCLUDE=parlot_examples::*::Resource::*"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  EXPECT_THAT(t.out, Not(HasSubstr("Resource::")));
  // acquire() and release(), called by the constructor and destructor, now
  // nest right under level2() and level3().
  EXPECT_THAT(t.out, HasSubstr("parlot_examples::errors::level2(int) {\n"
                               "      parlot_examples::errors::acquire(int, int) {\n"));
  EXPECT_THAT(t.out, HasSubstr("parlot_examples::errors::release(int, int) {"));
}

}  // namespace
}  // namespace parlot::e2e
