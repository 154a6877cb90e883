// The bundled examples traced, exported with `parlot-read export`, and read
// back by the programs people use: callgrind_annotate (its call counts must
// equal `parlot-read stats`), Graphviz dot (must render), JSON parsers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
using Edges = std::map<std::pair<std::string, std::string>, std::uint64_t>;

class ExportConsumers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    // Without clock samples: these tests check the logical clock.
    for (const std::string example : {"quicksort_threads", "cpp_features", "rounds_threads"}) {
      const RunResult r = run_traced({examples_dir() + "/" + example}, dir_->path() / example,
                                     {"PARLOT_CLOCK_EVENTS=0"});
      ASSERT_EQ(r.exit_status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path trace(const std::string& example) { return dir_->path() / example; }
  /// Runs the export and returns the output file's path.
  static fs::path export_to(const std::string& example, const std::string& format,
                            std::vector<std::string> extra = {}, const std::string& suffix = "") {
    const fs::path out = dir_->path() / (example + suffix + "." + format);
    std::vector<std::string> args{"export", "--format",  format, trace(example).string(),
                                  "-o",     out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = parlot_read(args);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_THAT(r.err, HasSubstr("logical clock"));
    return out;
  }
  /// caller -> callee call counts from `parlot-read stats` (calls from
  /// "<thread>", the outermost ones, left out).
  static Edges stats_edges(const std::string& example, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"stats", trace(example).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = parlot_read(args);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    Edges edges;
    std::istringstream in(r.out);
    const std::regex edge(R"(^\s*(\d+)  (.*) -> (.*)$)");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (!std::regex_match(line, m, edge) || m[2] == "<thread>") continue;
      edges[{m[2], m[3]}] += std::stoull(m[1]);
    }
    return edges;
  }
  static TempDir* dir_;
};
TempDir* ExportConsumers::dir_ = nullptr;

/// "file:function" as callgrind_annotate prints it -> function (the first
/// single ':' ends the file; C++ names hold only "::").
std::string function_part(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    if (i + 1 < s.size() && s[i + 1] == ':') {
      ++i;
      continue;
    }
    return s.substr(i + 1);
  }
  return s;
}

/// caller -> callee call counts as callgrind_annotate reads them from the
/// callgrind file `file`.
Edges annotated_edges(const fs::path& file) {
  const RunResult r =
      run({"callgrind_annotate", "--tree=calling", "--threshold=100", "--auto=no", file.string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("malformed")));
  Edges annotated;
  std::string caller;
  std::istringstream in(r.out);
  const std::regex fn_line(R"(^\s*[\d,]+ \([^)]*\)\s+\*\s+(.*)$)");
  const std::regex call_line(R"(^\s*[\d,]+ \([^)]*\)\s+>\s+(.*) \(([\d,]+)x\) \[.*\]$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, fn_line)) {
      caller = function_part(m[1]);
    } else if (std::regex_match(line, m, call_line)) {
      std::string n = m[2];
      n.erase(std::remove(n.begin(), n.end(), ','), n.end());
      annotated[{caller, function_part(m[1])}] += std::stoull(n);
    }
  }
  return annotated;
}

TEST_F(ExportConsumers, CallgrindAnnotateCallCountsEqualStats) {
  if (!have("callgrind_annotate")) GTEST_SKIP() << "valgrind's callgrind_annotate not installed";
  for (const std::string example : {"quicksort_threads", "cpp_features"}) {
    const Edges annotated = annotated_edges(export_to(example, "callgrind"));
    const Edges expected = stats_edges(example);
    EXPECT_GT(expected.size(), 5u);
    EXPECT_EQ(annotated, expected) << example;
  }
}

TEST_F(ExportConsumers, DotRendersSvg) {
  if (!have("dot")) GTEST_SKIP() << "graphviz not installed";
  const fs::path file = export_to("quicksort_threads", "dot", {"--top", "5"});
  const RunResult r = run({"dot", "-Tsvg", file.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<svg"));
  EXPECT_THAT(r.out, HasSubstr("swap"));  // the most called edge: partition -> swap
  const std::string dot = slurp(file);
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '>'), 5);
}

TEST_F(ExportConsumers, ChromeJsonParsesWithEveryCallOfEveryThread) {
  const auto json = nlohmann::json::parse(slurp(export_to("quicksort_threads", "chrome")));
  std::map<std::uint64_t, std::uint64_t> begins;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "B") ++begins[e["tid"].get<std::uint64_t>()];
  }
  const auto processes = open_trace_directory(trace("quicksort_threads"));
  ASSERT_EQ(processes.size(), 1u);
  std::map<std::uint64_t, std::uint64_t> calls;
  const auto events = read_thread_events(processes[0]);
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::uint64_t tid = ThreadEventReader(processes[0].thread_files[i]).summary().tid;
    calls[tid] = std::count_if(events[i].begin(), events[i].end(), [](auto id) { return id != 0; });
  }
  EXPECT_EQ(begins, calls);
}

