// The parameterized fixture of the hardening suite: GetParam() is the build
// variant (gcc_O0, gcc_O2, clang_O0, clang_O2) of the test programs.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "hardening_support.h"

namespace parlot::hardening {

class HardeningTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string prog(const std::string& name) const { return program(name, GetParam()); }
  /// Runs `parlot-read trace` on the trace directory; expects it to succeed.
  std::vector<ThreadText> trace_threads(const std::string& context = "") {
    last_read = parlot_read({"trace", dir.path().string()});
    EXPECT_EQ(last_read.exit_status, 0) << context << last_read.err;
    // Every file complete: none cut short either (that also exits 0).
    EXPECT_EQ(last_read.err.find("cut short"), std::string::npos) << context << last_read.err;
    return split_threads(last_read.out);
  }
  std::string info() { return parlot_read({"info", dir.path().string()}).out; }

  TempDir dir;
  RunResult last_read;
};

#define PARLOT_HARDENING_VARIANTS_OF(Fixture)                                   \
  INSTANTIATE_TEST_SUITE_P(Hardening, Fixture, ::testing::ValuesIn(variants()), \
                           [](const auto& info) { return std::string(info.param); })

}  // namespace parlot::hardening
