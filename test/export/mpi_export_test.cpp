// Exports of an MPI run: cg_mpi traced on two ranks by mpirun (as
// test/e2e/mpi_examples_test.cpp launches it), then exported and read back
// by the consumers. Each rank must show up as its own process: an OTF2
// location group per rank whose locations' Enter/Leave counts equal `stats`
// per thread, a Perfetto process track named with the rank, a chrome pid per
// rank, a speedscope profile per thread of each rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int kRanks = 2;

class MpiExports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string program = examples_dir() + "/cg_mpi";
    const std::string mpirun = find_mpirun();
    if (!fs::exists(program) || mpirun.empty()) return;  // each test skips
    dir_ = new TempDir;
    const RunResult r =
        run({mpirun, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(kRanks), "-x",
             std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH, "-x",
             "PARLOT_DIR=" + trace().string(), program, "30", "2"});
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (dir_ == nullptr) GTEST_SKIP() << "cg_mpi not built (MPI not found) or no mpirun on PATH";
  }
  static fs::path trace() { return dir_->path() / "cg"; }
  static fs::path export_to(const std::string& format) {
    const fs::path out = dir_->path() / ("cg." + format);
    const RunResult r =
        parlot_read({"export", "--format", format, trace().string(), "-o", out.string()});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    return out;
  }
  static bool exports(const std::string& format) {
    return parlot_read({"export", "--help"}).out.find(format) != std::string::npos;
  }
  /// The ranks' processes, sorted by rank.
  static std::vector<ProcessTrace> processes() {
    auto p = open_trace_directory(trace());
    EXPECT_EQ(p.size(), static_cast<std::size_t>(kRanks));
    for (int r = 0; r < kRanks; ++r) EXPECT_EQ(p[r].metadata.rank, std::to_string(r));
    return p;
  }
  /// Calls per thread from `stats --by thread`, keyed "rank R thread #I" in
  /// the order the threads are walked (rank by rank, threads in file order).
  static std::vector<std::pair<std::string, std::uint64_t>> stats_calls_per_thread() {
    const RunResult r = parlot_read({"stats", "--by", "thread", trace().string()});
    EXPECT_EQ(r.exit_status, 0) << r.err;
    std::vector<std::pair<std::string, std::uint64_t>> calls;
    std::map<std::uint64_t, std::string> rank_of_pid;
    for (const auto& p : processes()) rank_of_pid[p.metadata.pid] = p.metadata.rank;
    const std::regex header(R"(^== thread \d+ \(pid (\d+), thread #(\d+)\) ==$)");
    bool in_calls = false;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_match(line, m, header)) {
        calls.emplace_back("rank " + rank_of_pid[std::stoull(m[1])] + " thread #" + m[2].str(), 0);
      } else if (line.find("calls  function") != std::string::npos) {
        in_calls = true;
      } else if (line.find("calls  caller -> callee") != std::string::npos) {
        in_calls = false;
      } else if (in_calls && !calls.empty()) {
        calls.back().second += std::stoull(line);
      }
    }
    return calls;
  }
  /// The stats calls of threads with at least one call (OpenMPI's helper
  /// threads are not instrumented: their files, if any, hold no calls).
  static std::vector<std::pair<std::string, std::uint64_t>> busy_threads() {
    auto calls = stats_calls_per_thread();
    std::erase_if(calls, [](const auto& c) { return c.second == 0; });
    return calls;
  }
  static TempDir* dir_;
};
TempDir* MpiExports::dir_ = nullptr;

TEST_F(MpiExports, Otf2HasALocationGroupPerRankAndStatsCountsPerLocation) {
  if (!have("otf2-print") || !exports("otf2")) GTEST_SKIP() << "no otf2-print or otf2 format";
  const fs::path archive = export_to("otf2");
  const RunResult defs = run({"otf2-print", "-G", (archive / "traces.otf2").string()});
  ASSERT_EQ(defs.exit_status, 0) << defs.err;
  // LOCATION_GROUP <ref>  Name: "rank R pid P" <string>, Type: PROCESS, ...
  // LOCATION <ref>  Name: "thread #I (tid T)" <string>, ..., Group: "rank R pid P" <ref>
  std::set<std::string> groups;
  std::map<std::uint64_t, std::string> location_label;  // "rank R thread #I"
  std::istringstream in(defs.out);
  const std::regex group(R"re(^LOCATION_GROUP\s+\d+\s+Name: "(rank \d+) pid \d+".*$)re");
  const std::regex location(
      R"re(^LOCATION\s+(\d+)\s+Name: "(thread #\d+) \(tid \d+\)".*Group: "(rank \d+) pid \d+".*$)re");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, group)) groups.insert(m[1]);
    if (std::regex_match(line, m, location)) {
      location_label[std::stoull(m[1])] = m[3].str() + " " + m[2].str();
    }
  }
  EXPECT_EQ(groups, (std::set<std::string>{"rank 0", "rank 1"})) << defs.out;

  const RunResult events = run({"otf2-print", (archive / "traces.otf2").string()});
  ASSERT_EQ(events.exit_status, 0) << events.err;
  std::map<std::string, std::uint64_t> enters, leaves;
  std::istringstream ev(events.out);
  const std::regex event(R"(^(ENTER|LEAVE)\s+(\d+)\s+\d+\s+Region: .*$)");
  for (std::string line; std::getline(ev, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, event)) continue;
    const std::string& label = location_label.at(std::stoull(m[2]));
    (m[1] == "ENTER" ? enters : leaves)[label]++;
  }
  std::map<std::string, std::uint64_t> expected;
  for (const auto& [label, n] : busy_threads()) expected[label] = n;
  ASSERT_GE(expected.size(), static_cast<std::size_t>(kRanks));
  EXPECT_TRUE(expected.contains("rank 0 thread #0"));
  EXPECT_TRUE(expected.contains("rank 1 thread #0"));
  EXPECT_EQ(enters, expected);
  EXPECT_EQ(leaves, expected);
}