TEST_F(ExportConsumers, ChromeRefusesTooManyEventsUnlessWindowed) {
  const fs::path out = trace("") / "refused.json";
  RunResult r = parlot_read({"export", "-f", "chrome", "--chrome-limit", "100",
                             trace("quicksort_threads").string(), "-o", out.string()});
  EXPECT_EQ(r.exit_status, 1);  // refused, nothing written
  EXPECT_THAT(r.err, HasSubstr("--window"));
  EXPECT_FALSE(fs::exists(out));
  const auto processes = open_trace_directory(trace("quicksort_threads"));
  const std::string tid =
      std::to_string(ThreadEventReader(processes[0].thread_files[0]).summary().tid);
  r = parlot_read({"export", "-f", "chrome", "--chrome-limit", "100", "--tid", tid, "--window",
                   "500:560", trace("quicksort_threads").string(), "-o", out.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto json = nlohmann::json::parse(slurp(out));
  int depth = 0;
  int opened_at_start = 0;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M") continue;
    const std::uint64_t ts = e["ts"];
    EXPECT_GE(ts, 500u);
    EXPECT_LE(ts, 560u);
    if (e["ph"] == "B") {
      ++depth;
      if (ts == 500) ++opened_at_start;
    } else {
      --depth;
      ASSERT_GE(depth, 0);
    }
  }
  EXPECT_EQ(depth, 0);
  EXPECT_GE(opened_at_start, 2);  // main and fill_random were open at event 500
}

// A window and a filter together: the frames open at the window's start go
// through the filter too (main is entered there, fill_random is not), and
// fill_random's callees nest under main.
TEST_F(ExportConsumers, WindowedChromeExportThroughAFilterStaysWellNested) {
  const auto processes = open_trace_directory(trace("quicksort_threads"));
  const std::string tid =
      std::to_string(ThreadEventReader(processes[0].thread_files[0]).summary().tid);
  const fs::path out = dir_->path() / "windowed-filtered.json";
  const RunResult r =
      parlot_read({"export", "-f", "chrome", "--tid", tid, "--window", "500:560", "--exclude",
                   "^fill_random$", trace("quicksort_threads").string(), "-o", out.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto json = nlohmann::json::parse(slurp(out));
  std::vector<std::string> open;
  std::map<std::string, std::uint64_t> begins;
  int opened_at_start = 0;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "B") {
      const std::string name = e["name"];
      if (name == "rng_next") {
        ASSERT_EQ(open, std::vector<std::string>{"main"});  // directly under main
      }
      open.push_back(name);
      ++begins[name];
      if (e["ts"] == 500 && name != "rng_next") ++opened_at_start;  // event 500 enters rng_next
    } else if (e["ph"] == "E") {
      ASSERT_FALSE(open.empty());
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_EQ(opened_at_start, 1);  // main (fill_random was open too, but is filtered out)
  EXPECT_EQ(begins["main"], 1u);
  EXPECT_FALSE(begins.contains("fill_random"));
  EXPECT_GE(begins["rng_next"], 25u);  // 60 events of rng_next calls, cut at the ends
}

TEST_F(ExportConsumers, SpeedscopeHasOneProfilePerThread) {
  const auto json = nlohmann::json::parse(slurp(export_to("quicksort_threads", "speedscope")));
  EXPECT_EQ(json["profiles"].size(), 5u);  // main and 4 workers
  for (const auto& p : json["profiles"]) {
    EXPECT_EQ(p["type"], "evented");
    EXPECT_EQ(p["events"].size() % 2, 0u);
  }
}

TEST_F(ExportConsumers, FoldedWeightsSumToTheCalls) {
  const std::string text = slurp(export_to("cpp_features", "folded", {"--simplify"}));
  std::uint64_t sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    sum += std::stoull(line.substr(line.rfind(' ') + 1));
    EXPECT_THAT(line, Not(HasSubstr("std::__cxx11")));
    EXPECT_THAT(line, Not(HasSubstr("<int>")));
  }
  const RunResult stats = parlot_read({"stats", trace("cpp_features").string()});
  std::uint64_t calls = 0;
  std::istringstream s(stats.out);
  bool in_calls = false;
  for (std::string line; std::getline(s, line);) {
    if (line.find("calls  function") != std::string::npos) {
      in_calls = true;
      continue;
    }
    if (line.find("calls  caller -> callee") != std::string::npos) break;
    if (in_calls) calls += std::stoull(line);
  }
  EXPECT_GT(calls, 100u);
  EXPECT_EQ(sum, calls);
}

TEST_F(ExportConsumers, HatchetLiteralParses) {
  const auto json = nlohmann::json::parse(slurp(export_to("cpp_features", "hatchet")));
  ASSERT_TRUE(json.is_array());
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json[0]["frame"]["name"], "main");
  EXPECT_GT(json[0]["metrics"]["calls (inc)"].get<std::uint64_t>(), 100u);
}

using Counts = std::map<std::uint64_t, std::uint64_t>;

/// Enter and Leave events per location, as otf2-print reads them from the
/// archive `archive`.
std::pair<Counts, Counts> otf2_enters_and_leaves(const fs::path& archive) {
  const RunResult r = run({"otf2-print", (archive / "traces.otf2").string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  Counts enters, leaves;  // location -> events
  std::istringstream in(r.out);
  const std::regex event(R"(^(ENTER|LEAVE)\s+(\d+)\s+\d+\s+Region: .*$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, event)) continue;
    (m[1] == "ENTER" ? enters : leaves)[std::stoull(m[2])]++;
  }
  return {enters, leaves};
}

/// Whether `bytes` is valid UTF-8 (nlohmann::json's strict dump checks it).
bool is_utf8(const std::string& bytes) {
  try {
    (void)nlohmann::json(bytes).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

/// Whether `bytes` holds a control character other than newline and tab.
bool has_control(const std::string& bytes) {
  return std::any_of(bytes.begin(), bytes.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f;
  });
}

// A function named by invalid UTF-8 with a terminal escape in it
// (odd_names_fixture: "odd" 0xff ESC "[31mname"): every export parses in
// its consumer. Graphviz's SVG of the DOT export was not well-formed XML;
// the folded, callgrind and DOT files were not UTF-8. Names and paths are
// exported with such bytes replaced by U+FFFD.
TEST_F(ExportConsumers, InvalidUtf8NamesExportToFilesTheirConsumersParse) {
  const fs::path odd = dir_->path() / "odd-names";
  const RunResult traced = run_traced({PARLOT_ODD_NAMES_FIXTURE}, odd);
  ASSERT_EQ(traced.exit_status, 0) << traced.err;
  const std::string formats = parlot_read({"export", "--help"}).out;
  for (const std::string format :
       {"chrome", "speedscope", "hatchet", "folded", "callgrind", "dot", "perfetto", "otf2"}) {
    if (formats.find(format) == std::string::npos) continue;  // built without it
    SCOPED_TRACE(format);
    const fs::path out = dir_->path() / ("odd." + format);
    const RunResult r = parlot_read({"export", "-f", format, "-o", out.string(), odd.string()});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    if (format == "otf2") {
      if (!have("otf2-print")) continue;
      const RunResult p = run({"otf2-print", "-G", (out / "traces.otf2").string()});
      EXPECT_EQ(p.exit_status, 0) << p.err;
      EXPECT_TRUE(is_utf8(p.out));
      EXPECT_THAT(p.out, HasSubstr("odd\xef\xbf\xbd\xef\xbf\xbd[31mname"));
      continue;
    }
    const std::string bytes = slurp(out);
    if (format == "perfetto") {
      if (!have("protoc")) continue;
      const RunResult p = run({"/bin/sh", "-c",
                               "protoc --proto_path=" PARLOT_PERFETTO_PROTO_DIR
                               " --decode=perfetto.protos.Trace perfetto_trace_subset.proto < " +
                                   out.string()});
      EXPECT_EQ(p.exit_status, 0) << p.err;
      // protoc prints a string's bytes: neither 0xff nor ESC is left.
      EXPECT_THAT(p.out, HasSubstr("[31mname"));
      EXPECT_THAT(p.out, Not(HasSubstr("\\377")));
      EXPECT_THAT(p.out, Not(HasSubstr("\\033")));
      // (Not the file's raw bytes: a varint, a time or an ID, may hold 0xff.)
      continue;
    }
    EXPECT_TRUE(is_utf8(bytes));
    EXPECT_FALSE(has_control(bytes));
    if (format == "chrome" || format == "speedscope" || format == "hatchet") {
      EXPECT_FALSE(nlohmann::json::parse(bytes).is_discarded());
    }
    EXPECT_THAT(bytes, HasSubstr("odd\xef\xbf\xbd\xef\xbf\xbd[31mname"));
    if (format == "dot" && have("dot")) {
      const fs::path svg = dir_->path() / "odd.svg";
      const RunResult d = run({"dot", "-Tsvg", "-o", svg.string(), out.string()});
      ASSERT_EQ(d.exit_status, 0) << d.err;
      if (fs::exists("/usr/bin/python3")) {
        const RunResult x =
            run({"/usr/bin/python3", "-c",
                 "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])", svg.string()});
        EXPECT_EQ(x.exit_status, 0) << "the SVG is not well-formed XML: " << x.err;
      }
    }
    if (format == "callgrind" && have("callgrind_annotate")) {
      const RunResult c = run({"callgrind_annotate", out.string()});
      EXPECT_EQ(c.exit_status, 0) << c.err;
    }
  }
}

// An OTF2 export that fails half-way (here: its event file goes over
// RLIMIT_FSIZE, as on a full disk) leaves nothing behind, as the other
// formats do: no archive under the output's name, no temporary sibling.
// (It left a broken archive directory.) An archive that exists already is
// refused without touching it.
TEST_F(ExportConsumers, FailedOtf2ExportLeavesNothingBehind) {
  const RunResult formats = parlot_read({"export", "--help"});
  if (formats.out.find("otf2") == std::string::npos) GTEST_SKIP() << "built without OTF2";
  const fs::path parent = dir_->path() / "otf2-failing";
  fs::create_directories(parent);
  const fs::path out = parent / "archive";
  const RunResult r = run(
      {"/bin/sh", "-c", "trap '' XFSZ; ulimit -f 16; exec \"$0\" export -f otf2 -o \"$1\" \"$2\"",
       PARLOT_READ_PATH, out.string(), trace("quicksort_threads").string()});
  EXPECT_EQ(r.exit_status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("otf2"));
  EXPECT_FALSE(fs::exists(out)) << "a failed export left " << out;
  EXPECT_TRUE(fs::is_empty(parent)) << "a failed export left files in " << parent;
  // Without the limit it is written, under its own name only.
  const RunResult ok = parlot_read(
      {"export", "-f", "otf2", "-o", out.string(), trace("quicksort_threads").string()});
  ASSERT_EQ(ok.exit_status, 0) << ok.err;
  EXPECT_TRUE(fs::exists(out / "traces.otf2"));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(parent)) ++entries;
  EXPECT_EQ(entries, 1u);
  const auto written = fs::last_write_time(out / "traces.otf2");
  const RunResult again = parlot_read(
      {"export", "-f", "otf2", "-o", out.string(), trace("quicksort_threads").string()});
  EXPECT_EQ(again.exit_status, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_EQ(fs::last_write_time(out / "traces.otf2"), written);
}

TEST_F(ExportConsumers, Otf2PrintEnterLeaveCountsPerLocationEqualEachThreads) {
  if (!have("otf2-print")) GTEST_SKIP() << "otf2-tools not installed";
  const RunResult formats = parlot_read({"export", "--help"});
  if (formats.out.find("otf2") == std::string::npos) GTEST_SKIP() << "built without OTF2";
  for (const std::string example : {"quicksort_threads", "cpp_features"}) {
    const fs::path archive = export_to(example, "otf2");
    const auto [enters, leaves] = otf2_enters_and_leaves(archive);
    // Locations are numbered in thread order.
    const auto processes = open_trace_directory(trace(example));
    std::map<std::uint64_t, std::uint64_t> expected;
    std::uint64_t location = 0;
    for (const auto& events : read_thread_events(processes[0])) {
      expected[location++] =
          std::count_if(events.begin(), events.end(), [](auto id) { return id != 0; });
    }
    EXPECT_EQ(enters, expected) << example;
    EXPECT_EQ(leaves, expected) << example;
    const RunResult defs = run({"otf2-print", "-G", (archive / "traces.otf2").string()});
    EXPECT_THAT(defs.out, HasSubstr("Ticks per Seconds: 1,"));  // 1 tick = 1 event
    EXPECT_TRUE(std::regex_search(defs.out, std::regex("LOCATION_GROUP .*pid ")));
    EXPECT_TRUE(std::regex_search(defs.out, std::regex(R"(REGION .*File: ".*\.c)")));
    const RunResult anchor = run({"otf2-print", "-A", (archive / "traces.otf2").string()});
    EXPECT_THAT(anchor.out, HasSubstr("logical clock"));
  }
}

TEST_F(ExportConsumers, PerfettoDecodesWithTheExpectedSlicesPerThread) {
  if (!have("protoc")) GTEST_SKIP() << "protobuf-compiler not installed";
  const RunResult formats = parlot_read({"export", "--help"});
  if (formats.out.find("perfetto") == std::string::npos) GTEST_SKIP() << "built without protozero";
  const fs::path file = export_to("quicksort_threads", "perfetto");
  const fs::path decoded = dir_->path() / "perfetto.txt";
  const RunResult r = run({"/bin/sh", "-c",
                           "protoc --proto_path=" PARLOT_PERFETTO_PROTO_DIR
                           " --decode=perfetto.protos.Trace perfetto_trace_subset.proto < " +
                               file.string() + " > " + decoded.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // Walk the text format: thread tracks (uuid -> tid), slices per track,
  // interned names per sequence.
  std::map<std::uint64_t, std::uint64_t> tid_of_track;
  std::map<std::uint64_t, std::uint64_t> begins, ends;  // track -> slices
  std::map<std::uint64_t, std::string> first_slice;     // track -> name of its first slice
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> names;  // (sequence, iid)
  std::istringstream in(slurp(decoded));
  std::uint64_t uuid = 0, sequence = 0, track = 0, iid = 0, name_iid = 0;
  std::string type;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> first_iids;
  const std::regex field(R"(^\s*(\w+): (.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line == "packet {") {
      type.clear();
      name_iid = 0;
      continue;
    }
    if (line == "}") {                                               // end of a packet
      if (type == "TYPE_SLICE_BEGIN" || type == "TYPE_SLICE_END") {  // not marks' instants
        (type == "TYPE_SLICE_BEGIN" ? begins : ends)[track]++;
        if (type == "TYPE_SLICE_BEGIN" && begins[track] == 1) {
          first_iids.emplace_back(track, sequence, name_iid);
        }
      }
      continue;
    }
    if (!std::regex_match(line, m, field)) continue;
    const std::string key = m[1];
    const std::string value = m[2];
    if (key == "uuid") uuid = std::stoull(value);
    if (key == "tid") tid_of_track[uuid] = std::stoull(value);
    if (key == "trusted_packet_sequence_id") sequence = std::stoull(value);
    if (key == "type") type = value;
    if (key == "track_uuid") track = std::stoull(value);
    if (key == "name_iid") name_iid = std::stoull(value);
    if (key == "iid") iid = std::stoull(value);
    if (key == "name" && line.starts_with("      name: ")) {  // in event_names
      names[{sequence, iid}] = value.substr(1, value.size() - 2);
    }
  }
  for (const auto& [t, seq, n] : first_iids) first_slice[t] = names[{seq, n}];
  const auto processes = open_trace_directory(trace("quicksort_threads"));
  std::map<std::uint64_t, std::uint64_t> expected, got_begins, got_ends;
  const auto events = read_thread_events(processes[0]);
  std::uint64_t main_tid = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const std::uint64_t tid = ThreadEventReader(processes[0].thread_files[i]).summary().tid;
    if (i == 0) main_tid = tid;
    expected[tid] = std::count_if(events[i].begin(), events[i].end(), [](auto id) { return id; });
  }
  for (const auto& [t, n] : begins) got_begins[tid_of_track.at(t)] = n;
  for (const auto& [t, n] : ends) got_ends[tid_of_track.at(t)] = n;
  EXPECT_EQ(got_begins, expected);
  EXPECT_EQ(got_ends, expected);
  for (const auto& [t, name] : first_slice) {
    EXPECT_EQ(name, tid_of_track.at(t) == main_tid ? "main" : "sort_worker") << t;
  }
}

TEST_F(ExportConsumers, ClockSamplesGiveARealTimeAxis) {
  const fs::path timed = dir_->path() / "timed";
  // Every event timed (PARLOT_CLOCK_EVENTS=1), then the default interval
  // with every sample read kept (no swing-door filter).
  for (const std::string n : {"1", "1024"}) {
    const fs::path dir = timed / n;
    RunResult r = run_traced({examples_dir() + "/quicksort_threads"}, dir,
                             {"PARLOT_CLOCK_EVENTS=" + n, "PARLOT_CLOCK_TOLERANCE_NS=0"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    const auto processes = open_trace_directory(dir);
    ASSERT_EQ(processes.size(), 1u);
    for (const auto& file : processes[0].thread_files) {
      ThreadEventReader reader(file);
      const auto& s = reader.summary();
      EXPECT_EQ(s.version, format::kVersion);
      ASSERT_GE(s.clock_samples.size(), 2u);
      EXPECT_EQ(s.clock_samples.front().event_index, 0u);
      EXPECT_EQ(s.clock_samples.back().event_index, s.trailer->events);  // at the end
      std::uint64_t largest_gap = 0;
      for (std::size_t i = 1; i < s.clock_samples.size(); ++i) {
        largest_gap = std::max(largest_gap,
                               s.clock_samples[i].event_index - s.clock_samples[i - 1].event_index);
      }
      EXPECT_LE(largest_gap, std::stoull(n));
      if (n == "1") {
        EXPECT_GE(s.clock_samples.size(), s.trailer->events);
      }
    }
    const fs::path out = dir / "trace.json";
    r = parlot_read({"export", "-f", "chrome", dir.string(), "-o", out.string()});
    ASSERT_EQ(r.exit_status, 0) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("logical clock")));
    const auto json = nlohmann::json::parse(slurp(out));
    EXPECT_THAT(json["otherData"]["clock"].get<std::string>(), HasSubstr("CLOCK_MONOTONIC"));
    std::map<std::uint64_t, double> last;
    double largest = 0;
    for (const auto& e : json["traceEvents"]) {
      if (e["ph"] == "M") continue;
      const double ts = e["ts"];
      const std::uint64_t tid = e["tid"];
      EXPECT_GE(ts, last[tid]);
      last[tid] = ts;
      largest = std::max(largest, ts);
    }
    // The run took more than 10 us and less than the test's timeout.
    EXPECT_GT(largest, 10.0);
    EXPECT_LT(largest, 120e6);
    r = parlot_read({"report", "--by", "function", dir.string()});
    EXPECT_THAT(r.out, HasSubstr("total ns"));
  }
}

struct ReportRow {
  std::uint64_t total, self, calls, depth;
};

/// `parlot-read report` output -> rows by function, in printed order.
std::vector<std::pair<std::string, ReportRow>> parse_report(const std::string& out) {
  std::vector<std::pair<std::string, ReportRow>> rows;
  std::istringstream in(out);
  const std::regex row(R"(^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)  (.*)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (line.starts_with("#") || line.find("total events") != std::string::npos) continue;
    if (!std::regex_match(line, m, row)) continue;
    rows.push_back(
        {m[5], {std::stoull(m[1]), std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4])}});
  }
  return rows;
}

/// The start of a `report --by thread|rank` row, as a regex: the columns
/// total, calls, functions, max depth right-aligned as printed.
std::string fmt_row(const std::string& total, const std::string& calls,
                    const std::string& functions, const std::string& depth) {
  auto pad = [](const std::string& v, std::size_t width) {
    return std::string(width > v.size() ? width - v.size() : 0, ' ') + v;
  };
  return pad(total, 16) + "  " + pad(calls, 12) + "  " + pad(functions, 9) + "  " + pad(depth, 9) +
         "  ";
}

TEST_F(ExportConsumers, ReportCallsEqualStatsAndSelfCostsAddUpToTheEvents) {
  const RunResult r = parlot_read(
      {"report", "--by", "function", "--sort", "calls", trace("quicksort_threads").string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# time axis: logical clock"));
  const auto rows = parse_report(r.out);
  ASSERT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows[0].first, "swap");  // the most called
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_GE(rows[i - 1].second.calls, rows[i].second.calls);
  }
  std::map<std::string, std::uint64_t> callee_calls;
  for (const auto& [edge, n] : stats_edges("quicksort_threads")) callee_calls[edge.second] += n;
  std::uint64_t self = 0;
  for (const auto& [name, row] : rows) {
    self += row.self;
    EXPECT_GE(row.total, row.self) << name;
    // Every call but the threads' outermost (main, sort_worker) has a caller.
    if (name != "main" && name != "sort_worker") {
      EXPECT_EQ(row.calls, callee_calls[name]) << name;
    }
  }
  // Each thread's one outermost call spans its events but one.
  const auto processes = open_trace_directory(trace("quicksort_threads"));
  std::uint64_t events = 0;
  for (const auto& e : read_thread_events(processes[0])) events += e.size() - 1;
  EXPECT_EQ(self, events);
  for (const auto& [name, row] : rows) {
    if (name == "main") {
      EXPECT_EQ(row.depth, 1u);
    }
    if (name == "swap") {
      EXPECT_GT(row.depth, 3u);  // under recursive quicksort
    }
  }
}

TEST_F(ExportConsumers, ReportDiffGivesDeltas) {
  const std::string qs = trace("quicksort_threads").string();
  RunResult r = parlot_read({"report", qs, "--diff", qs});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  auto rows = parse_report(r.out);
  ASSERT_EQ(rows.size(), 13u);
  for (const auto& [name, row] : rows) EXPECT_EQ(row.calls, 0u) << name;
  r = parlot_read({"report", qs, "--diff", trace("cpp_features").string(), "--sort", "calls"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // swap: 1127 calls of one event each, at depth up to 12, gone in the other trace.
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s+-1127\s+-1127\s+-1127\s+-12  swap\n)")))
      << r.out;
}

// The default time axis (a clock read every 1024 events, kept through the
// swing-door filter) places calls of 1-3 ms to within 10% of the length the
// program measured itself, with fewer samples kept than read. Events are
// interpolated between samples, so a stall (the test machine preempting the
// program) inside a sample interval moves them by up to its length: the
// fixture reports its stalls around each call and the bound allows for them.
TEST_F(ExportConsumers, DefaultTimeAxisPlacesMillisecondCallsWithinTenPercent) {
  const fs::path dir = dir_->path() / "timed_phases";
  RunResult r = run_traced({PARLOT_TIMED_PHASES}, dir);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::vector<double> measured_us, stalled_us;
  std::istringstream lines(r.out);
  for (double ns, stall; lines >> ns >> stall;) {
    measured_us.push_back(ns / 1000.0);
    stalled_us.push_back(stall / 1000.0);
  }
  ASSERT_EQ(measured_us.size(), 6u) << r.out;

  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  ASSERT_EQ(processes[0].thread_files.size(), 1u);
  ThreadEventReader reader(processes[0].thread_files[0]);
  const auto& s = reader.summary();
  ASSERT_TRUE(s.trailer.has_value());
  // One clock read per 1024 events; the filter keeps far fewer.
  EXPECT_GE(s.clock_samples.size(), 2u);
  EXPECT_LT(s.clock_samples.size(), s.trailer->events / 1024 / 4);

  const fs::path out = dir / "trace.json";
  r = parlot_read({"export", "-f", "chrome", dir.string(), "-o", out.string()});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto json = nlohmann::json::parse(slurp(out));
  std::vector<double> traced_us;
  std::vector<std::pair<std::string, double>> open;  // name, begin (us)
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "B") open.emplace_back(e["name"].get<std::string>(), e["ts"].get<double>());
    if (e["ph"] == "E") {
      ASSERT_FALSE(open.empty());
      if (open.back().first == "phase")
        traced_us.push_back(e["ts"].get<double>() - open.back().second);
      open.pop_back();
    }
  }
  ASSERT_EQ(traced_us.size(), measured_us.size());
  for (std::size_t k = 0; k < traced_us.size(); ++k) {
    EXPECT_NEAR(traced_us[k], measured_us[k], measured_us[k] * 0.10 + stalled_us[k])
        << "phase call " << k << ", stalls around it " << stalled_us[k] << " us";
  }
}

/// Folded stacks ("a;b;c N" lines) -> weight per call path.
std::map<std::string, std::uint64_t> parse_folded(const std::string& text) {
  std::map<std::string, std::uint64_t> paths;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with("#")) continue;
    const auto space = line.rfind(' ');
    paths[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return paths;
}

/// What the filter stage must make of unfiltered folded stacks (calls per
/// path, logical clock): frames `keep` rejects vanish, a path whose own
/// function is rejected goes, and so does one longer than `max_depth` frames
/// once filtered (0: any).
std::map<std::string, std::uint64_t> filter_folded(
    const std::map<std::string, std::uint64_t>& all,
    const std::function<bool(const std::string&)>& keep, std::size_t max_depth) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& [path, n] : all) {
    std::vector<std::string> frames;
    std::istringstream in(path);
    for (std::string f; std::getline(in, f, ';');) frames.push_back(f);
    if (!keep(frames.back())) continue;
    std::string kept;
    std::size_t depth = 0;
    for (const auto& f : frames) {
      if (!keep(f)) continue;
      kept += (depth++ == 0 ? "" : ";") + f;
    }
    if (max_depth != 0 && depth > max_depth) continue;
    out[kept] += n;
  }
  return out;
}

// --exclude of a mid-level function (partition: called by quicksort, calls
// swap): its callees nest under its nearest kept caller, exactly as if its
// frames were cut out of every call path; --include and --max-depth alike.
TEST_F(ExportConsumers, FilteredFoldedExportNestsCalleesUnderTheNearestKeptCaller) {
  const auto all = parse_folded(slurp(export_to("quicksort_threads", "folded")));
  ASSERT_TRUE(all.contains("sort_worker;quicksort;partition;swap"));
  const auto no_partition = parse_folded(slurp(
      export_to("quicksort_threads", "folded", {"--exclude", "^partition$"}, "-no-partition")));
  EXPECT_EQ(no_partition, filter_folded(
                              all, [](const std::string& f) { return f != "partition"; }, 0));
  EXPECT_TRUE(no_partition.contains("sort_worker;quicksort;swap"));
  EXPECT_EQ(no_partition.at("sort_worker;quicksort;swap"),
            all.at("sort_worker;quicksort;partition;swap"));

  const std::set<std::string> kept{"main", "sort_worker", "quicksort", "swap"};
  const auto narrowed = parse_folded(slurp(export_to(
      "quicksort_threads", "folded",
      {"--include", "^(main|sort_worker|quicksort|swap)$", "--max-depth", "3"}, "-narrowed")));
  EXPECT_EQ(narrowed, filter_folded(
                          all, [&](const std::string& f) { return kept.contains(f); }, 3));
  EXPECT_TRUE(narrowed.contains("sort_worker;quicksort;swap"));
  for (const auto& [path, n] : narrowed) {
    EXPECT_LE(std::count(path.begin(), path.end(), ';'), 2) << path;
  }
}

/// Calls per thread (in the threads' order) from `parlot-read stats --by
/// thread` with `extra` options.
std::vector<std::uint64_t> stats_calls_per_thread(const fs::path& trace,
                                                  std::vector<std::string> extra) {
  std::vector<std::string> args{"stats", "--by", "thread", trace.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = parlot_read(args);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  std::vector<std::uint64_t> calls;
  bool in_calls = false;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("== thread ")) calls.push_back(0);
    if (line.find("calls  function") != std::string::npos) {
      in_calls = true;
    } else if (line.find("calls  caller -> callee") != std::string::npos) {
      in_calls = false;
    } else if (in_calls && !calls.empty()) {
      calls.back() += std::stoull(line);
    }
  }
  return calls;
}

// The consumers read filtered exports with the counts `stats` gives under
// the same filter: callgrind_annotate's call arcs, otf2-print's Enter and
// Leave events per location.
TEST_F(ExportConsumers, FilteredCallgrindAndOtf2CountsEqualStatsUnderTheSameFilter) {
  const std::vector<std::string> filter{"--exclude", "^partition$"};
  const Edges expected = stats_edges("quicksort_threads", filter);
  EXPECT_TRUE(expected.contains({"quicksort", "swap"}));
  for (const auto& [edge, n] : expected) {
    EXPECT_NE(edge.first, "partition");
    EXPECT_NE(edge.second, "partition");
  }
  if (have("callgrind_annotate")) {
    EXPECT_EQ(annotated_edges(export_to("quicksort_threads", "callgrind", filter, "-filtered")),
              expected);
  }
  const RunResult formats = parlot_read({"export", "--help"});
  if (!have("otf2-print") || formats.out.find("otf2") == std::string::npos) {
    GTEST_SKIP() << "otf2-print or the otf2 format missing";
  }
  const auto [enters, leaves] =
      otf2_enters_and_leaves(export_to("quicksort_threads", "otf2", filter, "-filtered"));
  const auto calls = stats_calls_per_thread(trace("quicksort_threads"), filter);
  ASSERT_EQ(calls.size(), 5u);
  Counts expected_calls;
  for (std::size_t k = 0; k < calls.size(); ++k) expected_calls[k] = calls[k];
  EXPECT_EQ(enters, expected_calls);
  EXPECT_EQ(leaves, expected_calls);
}

// A bad pattern is a usage error before any output is written.
TEST_F(ExportConsumers, ExportRefusesABadFilterPattern) {
  const fs::path out = dir_->path() / "bad-pattern.folded";
  const RunResult r = parlot_read({"export", "-f", "folded", "--exclude", "(",
                                   trace("quicksort_threads").string(), "-o", out.string()});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err, HasSubstr("error"));
  EXPECT_FALSE(fs::exists(out));
}

