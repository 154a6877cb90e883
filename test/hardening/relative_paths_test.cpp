// Relative names, as in every development tree: shared objects found
// through a relative LD_LIBRARY_PATH or dlopened by a relative path keep
// their functions' names after the program changes directory.
// relative_objects.c says what the program does.
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

PARLOT_HARDENING_VARIANTS_OF(RelativePaths);

}  // namespace
}  // namespace parlot::hardening