TEST_F(MpiExports, PerfettoHasAProcessTrackNamedWithEachRank) {
  if (!have("protoc") || !exports("perfetto")) GTEST_SKIP() << "no protoc or perfetto format";
  const fs::path file = export_to("perfetto");
  const RunResult r = run({"/bin/sh", "-c",
                           "protoc --proto_path=" PARLOT_PERFETTO_PROTO_DIR
                           " --decode=perfetto.protos.Trace perfetto_trace_subset.proto < " +
                               file.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // process { pid: P  process_name: "rank R pid P ..." }
  std::map<std::uint64_t, std::string> process_names;  // pid -> name
  std::uint64_t begun = 0;                             // slices
  std::map<std::uint64_t, std::uint64_t> tid_of_track;
  std::istringstream in(r.out);
  std::uint64_t pid = 0, uuid = 0;
  const std::regex field(R"(^\s*(\w+): (.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, field)) continue;
    const std::string key = m[1];
    const std::string value = m[2];
    if (key == "uuid") uuid = std::stoull(value);
    if (key == "pid") pid = std::stoull(value);
    if (key == "process_name") process_names[pid] = value.substr(1, value.size() - 2);
    if (key == "tid") tid_of_track[uuid] = std::stoull(value);
    if (key == "type" && value == "TYPE_SLICE_BEGIN") ++begun;
  }
  const auto ps = processes();
  ASSERT_EQ(process_names.size(), static_cast<std::size_t>(kRanks)) << r.out.substr(0, 2000);
  for (const auto& p : ps) {
    ASSERT_TRUE(process_names.contains(p.metadata.pid));
    EXPECT_THAT(process_names.at(p.metadata.pid),
                HasSubstr("rank " + p.metadata.rank + " pid " + std::to_string(p.metadata.pid)));
  }
  // Every slice begun belongs to a call: their number is the calls of all threads.
  std::uint64_t calls = 0;
  for (const auto& [label, n] : stats_calls_per_thread()) calls += n;
  EXPECT_EQ(begun, calls);
  // A thread track per thread file, each under its rank's pid.
  std::size_t threads = 0;
  for (const auto& p : ps) threads += p.thread_files.size();
  EXPECT_EQ(tid_of_track.size(), threads);
}

TEST_F(MpiExports, ChromeHasAPidPerRank) {
  const auto json = nlohmann::json::parse(slurp(export_to("chrome")));
  std::map<std::uint64_t, std::string> process_names;
  std::map<std::uint64_t, std::uint64_t> begins;  // pid -> calls
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      process_names[e["pid"]] = e["args"]["name"];
    }
    if (e["ph"] == "B") ++begins[e["pid"].get<std::uint64_t>()];
  }
  std::map<std::uint64_t, std::uint64_t> expected;  // pid -> calls, from stats --by process
  const auto ps = processes();
  for (const auto& p : ps) {
    ASSERT_TRUE(process_names.contains(p.metadata.pid));
    EXPECT_THAT(process_names.at(p.metadata.pid), HasSubstr("rank " + p.metadata.rank + " pid "));
  }
  std::map<std::string, std::uint64_t> calls_of_rank;
  for (const auto& [label, n] : stats_calls_per_thread()) {
    calls_of_rank[label.substr(0, label.find(" thread"))] += n;
  }
  for (const auto& p : ps) expected[p.metadata.pid] = calls_of_rank["rank " + p.metadata.rank];
  EXPECT_EQ(begins, expected);
}

TEST_F(MpiExports, SpeedscopeHasAProfilePerThreadOfEachRank) {
  const auto json = nlohmann::json::parse(slurp(export_to("speedscope")));
  std::map<std::string, std::uint64_t> opens;  // "rank R thread #I" -> frames opened
  for (const auto& p : json["profiles"]) {
    const std::string name = p["name"];
    std::smatch m;
    const std::regex label(R"(^(rank \d+) pid \d+ (thread #\d+) \(tid \d+\)$)");
    ASSERT_TRUE(std::regex_match(name, m, label)) << name;
    std::uint64_t n = 0;
    for (const auto& e : p["events"]) n += e["type"] == "O";
    opens[m[1].str() + " " + m[2].str()] = n;
  }
  std::map<std::string, std::uint64_t> expected;
  for (const auto& [label, n] : stats_calls_per_thread()) expected[label] = n;
  EXPECT_EQ(opens, expected);
}

// report --by rank: one row per rank, its calls those of its threads.
TEST_F(MpiExports, ReportByRankHasARowPerRank) {
  const RunResult r = parlot_read({"report", "--by", "rank", "--sort", "calls", trace().string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::map<std::string, std::uint64_t> calls_of_rank;
  for (const auto& [label, n] : stats_calls_per_thread()) {
    calls_of_rank[label.substr(0, label.find(" thread"))] += n;
  }
  const std::regex row(R"(^\s*\d+\s+(\d+)\s+\d+\s+\d+  (rank \d+) \(pid \d+, .*cg_mpi\)$)");
  std::map<std::string, std::uint64_t> got;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) got[m[2]] = std::stoull(m[1]);
  }
  EXPECT_EQ(got, calls_of_rank) << r.out;
}

}  // namespace
}  // namespace parlot::e2e
