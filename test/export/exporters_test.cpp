// Every format fed with hand-written streams: two processes whose function
// IDs differ, two threads in the first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "export/exporter.h"
#include "temp_dir.h"

namespace parlot::exporter {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class MapFunctions final : public FunctionSource {
 public:
  explicit MapFunctions(std::map<std::uint32_t, std::string> names) : names_(std::move(names)) {}
  const FunctionInfo& function(std::uint32_t id) override {
    auto [it, added] = infos_.try_emplace(id);
    if (added) it->second = {names_.at(id), "src/f.c", 10 * id};
    return it->second;
  }

 private:
  std::map<std::uint32_t, std::string> names_;
  std::map<std::uint32_t, FunctionInfo> infos_;
};

void feed_thread(Exporter& out, std::uint64_t pid, std::uint64_t tid, std::uint64_t index,
                 const std::vector<std::uint32_t>& ids) {
  out.begin_thread({pid, tid, index});
  CallStackTracker tracker(0, "test");
  std::uint64_t time = 0;
  for (const std::uint32_t id : ids) out.event(tracker.push(id), time++);
  out.end_thread(time);
}

/// Runs `format` over: process 100 (main=1 a=2 b=3), thread 0 main{a{b}b},
/// thread 1 a{b}; process 200 (main=5 b=6), thread 0 main{b}. Returns the file.
std::string export_example(const std::string& format, ExportOptions options = {}) {
  test::TempDir dir;
  const std::string path = (dir.path() / "out").string();
  auto out = make_exporter(format, path, options);
  EXPECT_NE(out, nullptr);
  MapFunctions p1({{1, "main"}, {2, "a"}, {3, "b"}});
  out->begin_process({100, "0", "/bin/app", "host", 0, &p1});
  feed_thread(*out, 100, 100, 0, {1, 2, 3, 0, 0, 3, 0, 0});
  feed_thread(*out, 100, 101, 1, {2, 3, 0, 0});
  MapFunctions p2({{5, "main"}, {6, "b"}});
  out->begin_process({200, "1", "/bin/app", "host", 0, &p2});
  feed_thread(*out, 200, 200, 0, {5, 6, 0, 0});
  out->end();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The folded size is computed exactly before anything is written: at the
// limit the file is written, one byte under it the export fails naming the
// size and the depth (a deep recursion's file grows with the depth squared).
TEST(Exporters, FoldedRefusesOutputOverItsLimit) {
  const std::string full = "main 2\nmain;a 1\nmain;a;b 1\nmain;b 2\na 1\na;b 1\n";
  ExportOptions options;
  options.folded_max_bytes = full.size();
  EXPECT_EQ(export_example("folded", options), full);
  options.folded_max_bytes = full.size() - 1;
  try {
    export_example("folded", options);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a folded export would take 46 bytes (call paths up to 3 "
                                    "frames deep"));
    EXPECT_THAT(e.what(), HasSubstr("--max-depth"));
  }
}

TEST(Exporters, UnknownFormatIsNull) {
  EXPECT_EQ(make_exporter("nope", "/dev/null", {}), nullptr);
  EXPECT_THAT(export_format_names(), ::testing::Contains("chrome"));
}

TEST(Exporters, FoldedCountsCallsPerPathMergedByName) {
  // b is at line 30 in process 100 and 60 in process 200: folded has names
  // only, so both main;b paths add up.
  EXPECT_EQ(export_example("folded"), "main 2\nmain;a 1\nmain;a;b 1\nmain;b 2\na 1\na;b 1\n");
}

TEST(Exporters, ChromeHasNestedEventsPerThreadOnTheLogicalClock) {
  const auto json = nlohmann::json::parse(export_example("chrome"));
  EXPECT_THAT(json["otherData"]["clock"].get<std::string>(), HasSubstr("logical clock"));
  std::map<std::uint64_t, int> depth;  // tid -> open B
  std::map<std::uint64_t, int> begins;
  std::map<std::uint64_t, std::uint64_t> last_ts;
  std::vector<std::string> process_names;
  for (const auto& e : json["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "process_name") process_names.push_back(e["args"]["name"]);
      continue;
    }
    const std::uint64_t tid = e["tid"];
    const std::uint64_t ts = e["ts"];
    EXPECT_GE(ts, last_ts[tid]);
    last_ts[tid] = ts;
    if (ph == "B") {
      ++depth[tid];
      ++begins[tid];
    } else {
      ASSERT_EQ(ph, "E");
      ASSERT_GT(depth[tid], 0);
      --depth[tid];
    }
  }
  EXPECT_EQ((begins), (std::map<std::uint64_t, int>{{100, 4}, {101, 2}, {200, 2}}));
  for (const auto& [tid, d] : depth) EXPECT_EQ(d, 0) << tid;
  EXPECT_THAT(process_names,
              ::testing::ElementsAre("rank 0 pid 100 /bin/app", "rank 1 pid 200 /bin/app"));
}

TEST(Exporters, SpeedscopeOneEventedProfilePerThreadWithSharedFrames) {
  const auto json = nlohmann::json::parse(export_example("speedscope"));
  ASSERT_EQ(json["profiles"].size(), 3u);
  const auto& frames = json["shared"]["frames"];
  ASSERT_EQ(frames.size(), 5u);  // main, a, b of 100; main, b of 200 (other lines)
  const auto& p0 = json["profiles"][0];
  EXPECT_EQ(p0["type"], "evented");
  EXPECT_EQ(p0["unit"], "none");
  EXPECT_EQ(p0["startValue"], 0);
  EXPECT_EQ(p0["endValue"], 8);
  ASSERT_EQ(p0["events"].size(), 8u);
  EXPECT_EQ(p0["events"][0]["type"], "O");
  EXPECT_EQ(frames[p0["events"][0]["frame"].get<int>()]["name"], "main");
  EXPECT_EQ(frames[p0["events"][2]["frame"].get<int>()]["name"], "b");
  EXPECT_EQ(p0["events"][3]["type"], "C");
  EXPECT_EQ(p0["events"][3]["at"], 3);
  // Thread 1 of the same process reuses the frames of thread 0.
  EXPECT_EQ(json["profiles"][1]["events"][0]["frame"], p0["events"][1]["frame"]);
}

TEST(Exporters, CallgrindHasCallsAndInclusiveCostPerArc) {
  const std::string text = export_example("callgrind");
  EXPECT_THAT(text, HasSubstr("# callgrind format\n"));
  EXPECT_THAT(text, HasSubstr("events: Events\n"));
  // main (line 10) -> a (line 20): 1 call of inclusive cost 3, made at main's line.
  EXPECT_THAT(text, HasSubstr("cfn=(2) a\ncalls=1 20\n10 3\n"));
  // Exclusive costs: main 3 + a 2+2 + b 1+1+1 (line 30) + main 2 + b 1 (process 200).
  EXPECT_THAT(text, HasSubstr("\ntotals: 13\n"));
}

TEST(Exporters, DotKeepsTheTopEdges) {
  ExportOptions options;
  EXPECT_THAT(export_example("dot", options), HasSubstr("f0 -> f1 [label=\"1\"]"));
  options.top_edges = 1;
  const std::string top1 = export_example("dot", options);
  EXPECT_THAT(top1, HasSubstr("1 of 4 edges shown"));
  EXPECT_EQ(std::count(top1.begin(), top1.end(), '>'), 1);
  EXPECT_THAT(top1, HasSubstr("f0 [label=\"a\\n2 calls\"]"));  // a -> b: twice
  EXPECT_THAT(top1, HasSubstr("f0 -> f1 [label=\"2\"]"));
}

TEST(Exporters, HatchetLiteralTreeWithInclusiveAndExclusiveMetrics) {
  const auto json = nlohmann::json::parse(export_example("hatchet"));
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 3u);  // main (process 100), a (thread 1), main (process 200, other line)
  const auto& main = json[0];
  EXPECT_EQ(main["frame"]["name"], "main");
  EXPECT_EQ(main["frame"]["type"], "function");
  EXPECT_EQ(main["metrics"]["calls"], 1);
  EXPECT_EQ(main["metrics"]["calls (inc)"], 4);
  EXPECT_EQ(main["metrics"]["events (inc)"], 7);
  EXPECT_EQ(main["metrics"]["events"], 3);
  ASSERT_EQ(main["children"].size(), 2u);
  EXPECT_EQ(main["children"][0]["children"][0]["frame"]["name"], "b");
}

