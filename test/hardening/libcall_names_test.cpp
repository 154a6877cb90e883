// Library calls (PARLOT_LIBCALLS=1): every call recorded, named as the
// program called it, and what cannot be recorded said in `info`. Programs:
// libcalls_names.c (+ libcalls_deep_plugin.c, libcalls_deep_dep.c,
// libcalls_deep_app.c, libcalls_audit.c) and libcalls_early.cpp (+
// libcalls_early_lib.cpp), gcc builds at -O0 and -O2.
#include <map>
#include <sstream>

#include "hardening_fixture.h"

namespace parlot::hardening {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string library(const std::string& name, const std::string& variant = "") {
  return std::string(PARLOT_HARDENING_BIN_DIR) + "/lib" + name +
         (variant.empty() ? "" : "_" + variant) + ".so";
}

class LibcallNames : public HardeningTest {
 protected:
  // Runs `argv` untraced and traced with PARLOT_LIBCALLS=1 (and `env`); both
  // must print the same and end the same. Returns the traced run.
  RunResult run_both(const std::vector<std::string>& argv, std::vector<std::string> env = {}) {
    RunOptions plain_options;
    plain_options.env = env;
    const RunResult plain = run(argv, plain_options);
    EXPECT_EQ(plain.exit_status, 0) << plain.err;
    RunOptions options;
    env.push_back("PARLOT_LIBCALLS=1");
    options.env = env;
    const RunResult traced = run_traced(argv, dir.path(), options);
    EXPECT_EQ(traced.out, plain.out);
    EXPECT_EQ(traced.exit_status, plain.exit_status) << traced.err;
    return traced;
  }
  // Calls per function name (`stats`' first table) of the whole trace.
  std::map<std::string, long> calls() {
    last_read = parlot_read({"stats", dir.path().string()});
    EXPECT_EQ(last_read.exit_status, 0) << last_read.err;
    std::map<std::string, long> counts;
    std::istringstream lines(last_read.out);
    std::string line;
    std::getline(lines, line);  // == program ==
    std::getline(lines, line);  // header
    while (std::getline(lines, line) && line.find("->") == std::string::npos) {
      std::istringstream fields(line);
      long n = 0;
      std::string name;
      if (!(fields >> n) || !std::getline(fields >> std::ws, name)) break;
      counts[name] += n;
    }
    return counts;
  }
};

TEST_P(LibcallNames, EachCallNamedByTheSymbolTheProgramCalled) {
  const RunResult r = run_both({prog("libcalls_names"), "names"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto c = calls();
  const std::map<std::string, long> expected = {
      {"memcpy", 30}, {"memmove", 15}, {"memcmp", 4},       {"strchr", 3},
      {"sin", 2},     {"strtod", 1},   {"gettimeofday", 1}, {"clock_gettime", 1},
      {"time", 1},    {"printf", 0},   {"puts", 0}};
  for (const auto& [name, n] : expected) {
    if (n == 0) continue;  // printf may be compiled as puts
    EXPECT_EQ(c.contains(name) ? c.at(name) : 0, n) << name << "\n" << last_read.out;
  }
  for (const char* alias :
       {"bcmp", "index", "sinf32x", "strtof32x", "__memmove_avx_unaligned_erms"})
    EXPECT_FALSE(c.contains(alias)) << alias << "\n" << last_read.out;
  for (const auto& [name, n] : c) EXPECT_FALSE(name.starts_with("0x")) << last_read.out;
}

TEST_P(LibcallNames, InfoSaysWhatWasLeftUnpatchedAndWhy) {
  const RunResult r = run_both({prog("libcalls_names"), "left"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string text = info();
  EXPECT_THAT(text, HasSubstr("library calls: "));
  EXPECT_THAT(text, HasSubstr("GLOB_DAT (function pointers, -fno-plt calls)"));
  EXPECT_THAT(text, HasSubstr("1 returns twice (setjmp, vfork, *context)"));
  // The call through the pointer is not recorded, the program's own are.
  const auto c = calls();
  EXPECT_FALSE(c.contains("puts")) << last_read.out;
  EXPECT_FALSE(c.contains("_setjmp")) << last_read.out;
  EXPECT_EQ(c.count("left"), 1u) << last_read.out;
}

TEST_P(LibcallNames, InstrumentedCodeBeforeTheRuntimesConstructor) {
  const RunResult r = run_both({prog("libcalls_early")});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(render(strip_frames(parse_text(threads[0].body),
                                [](const std::string& n) {
                                  return n != "early_hook()" && n != "main()" && n != "qsort()" &&
                                         n != "early_value()" && n != "puts()";
                                })),
            render(parse_text("early_hook();\nmain() {\n  qsort();\n  early_value();\n"
                              "  puts();\n} /* main() */\n")))
      << threads[0].body;
}

// The same with a library call that takes and returns %ymm vectors, made
// before the runtime's constructors ran (libcalls_early_ymm.c): the
// trampolines must save the registers whole from the first patch on.
TEST_P(LibcallNames, YmmCallBeforeTheRuntimesConstructorKeepsItsVectors) {
  const RunResult r = run_both({prog("libcalls_early_ymm")});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  if (r.out == "no avx\n") GTEST_SKIP() << "the CPU has no AVX";
  EXPECT_THAT(r.out, ::testing::StartsWith("ymm "));
  // Every call recorded, inside the hook that ran before the constructors.
  EXPECT_EQ(calls()["early_ymm_sum"], 2000) << last_read.out;
  const auto threads = trace_threads();
  ASSERT_EQ(threads.size(), 1u) << last_read.out;
  EXPECT_EQ(render(strip_frames(parse_text(threads[0].body),
                                [](const std::string& n) {
                                  return n != "early_ymm_hook()" && n != "check_ymm()" &&
                                         n != "main()";
                                })),
            render(parse_text("early_ymm_hook() {\n  check_ymm();\n} /* early_ymm_hook() */\n"
                              "main();\n")))
      << threads[0].body;
}

// libmvec's vector-ABI functions (_ZGV*: what gcc -ffast-math
// -fopenmp-simd calls for a vectorised sin) are recorded like any other
// library call, and return the same bits (libcalls_mvec.c): %xmm and, with
// AVX2, %ymm arguments and results.
TEST_P(LibcallNames, VectorAbiCallsAreRecordedAndKeepTheirResults) {
  const RunResult r = run_both({prog("libcalls_mvec")});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("sse "));
  const auto c = calls();
  EXPECT_EQ(c.contains("_ZGVbN2v_sin") ? c.at("_ZGVbN2v_sin") : 0, 1000) << last_read.out;
  if (r.out.find("\navx2 ") != std::string::npos) {
    EXPECT_EQ(c.contains("_ZGVdN4v_sin") ? c.at("_ZGVdN4v_sin") : 0, 1000) << last_read.out;
  }
  EXPECT_THAT(info(), Not(HasSubstr("never patched"))) << "info:\n" << info();
}

TEST_P(LibcallNames, AReloadedPluginIsPatchedAgain) {
  // The idle flusher patches during the sleep after each dlopen.
  const RunResult r =
      run_both({prog("libcalls_names"), "reload", plugin_library(GetParam()), "100"},
               {"PARLOT_FLUSH_MS=20"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(calls()["getpid"], 30) << last_read.out;
}

TEST_P(LibcallNames, CallsRightAfterDlopenAreRecorded) {
  // No flusher round in time: dlopen itself patches what it loaded.
  const RunResult r = run_both({prog("libcalls_names"), "reload", plugin_library(GetParam()), "0"},
                               {"PARLOT_FLUSH_MS=60000"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(calls()["getpid"], 30) << last_read.out;
}

// The plugin's functions are not traced under RTLD_DEEPBIND (its hooks bind
// to the C library's empty ones first); its library calls are. The call
// comes after the idle flusher's rounds.
TEST_P(LibcallNames, ADeepbindPluginCallsItsOwnCopy) {
  const RunResult r = run_both(
      {prog("libcalls_names"), "deepbind", library("libcalls_deep_plugin", GetParam()), "1"},
      {"PARLOT_FLUSH_MS=20"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "plugin's own copy\n");
  EXPECT_EQ(calls()["deep_value"], 2) << last_read.out;
}

TEST_P(LibcallNames, APluginWithoutDeepbindCallsTheApplicationsCopy) {
  const RunResult r = run_both(
      {prog("libcalls_names"), "deepbind", library("libcalls_deep_plugin", GetParam()), "0"},
      {"PARLOT_FLUSH_MS=20"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "application's copy\n");
  const auto c = calls();
  EXPECT_EQ(c.at("plugin_deep_value"), 1) << last_read.out;
  EXPECT_EQ(c.at("deep_value"), 2) << last_read.out;
}

TEST_P(LibcallNames, AnAuditModuleKeepsThePltToItself) {
  const RunResult r =
      run_both({prog("libcalls_names"), "audit"}, {"LD_AUDIT=" + library("libcalls_audit")});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("audit: getpid pltenter 1000 "));
  EXPECT_THAT(info(), HasSubstr("an audit module binds them (LD_AUDIT)"));
}

// Not parameterised (one build); run for gcc_O2 only.
TEST_P(LibcallNames, MpiCxxProgram) {
  if (std::string(PARLOT_LIBCALLS_MPI_CXX).empty())
    GTEST_SKIP() << "Open MPI's C++ bindings (libmpi_cxx) are not installed";
  if (GetParam() != "gcc_O2") GTEST_SKIP() << "one build";
  const RunResult r = run_both({PARLOT_LIBCALLS_MPI_CXX});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "total 1.5\n");
  const auto c = calls();
  for (const char* call : {"MPI_Init", "MPI_Comm_rank", "MPI_Allreduce", "MPI_Finalize", "printf"})
    EXPECT_EQ(c.contains(call) ? c.at(call) : 0, 1) << call << "\n" << last_read.out;
}

INSTANTIATE_TEST_SUITE_P(Hardening, LibcallNames, ::testing::Values("gcc_O0", "gcc_O2"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace parlot::hardening
