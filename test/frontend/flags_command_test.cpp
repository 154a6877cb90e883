// `parlot flags` of the build tree's front end, used as a build would use
// it: the flags it prints compile a program, and the program has what the
// mode promises (the sleds' section, or calls to the hooks), links the
// runtime when asked and runs.
#include <gtest/gtest.h>
#include <parlot/build_modes.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace {

struct Result {
  int status = -1;  // exit status, or -1 when the command did not exit
  std::string out;  // stdout
};

// Runs `command` with /bin/sh; returns its exit status and stdout.
Result run(const std::string& command) {
  Result r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string parlot_flags(const std::string& args) {
  const Result r = run(std::string(PARLOT_FRONTEND_PATH) + " flags " + args);
  EXPECT_EQ(r.status, 0) << args;
  return r.out.substr(0, r.out.find('\n'));
}

class FlagsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir.path() / "app.c") << "int twice(int x) { return 2 * x; }\n"
                                           "int main(int argc, char** argv) {\n"
                                           "  (void)argv;\n"
                                           "  return twice(argc) == 2 ? 0 : 1;\n"
                                           "}\n";
  }
  // Compiles app.c with `flags` into `name`; returns the compiler's status.
  int compile(const std::string& flags, const std::string& name) {
    return run("cc -O2 " + (dir.path() / "app.c").string() + " -o " + (dir.path() / name).string() +
               " " + flags + " 2>&1")
        .status;
  }
  parlot::test::TempDir dir;
};

TEST_F(FlagsCommand, SledFlagsGiveThePatchableEntriesSection) {
  const std::string flags = parlot_flags("--mode sleds --cflags");
  EXPECT_EQ(flags, PARLOT_SLED_FLAGS " -g");
  ASSERT_EQ(compile(flags, "app"), 0);
  const Result sections = run("readelf -SW " + (dir.path() / "app").string());
  EXPECT_NE(sections.out.find(PARLOT_SLED_SECTION), std::string::npos) << sections.out;
  const Result symbols = run("readelf -sW " + (dir.path() / "app").string());
  EXPECT_EQ(symbols.out.find("__cyg_profile_func_enter"), std::string::npos);
  EXPECT_EQ(run((dir.path() / "app").string()).status, 0);
}

TEST_F(FlagsCommand, HookFlagsCallTheHooks) {
  const std::string flags = parlot_flags("--mode hooks --cflags");
  ASSERT_EQ(compile(flags, "app"), 0);
  const Result symbols = run("readelf -sW " + (dir.path() / "app").string());
  EXPECT_NE(symbols.out.find("__cyg_profile_func_enter"), std::string::npos);
  const Result sections = run("readelf -SW " + (dir.path() / "app").string());
  EXPECT_EQ(sections.out.find(PARLOT_SLED_SECTION), std::string::npos);
}

TEST_F(FlagsCommand, WithRuntimeLinksTheBuildTreesRuntime) {
  if (PARLOT_TEST_SANITIZED) {
    GTEST_SKIP() << "the build tree's runtime is sanitized: an unsanitized program cannot load it";
  }
  const std::string flags = parlot_flags("--mode sleds --with-runtime");
  ASSERT_EQ(compile(flags, "app"), 0) << flags;
  const Result needed = run("readelf -dW " + (dir.path() / "app").string());
  EXPECT_NE(needed.out.find("libparlotrt.so"), std::string::npos) << needed.out;
  // Runs with the runtime loaded and tracing asked to start off.
  EXPECT_EQ(run("PARLOT_QUIET=1 PARLOT_START=off PARLOT_DIR=" + (dir.path() / "t").string() + " " +
                (dir.path() / "app").string())
                .status,
            0);
}

TEST_F(FlagsCommand, LibsAloneAreTheLinkFlags) {
  EXPECT_EQ(parlot_flags("--mode sleds --libs"), "");
  const std::string libs = parlot_flags("--mode sleds --libs --with-runtime");
  EXPECT_EQ(libs.rfind("-L/", 0), 0u) << libs;
  EXPECT_NE(libs.find("-lparlotrt"), std::string::npos) << libs;
  EXPECT_EQ(parlot_flags("--mode sleds --with-runtime"), PARLOT_SLED_FLAGS " -g " + libs);
}

TEST_F(FlagsCommand, BadArgumentsExitWithStatusTwo) {
  const std::string parlot = PARLOT_FRONTEND_PATH;
  EXPECT_EQ(run(parlot + " flags --mode xray 2>/dev/null").status, 2);
  EXPECT_EQ(run(parlot + " flags --cc icc 2>/dev/null").status, 2);
  EXPECT_EQ(run(parlot + " flags --mode sleds --after-inlining 2>/dev/null").status, 2);
  const Result verbose = run(parlot + " flags --mode sleds -v");
  EXPECT_EQ(verbose.status, 0);
  EXPECT_NE(verbose.out.find("compile: " PARLOT_SLED_FLAGS " -g"), std::string::npos)
      << verbose.out;
}

}  // namespace
