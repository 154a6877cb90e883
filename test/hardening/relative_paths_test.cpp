// Relative names, as in every development tree: shared objects found
// through a relative LD_LIBRARY_PATH or dlopened by a relative path keep
// their functions' names after the program changes directory.
// relative_objects.c says what the program does.
#include <algorithm>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class RelativePaths : public HardeningTest {};

TEST_P(RelativePaths, ObjectsReachedByRelativeNamesAreNamedAfterAChdir) {
  // The program's tree: lib/ holds the linked library, plugins/ the plugin.
  TempDir tree;
  const std::string bin = PARLOT_HARDENING_BIN_DIR;
  const std::string lib = "librelobj_" + GetParam() + ".so";
  fs::create_directory(tree.path() / "lib");
  fs::create_directory(tree.path() / "plugins");
  fs::create_directory(tree.path() / "elsewhere");
  fs::copy_file(bin + "/" + lib, tree.path() / "lib" / lib);
  fs::copy_file(bin + "/librelplugin_" + GetParam() + ".so", tree.path() / "plugins" / "plugin.so");
  RunOptions in_tree;
  in_tree.cwd = tree.path().string();
  in_tree.env = {"LD_LIBRARY_PATH=lib"};
  const std::vector<std::string> argv{prog("relative_objects"), "./plugins/plugin.so", "elsewhere"};
  const RunResult r = run_traced(argv, dir.path(), in_tree);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "sum 4\n");
  EXPECT_EQ(r.err, "");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out << last_read.err;
  EXPECT_THAT(threads[0].body, Not(HasSubstr("0x")));
  EXPECT_EQ(threads[0].body, tree_text("main{ rel_lib_work{rel_lib_leaf rel_lib_leaf}"
                                       " rel_plugin_work{rel_plugin_leaf rel_plugin_leaf} }"));
  // The load map names both objects by their absolute paths.
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  bool have_lib = false, have_plugin = false;
  for (const auto& o : processes[0].load_map) {
    EXPECT_EQ(o.path.front(), '/') << o.path;
    have_lib = have_lib || o.path == (tree.path() / "lib" / lib).string();
    have_plugin = have_plugin || o.path == (tree.path() / "plugins" / "plugin.so").string();
  }
  EXPECT_TRUE(have_lib);
  EXPECT_TRUE(have_plugin);
}

// The record filters read the names of such objects' functions after a
// chdir too.
TEST_P(RelativePaths, FiltersFindTheNamesInObjectsReachedByRelativeNamesAfterAChdir) {
  TempDir tree;
  const std::string bin = PARLOT_HARDENING_BIN_DIR;
  const std::string lib = "librelobj_" + GetParam() + ".so";
  fs::create_directory(tree.path() / "lib");
  fs::create_directory(tree.path() / "elsewhere");
  fs::copy_file(bin + "/" + lib, tree.path() / "lib" / lib);
  fs::copy_file(bin + "/librelplugin_" + GetParam() + ".so", tree.path() / "plugin.so");
  RunOptions in_tree;
  in_tree.cwd = tree.path().string();
  in_tree.env = {"LD_LIBRARY_PATH=lib", "PARLOT_EXCLUDE=rel_lib_leaf;rel_plugin_leaf"};
  const RunResult r =
      run_traced({prog("relative_objects"), "./plugin.so", "elsewhere"}, dir.path(), in_tree);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "sum 4\n");
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out << last_read.err;
  EXPECT_EQ(threads[0].body, tree_text("main{ rel_lib_work rel_plugin_work }"));
}

// A relative PARLOT_DIR names the directory as the traced program was
// started: a program that changes directory and then starts another one
// (exec, with the process's environment or one of its own; system();
// posix_spawn) has both traces there.
TEST_P(RelativePaths, ATraceDirectoryNamedRelativeHoldsWhatAProgramStartsAfterAChdir) {
  for (const std::string how : {"execve", "execv", "own_env", "system", "posix_spawn"}) {
    SCOPED_TRACE(how);
    TempDir here;
    RunOptions relative;
    relative.cwd = here.path().string();
    relative.env = {std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH, "PARLOT_DIR=rel-trace"};
    const RunResult r = run({prog("chdir_exec"), how, prog("exec_target"), "rel-trace"}, relative);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_EQ(r.out, "target " + how + "\n");
    EXPECT_EQ(r.err, "");
    EXPECT_FALSE(fs::exists(here.path() / "moved" / "rel-trace"))
        << "the started program's trace went to the directory the program moved to";
    const RunResult t = parlot_read({"trace", (here.path() / "rel-trace").string()});
    EXPECT_EQ(t.exit_status, 0) << t.err;
    std::vector<std::string> bodies;
    for (const auto& thread : split_threads(t.out)) bodies.push_back(thread.body);
    std::sort(bodies.begin(), bodies.end());
    std::vector<std::string> expected{tree_text("main{ work{leaf leaf leaf} }"),
                                      tree_text("main{ target_work{leaf} }")};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(bodies, expected) << t.out << t.err;
  }
}

PARLOT_HARDENING_VARIANTS_OF(RelativePaths);

}  // namespace
}  // namespace parlot::hardening
