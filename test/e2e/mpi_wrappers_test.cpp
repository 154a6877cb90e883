// Parlot's generated MPI wrappers (runtime/mpi, libparlotmpi.so) on the MPI
// examples, 2 and 4 ranks, C and gfortran: every MPI call each rank makes
// appears in its trace, in order, named as the standard names it, nested
// under the instrumented function that made it. The reference is an
// independent hand-written PMPI interposer (mpi_call_log.c) preloaded after
// Parlot's wrappers, which forward each call to it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

namespace fs = std::filesystem;

struct MpiRun {
  std::string program;  // in examples/
  std::vector<std::string> args;
  int ranks;
  std::string caller_of_first_collective;  // the instrumented caller of the first
                                           // MPI call after MPI_Comm_size
};

void PrintTo(const MpiRun& r, std::ostream* os) {
  *os << r.program << " -np " << r.ranks;
}

// One MPI call as the trace shows it.
struct TracedCall {
  std::string name;
  std::string caller;
  std::string file;
  std::string line;  // name and arguments, in the reference log's form
};

// "MPI_Send dest=1 tag=7 ...": the form mpi_call_log.c writes, from the
// jsonl "mpi" object (fields in the trace's order).
std::string call_line(const std::string& name, const nlohmann::ordered_json& mpi) {
  std::string line = name;
  for (const auto& [key, value] : mpi.items()) {
    if (key != "completed") {
      line += " " + key + "=" + std::to_string(value.get<long long>());
      continue;
    }
    line += " completed=[";
    for (const auto& c : value) {
      line += std::to_string(c.at("index").get<long long>()) + ":" +
              std::to_string(c.at("source").get<long long>()) + ":" +
              std::to_string(c.at("tag").get<long long>()) + ":" +
              std::to_string(c.at("bytes").get<long long>()) + ",";
    }
    line += "]";
  }
  return line;
}

// The MPI calls (functions named MPI_*) of one thread, in order, with the
// function each was called from.
std::vector<TracedCall> mpi_calls_in_trace(const std::string& jsonl) {
  std::vector<TracedCall> calls;
  std::vector<std::string> stack;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::ordered_json::parse(line);
    const std::string name = e.at("function");
    if (e.at("kind") == "enter") {
      if (name.rfind("MPI_", 0) == 0) {
        calls.push_back({name, stack.empty() ? "" : stack.back(), e.value("file", ""),
                         call_line(name, e.value("mpi", nlohmann::ordered_json::object()))});
      }
      stack.push_back(name);
    } else {
      stack.pop_back();
    }
  }
  return calls;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string name_of(const std::string& line) {
  return line.substr(0, line.find(' '));
}

