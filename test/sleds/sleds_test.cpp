// Sled tracing (docs/DESIGN.md "Sleds"): programs built with
// -fpatchable-function-entry=5 and traced by patching their sleds give the
// trace their -finstrument-functions build gives; the sleds are patched in
// objects dlopened later, while other threads run, and on and off with
// parlot_start/parlot_stop; PARLOT_START=off leaves the code as built.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

const std::string kBin = PARLOT_SLED_BIN_DIR;

// The call trees of `trace --no-sites`, without the "# process/thread"
// header lines (pids differ between runs).
std::string call_trees(const std::filesystem::path& dir) {
  const RunResult r = parlot_read({"trace", dir.string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) != 0) out += line + "\n";
  }
  return out;
}

// Runs `program` `args` traced into a fresh directory of `tmp` and returns
// its call trees; `env` added to the environment.
std::string traced_trees(const TempDir& tmp, const std::string& name, const std::string& program,
                         const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {}) {
  const auto dir = tmp.path() / name;
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run_traced(argv, dir, env);
  EXPECT_EQ(r.exit_status, 0) << program << ": " << r.err;
  return call_trees(dir);
}

// The sled build and the hook build of `base` (built next to this test)
// give the same call trees, which are not empty.
void expect_same_trees(const std::string& base, const std::vector<std::string>& args) {
  TempDir tmp;
  const std::string sled = traced_trees(tmp, "sled", kBin + "/" + base + "_sled", args);
  const std::string hook = traced_trees(tmp, "hook", kBin + "/" + base + "_hook", args);
  EXPECT_NE(hook.find('{'), std::string::npos) << hook;
  // The first line that differs, not the whole traces.
  std::istringstream a(sled), b(hook);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) break;
    ASSERT_TRUE(more_a && more_b && la == lb)
        << base << " line " << line << ": sled \"" << (more_a ? la : "<end>") << "\", hook \""
        << (more_b ? lb : "<end>") << "\"";
  }
}

TEST(Sleds, FixtureTraceIsTheHookBuildsEventForEvent) {
  expect_same_trees("sled_fixture_gcc", {"basic"});
}

TEST(Sleds, ClangFixtureTraceIsTheHookBuildsEventForEvent) {
  if (!PARLOT_SLED_HAVE_CLANG) GTEST_SKIP() << "no clang";
  expect_same_trees("sled_fixture_clang", {"basic"});
}

TEST(Sleds, ExamplesTracesAreTheHookBuildsEventForEvent) {
  expect_same_trees("sled_quicksort_gcc", {});
  expect_same_trees("sled_cg_gcc", {});
}

TEST(Sleds, ExceptionsUnwindThroughSledTracedFrames) {
  expect_same_trees("sled_fixture_cxx_gcc", {});
}

TEST(Sleds, LongjmpThroughSledTracedFrames) {
  expect_same_trees("sled_fixture_gcc", {"longjmp"});
  TempDir tmp;
  const std::string trees = traced_trees(tmp, "t", kBin + "/sled_fixture_gcc_sled", {"longjmp"});
  // after_jump nests in jump_outer, after the frames the longjmp left.
  EXPECT_NE(trees.find("  } /* jump_mid() */\n    after_jump();\n  } /* jump_outer() */"),
            std::string::npos)
      << trees;
}

TEST(Sleds, DlopenedLibrarysSledsArePatched) {
  TempDir tmp;
  const std::string trees =
      traced_trees(tmp, "t", kBin + "/sled_fixture_gcc_sled", {"dlopen", PARLOT_SLED_PLUGIN});
  EXPECT_NE(trees.find("    plugin_entry() {\n      plugin_inner();\n    } /* plugin_entry() */"),
            std::string::npos)
      << trees;
}

// The code of level1, level2 and main as the fixture prints it.
std::string code_bytes(const std::string& program, bool traced, const TempDir& tmp,
                       const std::vector<std::string>& env) {
  const RunResult r =
      traced ? run_traced({program, "text"}, tmp.path() / "t", env) : run({program, "text"}, env);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return r.out;
}

