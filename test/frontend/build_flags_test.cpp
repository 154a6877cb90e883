// Unit tests of the build modes' flags (frontend/build_flags.cpp): each mode
// and compiler gets the flags include/parlot/build_modes.h defines.
#include "build_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <parlot/build_modes.h>

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <utility>

namespace parlot::frontend {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr auto kGcc = CompilerFamily::gcc;
constexpr auto kClang = CompilerFamily::clang;

// build_flags() of a request made of these fields.
BuildFlags flags_of(BuildMode mode, CompilerFamily compiler = kGcc, bool after_inlining = false,
                    std::optional<std::filesystem::path> runtime_dir = std::nullopt) {
  FlagRequest request;
  request.mode = mode;
  request.compiler = compiler;
  request.after_inlining = after_inlining;
  request.runtime_dir = std::move(runtime_dir);
  return build_flags(request);
}

TEST(BuildFlags, SledsCompileWithPatchableEntriesAndLinkNothing) {
  const BuildFlags f = flags_of(BuildMode::sleds);
  EXPECT_THAT(f.compile, ElementsAre(PARLOT_SLED_FLAGS, "-g"));
  EXPECT_THAT(f.compile, ElementsAre("-fpatchable-function-entry=5", "-g"));
  EXPECT_THAT(f.link, IsEmpty());
}

TEST(BuildFlags, SledsAreTheSameForClang) {
  EXPECT_EQ(flags_of(BuildMode::sleds, kClang).compile, flags_of(BuildMode::sleds, kGcc).compile);
}

TEST(BuildFlags, WithRuntimeLinksIt) {
  const BuildFlags f = flags_of(BuildMode::sleds, kGcc, false, "/opt/p/lib");
  EXPECT_THAT(f.link, ElementsAre("-L/opt/p/lib", "-Wl,-rpath,/opt/p/lib", "-lparlotrt"));
  EXPECT_THAT(flags_of(BuildMode::hooks, kGcc, false, "/x").link,
              ElementsAre("-L/x", "-Wl,-rpath,/x", "-lparlotrt"));
}

TEST(BuildFlags, HooksInstrumentEveryFunction) {
  EXPECT_THAT(flags_of(BuildMode::hooks).compile, ElementsAre("-finstrument-functions", "-g"));
  EXPECT_THAT(flags_of(BuildMode::hooks, kClang).compile,
              ElementsAre("-finstrument-functions", "-g"));
}

TEST(BuildFlags, HooksAfterInliningDependOnTheCompiler) {
  EXPECT_THAT(flags_of(BuildMode::hooks, kClang, true).compile,
              ElementsAre("-finstrument-functions-after-inlining", "-g"));
  EXPECT_THAT(flags_of(BuildMode::hooks, kGcc, true).compile,
              ElementsAre("-finstrument-functions",
                          "-finstrument-functions-exclude-file-list=/usr/include", "-g"));
}

TEST(BuildFlags, SledsAfterInliningIsAnError) {
  EXPECT_THROW(flags_of(BuildMode::sleds, kGcc, true), std::invalid_argument);
}

TEST(BuildFlags, ParsesModesAndCompilers) {
  EXPECT_EQ(parse_build_mode("hooks"), BuildMode::hooks);
  EXPECT_EQ(parse_build_mode("sleds"), BuildMode::sleds);
  EXPECT_EQ(parse_build_mode("xray"), std::nullopt);
  EXPECT_EQ(parse_build_mode(""), std::nullopt);
  EXPECT_EQ(parse_compiler("gcc"), CompilerFamily::gcc);
  EXPECT_EQ(parse_compiler("/usr/bin/g++-12"), CompilerFamily::gcc);
  EXPECT_EQ(parse_compiler("gfortran"), CompilerFamily::gcc);
  EXPECT_EQ(parse_compiler("clang"), CompilerFamily::clang);
  EXPECT_EQ(parse_compiler("clang++-14"), CompilerFamily::clang);
  EXPECT_EQ(parse_compiler("icc"), std::nullopt);
  EXPECT_EQ(parse_compiler(""), std::nullopt);
}

TEST(BuildFlags, JoinsWithBlanks) {
  EXPECT_EQ(join_flags({}), "");
  EXPECT_EQ(join_flags({"-a", "-b"}), "-a -b");
}

}  // namespace
}  // namespace parlot::frontend