// Runs `r` under the runtime, the MPI wrappers and the reference log, with
// PARLOT_MPI_ARGS=1 when `args`, and checks every rank's trace against its
// log: names only without `args`, names and arguments with.
void check_mpi_run(const MpiRun& r, bool args) {
  const std::string program = r.program == "mpi_args_fixture" ? PARLOT_MPI_ARGS_FIXTURE_PATH
                                                              : examples_dir() + "/" + r.program;
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (MPI not found)";
  if (!fs::exists(PARLOT_MPI_WRAPPERS_PATH)) GTEST_SKIP() << "libparlotmpi.so was not built";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";

  TempDir traces, logs;
  std::vector<std::string> argv{mpirun,
                                "--allow-run-as-root",
                                "--oversubscribe",
                                "-np",
                                std::to_string(r.ranks),
                                "-x",
                                std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH + ":" +
                                    PARLOT_MPI_WRAPPERS_PATH + ":" + PARLOT_MPI_CALL_LOG_PATH,
                                "-x",
                                "PARLOT_DIR=" + traces.path().string(),
                                "-x",
                                "PARLOT_TEST_MPI_LOG=" + logs.path().string(),
                                "-x",
                                std::string("PARLOT_MPI_ARGS=") + (args ? "1" : "0"),
                                program};
  argv.insert(argv.end(), r.args.begin(), r.args.end());
  const RunResult mpi = run(argv);
  ASSERT_EQ(mpi.exit_status, 0) << mpi.out << mpi.err;

  const auto processes = open_trace_directory(traces.path());
  ASSERT_EQ(processes.size(), static_cast<std::size_t>(r.ranks));
  for (const ProcessTrace& p : processes) {
    SCOPED_TRACE(p.directory.string());
    const std::string pid = std::to_string(p.metadata.pid);
    std::vector<std::string> expected = lines_of(logs.path() / (pid + ".log"));
    ASSERT_GE(expected.size(), 4u) << "the reference log of rank " << p.metadata.rank;
    if (!args) {
      for (auto& line : expected) line = name_of(line);
    }

    const RunResult t = parlot_read(
        {"trace", p.directory.string(), "--pid", pid, "--tid", pid, "--format", "jsonl"});
    ASSERT_EQ(t.exit_status, 0) << t.err;
    const std::vector<TracedCall> traced = mpi_calls_in_trace(t.out);
    std::vector<std::string> traced_lines;
    for (const auto& c : traced) traced_lines.push_back(args ? c.line : c.name);
    if (!args) {
      // Without PARLOT_MPI_ARGS no call has arguments.
      for (const auto& c : traced) EXPECT_EQ(c.line, c.name);
    }
    EXPECT_EQ(traced_lines, expected);

    ASSERT_GE(traced.size(), 4u);
    EXPECT_EQ(traced.front().name, "MPI_Init");
    EXPECT_EQ(traced.back().name, "MPI_Finalize");
    if (!r.caller_of_first_collective.empty()) {
      EXPECT_EQ(traced[3].caller, r.caller_of_first_collective);
    }
    for (const auto& c : traced) {
      EXPECT_THAT(c.file, ::testing::EndsWith("mpi_wrappers.c")) << c.name;
    }
    // The wrappers nest exactly: no exit was corrected or unmatched.
    for (const auto& f : p.thread_files) {
      ThreadEventReader reader(f);
      ASSERT_TRUE(reader.summary().trailer.has_value()) << reader.summary().damage;
      EXPECT_EQ(reader.summary().trailer->corrected_exits, 0u);
      EXPECT_EQ(reader.summary().trailer->unmatched_exits, 0u);
    }
  }
}

class MpiWrappers : public ::testing::TestWithParam<MpiRun> {};

TEST_P(MpiWrappers, EveryMpiCallOfEveryRankIsTracedInOrder) {
  check_mpi_run(GetParam(), false);
}

// PARLOT_MPI_ARGS=1: each call also carries the arguments the reference
// log worked out on its own (peer, tag, bytes, communicator, status).
TEST_P(MpiWrappers, EveryMpiCallHasTheArgumentsTheReferenceSaw) {
  check_mpi_run(GetParam(), true);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, MpiWrappers,
    ::testing::Values(MpiRun{"cg_mpi", {"30", "2"}, 2, "dot"},
                      MpiRun{"cg_mpi", {"30", "2"}, 4, "dot"},
                      MpiRun{"is_mpi", {"10", "8", "3"}, 2, "take_test_values"},
                      MpiRun{"is_mpi", {"10", "8", "3"}, 4, "take_test_values"},
                      MpiRun{"mg_mpi", {"16", "1"}, 2, ""}, MpiRun{"mg_mpi", {"16", "1"}, 4, ""},
                      MpiRun{"mpi_args_fixture", {}, 2, "main"},
                      MpiRun{"mpi_args_fixture", {}, 4, "main"},
                      MpiRun{"ring_mpi", {"3"}, 2, "ring::pass_token"},
                      MpiRun{"ring_mpi", {"3"}, 4, "ring::pass_token"}),
    [](const auto& info) { return info.param.program + "_np" + std::to_string(info.param.ranks); });

}  // namespace
}  // namespace parlot::e2e