// rounds_threads (4 workers, 10 rounds, logical clock) is deterministic:
// main (thread 0) calls parse_args and start_worker x 4; worker w (thread
// w + 1) calls compute_share, publish and end_round once per round. So a
// worker makes 31 calls over 62 events (its outermost call spans 61), main
// 6 calls over 12 events (11).
TEST_F(ExportConsumers, ReportByThreadAndByRankHaveExactColumns) {
  const std::string dir = trace("rounds_threads").string();
  RunResult r = parlot_read({"report", "--by", "thread", dir});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("# time axis: logical clock"));
  EXPECT_EQ(lines[1], "    total events         calls  functions  max depth  thread");
  // Sorted by total, ties in thread order; pid and tid vary between runs.
  for (int w = 0; w < 4; ++w) {
    EXPECT_TRUE(std::regex_match(lines[2 + w],
                                 std::regex(fmt_row("61", "31", "4", "2") + "process 0 thread " +
                                            std::to_string(w + 1) + R"( \(pid \d+, tid \d+\))")))
        << lines[2 + w];
  }
  EXPECT_TRUE(std::regex_match(lines[6], std::regex(fmt_row("11", "6", "3", "2") +
                                                    R"(process 0 thread 0 \(pid \d+, tid \d+\))")))
      << lines[6];

  r = parlot_read({"report", "--by", "rank", dir});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\n" + fmt_row("255", "130", "7", "2") +
                                                  R"(process 0 \(pid \d+, .*rounds_threads\)\n)")))
      << r.out;

  // Filtered: without publish, a worker makes 21 calls over 42 events.
  r = parlot_read({"report", "--by", "thread", "--exclude", "^publish$", "--sort", "calls", dir});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\n" + fmt_row("61", "21", "3", "2") + "process 0 thread 1 ")))
      << r.out;

  // Per function under the same filter: the workers' outermost calls.
  r = parlot_read({"report", "--by", "function", "--exclude", "^worker$", dir});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto rows = parse_report(r.out);
  std::map<std::string, ReportRow> by_name(rows.begin(), rows.end());
  EXPECT_FALSE(by_name.contains("worker"));
  ASSERT_TRUE(by_name.contains("compute_share"));
  const ReportRow& c = by_name.at("compute_share");
  EXPECT_EQ(c.calls, 40u);
  EXPECT_EQ(c.total, 40u);
  EXPECT_EQ(c.self, 40u);
  EXPECT_EQ(c.depth, 1u);

  // --diff by thread: the same run against itself changes nothing.
  r = parlot_read({"report", "--by", "thread", dir, "--diff", dir});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("\n" + fmt_row("0", "0", "0", "0") + "process 0 thread 4\n")))
      << r.out;
}

}  // namespace
}  // namespace parlot::e2e