TEST(Exporters, Otf2LocationGroupPerProcessNamedByRank) {
  const auto& names = export_format_names();
  if (std::find(names.begin(), names.end(), "otf2") == names.end()) {
    GTEST_SKIP() << "built without OTF2";
  }
  test::TempDir dir;
  const std::string archive = (dir.path() / "archive").string();
  auto out = make_exporter("otf2", archive, {});
  MapFunctions p1({{1, "main"}, {2, "a"}, {3, "b"}});
  out->begin_process({100, "0", "/bin/app", "host", 0, &p1});
  feed_thread(*out, 100, 100, 0, {1, 2, 3, 0, 0, 3, 0, 0});
  feed_thread(*out, 100, 101, 1, {2, 3, 0, 0});
  MapFunctions p2({{5, "main"}, {6, "b"}});
  out->begin_process({200, "1", "/bin/app", "host", 0, &p2});
  feed_thread(*out, 200, 200, 0, {5, 6, 0, 0});
  out->end();
  const std::string command = "otf2-print -G " + archive + "/traces.otf2 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  if (pclose(pipe) != 0 && text.find("not found") != std::string::npos) {
    GTEST_SKIP() << "otf2-print not installed";
  }
  EXPECT_THAT(text, HasSubstr("\"rank 0 pid 100\""));
  EXPECT_THAT(text, HasSubstr("\"rank 1 pid 200\""));
  EXPECT_THAT(text, HasSubstr("\"thread #1 (tid 101)\""));
  EXPECT_THAT(text, HasSubstr("# Events: 8"));
  // Regions by name, file and line: main and b of process 200 are at other lines.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') > 0, true);
  std::size_t regions = 0;
  for (std::size_t at = text.find("\nREGION "); at != std::string::npos;
       at = text.find("\nREGION ", at + 1)) {
    ++regions;
  }
  EXPECT_EQ(regions, 5u);
}

TEST(Exporters, UnwritableOutputThrows) {
  EXPECT_THROW(make_exporter("folded", "/nonexistent-dir/x", {}), std::runtime_error);
}

}  // namespace
}  // namespace parlot::exporter