TEST(Sleds, StartOffLeavesTheCodeAsBuilt) {
  for (const std::string compiler : {"gcc", "clang"}) {
    if (compiler == "clang" && !PARLOT_SLED_HAVE_CLANG) continue;
    const std::string program = kBin + "/sled_fixture_" + compiler + "_sled";
    TempDir tmp;
    const std::string plain = code_bytes(program, false, tmp, {});
    EXPECT_EQ(code_bytes(program, true, tmp, {"PARLOT_START=off"}), plain) << compiler;
    // Traced from the start, the sleds are calls (E8).
    const std::string on = code_bytes(program, true, tmp, {});
    EXPECT_NE(on, plain) << compiler;
    EXPECT_NE(on.find("level1 e8 90 90 90 90"), std::string::npos) << on;
  }
}

TEST(Sleds, StartAndStopRecordTheCallsMadeWhileOn) {
  TempDir tmp;
  const std::string trees =
      traced_trees(tmp, "t", kBin + "/sled_fixture_gcc_sled", {"toggle"}, {"PARLOT_START=off"});
  // Calls begun while on, whole; none of those made while off; main was
  // entered before tracing started: not recorded.
  const std::string expected =
      "phase_b() {\n  level1() {\n    level2() {\n      level3();\n    } /* level2() */\n  } /* "
      "level1() */\n} /* phase_b() */\nphase_d() {\n  level1() {\n    level2() {\n      "
      "level3();\n    } /* level2() */\n  } /* level1() */\n} /* phase_d() */\n";
  EXPECT_EQ(trees, expected);
}

// phase_b's call tree alone: what the toggle tests expect.
const std::string kPhaseB =
    "phase_b() {\n  level1() {\n    level2() {\n      level3();\n    } /* level2() */\n  } /* "
    "level1() */\n} /* phase_b() */\n";

TEST(Sleds, InfoListsTheSwitchesAndTheIntervalsTracingWasOn) {
  TempDir tmp;
  const auto dir = tmp.path() / "t";
  const RunResult r =
      run_traced({kBin + "/sled_fixture_gcc_sled", "toggle"}, dir, {"PARLOT_START=off"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult info = parlot_read({"info", dir.string()});
  ASSERT_EQ(info.exit_status, 0) << info.err;
  // on, off, on: three switches in main's trace; on at its first event, off
  // after phase_b's 8 events, on again there (phase_c not recorded).
  EXPECT_NE(info.out.find("tracing switched on at "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("(thread #0, before its event 0)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("tracing switched off at "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("(thread #0, before its event 8)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("tracing on in 2 intervals: ["), std::string::npos) << info.out;
  EXPECT_NE(info.out.find(", end]"), std::string::npos) << info.out;
}

TEST(Sleds, ToggleSignalSwitchesTracingOnAndOff) {
  TempDir tmp;
  const auto dir = tmp.path() / "t";
  const RunResult r =
      run_traced({kBin + "/sled_fixture_gcc_sled", "signal"}, dir, {"PARLOT_START=off"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(call_trees(dir), kPhaseB);
  const RunResult info = parlot_read({"info", dir.string()});
  EXPECT_NE(info.out.find("tracing on in 1 interval: ["), std::string::npos) << info.out;
}

TEST(Sleds, HookBuildStartAndStopRecordTheCallsMadeWhileOn) {
  TempDir tmp;
  const std::string trees =
      traced_trees(tmp, "t", kBin + "/sled_fixture_gcc_hook", {"toggle"}, {"PARLOT_START=off"});
  EXPECT_NE(trees.find("phase_b() {"), std::string::npos) << trees;
  EXPECT_NE(trees.find("phase_d() {"), std::string::npos) << trees;
  EXPECT_EQ(trees.find("phase_a"), std::string::npos) << trees;
  EXPECT_EQ(trees.find("phase_c"), std::string::npos) << trees;
}

TEST(Sleds, ThreadsRunWhileTheirSledsArePatchedOnAndOff) {
  for (const std::string compiler : {"gcc", "clang"}) {
    if (compiler == "clang" && !PARLOT_SLED_HAVE_CLANG) continue;
    TempDir tmp;
    const auto dir = tmp.path() / "t";
    const RunResult r =
        run_traced({kBin + "/sled_fixture_" + compiler + "_sled", "threads", "400"}, dir);
    ASSERT_EQ(r.exit_status, 0) << compiler << ": " << r.err;
    EXPECT_GT(std::stol(r.out), 0);
    // Every thread's events read back well nested (the reader checks).
    const RunResult info = parlot_read({"info", dir.string()});
    EXPECT_EQ(info.exit_status, 0) << info.err;
    const std::string trees = call_trees(dir);
    EXPECT_NE(trees.find("level1() {"), std::string::npos) << compiler;
  }
}

}  // namespace
}  // namespace parlot::e2e
