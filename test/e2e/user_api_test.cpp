// The user API (include/parlot/parlot.h) under the runtime: paused calls
// are absent, exactly (against the oracle recorder, which marks where the
// program paused and resumed), pause_all covers new threads, parlot_flush()
// puts the data on disk before a SIGKILL, the stub answers untraced, and
// marks (parlot_mark) sit at their places in every view that shows events
// in order (trace, jsonl, diff, the chrome/perfetto/otf2 exports).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

// The oracle's events of the (single-threaded) run, with the calls made
// between its "P" and "R" marks (nesting) dropped.
Lines oracle_unpaused_events(const std::vector<std::string>& argv) {
  TempDir dir;
  const RunResult r = run(argv, {std::string("LD_PRELOAD=") + PARLOT_ORACLE_PATH,
                                 "PARLOT_ORACLE_DIR=" + dir.path().string()});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  Lines lines;
  int paused = 0;
  std::size_t files = 0;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    ++files;
    std::ifstream in(f.path());
    for (std::string line; std::getline(in, line);) {
      if (line == "P") {
        ++paused;
      } else if (line == "R") {
        --paused;
      } else if (paused == 0) {
        lines.push_back(line);
      }
    }
  }
  EXPECT_EQ(files, 1u);
  return lines;
}

// Parlot's events of the only thread in the oracle's notation.
Lines parlot_events(const fs::path& trace_dir) {
  const auto processes = open_trace_directory(trace_dir);
  EXPECT_EQ(processes.size(), 1u);
  const auto& p = processes.at(0);
  Lines lines;
  for (const auto& events : read_thread_events(p)) {
    for (const std::uint32_t id : events) {
      if (id == 0) {
        lines.push_back("X");
        continue;
      }
      const std::uint64_t address = p.function_addresses.at(id - 1);
      std::string where = "?";
      for (const auto& o : p.load_map) {
        if (!o.contains(address)) continue;
        char buf[64];
        std::snprintf(buf, sizeof buf, "+%lx", static_cast<unsigned long>(address - o.load_bias));
        where = fs::path(o.path).filename().string() + buf;
      }
      lines.push_back("E " + where);
    }
  }
  return lines;
}

TEST(UserApi, PausedCallsAreAbsentExactly) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_API_FIXTURE, "pause"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "tracing=1\n");
  const Lines want = oracle_unpaused_events({PARLOT_API_FIXTURE, "pause"});
  // main, phase, visible x3: 5 entries and 5 exits survive the pauses.
  ASSERT_EQ(want.size(), 10u);
  EXPECT_EQ(parlot_events(dir.path()), want);
  const RunResult t = parlot_read({"trace", dir.path().string()});
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("hidden")));
  for (const auto& process : open_trace_directory(dir.path())) {
    ThreadEventReader reader(process.thread_files.at(0));
    EXPECT_EQ(reader.summary().trailer->corrected_exits, 0u);
    EXPECT_EQ(reader.summary().trailer->unmatched_exits, 0u);
  }
}

TEST(UserApi, PauseAllCoversThreadsStartedWhilePaused) {
  TempDir dir;
  const RunResult r = run_traced({PARLOT_API_FIXTURE, "pause_all"}, dir.path());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 1u) << t.out;  // the worker never recorded a call
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  visible();\n"
            "} /* main() */\n");
}

TEST(UserApi, FlushPutsTheEventsOnDiskBeforeAKill) {
  for (const char* compress : {"0", "1"}) {
    SCOPED_TRACE(std::string("PARLOT_COMPRESS=") + compress);
    TempDir flushed, not_flushed;
    const std::vector<std::string> env{"PARLOT_FLUSH_MS=0", "PARLOT_BUFFER_KB=1024",
                                       std::string("PARLOT_COMPRESS=") + compress};
    const RunResult r = run_traced({PARLOT_API_FIXTURE, "flush", "1000"}, flushed.path(), env);
    EXPECT_EQ(r.signal, SIGKILL);
    EXPECT_THAT(r.out, HasSubstr("flush=0\n"));
    run_traced({PARLOT_API_FIXTURE, "noflush", "1000"}, not_flushed.path(), env);
    auto events_on_disk = [](const fs::path& d) {
      const auto processes = open_trace_directory(d);
      EXPECT_EQ(processes.size(), 1u);
      std::uint64_t n = 0;
      for (const auto& e : read_thread_events(processes.at(0))) n += e.size();
      return n;
    };
    // main's entry and 1000 calls of visible (2 events each). Uncompressed,
    // all of them; compressed, all but what a pending match holds.
    const std::uint64_t on_disk = events_on_disk(flushed.path());
    if (std::string(compress) == "0") {
      EXPECT_EQ(on_disk, 2001u);
    } else {
      EXPECT_GT(on_disk, 0u);
      EXPECT_LE(on_disk, 2001u);
    }
    EXPECT_EQ(events_on_disk(not_flushed.path()), 0u);
  }
}

// api_fixture marks, traced once for the mark tests.
class Marks : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    // No clock samples: the exports then use the logical clock (event
    // indices), which the tests assert exactly.
    const RunResult r =
        run_traced({PARLOT_API_FIXTURE, "marks"}, dir_->path(), {"PARLOT_CLOCK_EVENTS=0"});
    ASSERT_EQ(r.exit_status, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string dir() { return dir_->path().string(); }
  static bool have(const std::string& program) {
    return run({"/bin/sh", "-c", "command -v " + program}).exit_status == 0;
  }
  static TempDir* dir_;
};
TempDir* Marks::dir_ = nullptr;

const char* const kMainWithMarks =
    "main() {\n"
    "  @ mark \"in main\"\n"
    "  visible();\n"
    "  marked() {\n"
    "    @ mark \"inside\"\n"
    "    visible();\n"
    "  } /* marked() */\n"
    "  leaf_with_mark() {\n"
    "    @ mark \"leaf\"\n"
    "  } /* leaf_with_mark() */\n"
    "  @ mark \"odd \\x1b[31m \\\"q\\\" \\\\ end\"\n"
    "} /* main() */\n";

TEST_F(Marks, TraceShowsEachMarkAtItsPlaceOnItsThread) {
  const RunResult t = parlot_read({"trace", dir()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  const auto threads = split_threads(t.out);
  ASSERT_EQ(threads.size(), 3u) << t.out;
  EXPECT_EQ(threads[0], kMainWithMarks);
  // A mark before the thread's first event, made by a thread the runtime
  // had not seen yet; and a thread with a mark and no event at all.
  EXPECT_EQ(threads[1], "@ mark \"thread 1\"\nvisible();\n");
  EXPECT_EQ(threads[2], "@ mark \"thread 2\"\n");
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("paused")));  // marked while paused
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("\x1b")));    // no raw ESC reaches a terminal
}

TEST_F(Marks, FiltersNeverDropMarks) {
  const RunResult excluded = parlot_read({"trace", dir(), "--exclude", "^marked$"});
  ASSERT_EQ(excluded.exit_status, 0) << excluded.err;
  // marked() is gone; its mark and callee nest under main.
  EXPECT_EQ(split_threads(excluded.out).at(0),
            "main() {\n"
            "  @ mark \"in main\"\n"
            "  visible();\n"
            "  @ mark \"inside\"\n"
            "  visible();\n"
            "  leaf_with_mark() {\n"
            "    @ mark \"leaf\"\n"
            "  } /* leaf_with_mark() */\n"
            "  @ mark \"odd \\x1b[31m \\\"q\\\" \\\\ end\"\n"
            "} /* main() */\n");
  const RunResult shallow = parlot_read({"trace", dir(), "--max-depth", "1"});
  ASSERT_EQ(shallow.exit_status, 0) << shallow.err;
  const auto threads = split_threads(shallow.out);
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads[0],
            "main() {\n"
            "  @ mark \"in main\"\n"
            "  @ mark \"inside\"\n"
            "  @ mark \"leaf\"\n"
            "  @ mark \"odd \\x1b[31m \\\"q\\\" \\\\ end\"\n"
            "} /* main() */\n");
  EXPECT_EQ(threads[2], "@ mark \"thread 2\"\n");
}

TEST_F(Marks, JsonlHasAMarkRecordWithTheEventIndex) {
  const RunResult t = parlot_read({"trace", dir(), "--format", "jsonl"});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  // Per thread, the sequence of kinds (marks with index, depth and label).
  std::map<std::uint64_t, std::vector<std::string>> by_tid;
  std::istringstream in(t.out);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    std::string item = j.at("kind").get<std::string>();
    if (item == "mark") {
      item += " " + std::to_string(j.at("index").get<std::uint64_t>()) + " " +
              std::to_string(j.at("depth").get<int>()) + " " + j.at("label").get<std::string>();
    } else {
      item += " " + j.at("function").get<std::string>();
    }
    by_tid[j.at("tid").get<std::uint64_t>()].push_back(item);
  }
  ASSERT_EQ(by_tid.size(), 3u);
  auto it = by_tid.begin();
  EXPECT_EQ(it->second,
            (std::vector<std::string>{
                "enter main", "mark 1 1 in main", "enter visible", "exit visible", "enter marked",
                "mark 4 2 inside", "enter visible", "exit visible", "exit marked",
                "enter leaf_with_mark", "mark 8 2 leaf", "exit leaf_with_mark",
                "mark 9 1 odd \x1b[31m \"q\" \\ end", "exit main"}));
  ++it;
  EXPECT_EQ(it->second,
            (std::vector<std::string>{"mark 0 0 thread 1", "enter visible", "exit visible"}));
  ++it;
  EXPECT_EQ(it->second, (std::vector<std::string>{"mark 0 0 thread 2"}));
}

TEST_F(Marks, InfoAndStatsCountMarksPerThread) {
  const RunResult info = parlot_read({"info", dir()});
  ASSERT_EQ(info.exit_status, 0) << info.err;
  // thread #, tid, events, raw, bytes, ratio, duration (2 words), kB/s, marks
  const std::regex row(R"(^\s+#(\d) +\d+ +(\d+) +\d+ +\d+ +[\d.]+ +[\d.]+ \w+ +[\d.]+ +(\d+))");
  std::map<std::string, std::string> marks_of_thread;
  std::istringstream in(info.out);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row))
      marks_of_thread[m[1]] = m[2].str() + " events " + m[3].str();
  }
  EXPECT_EQ(marks_of_thread, (std::map<std::string, std::string>{
                                 {"0", "10 events 4"}, {"1", "2 events 1"}, {"2", "0 events 1"}}))
      << info.out;
  EXPECT_THAT(info.out, HasSubstr(", 6 marks\n"));
  const RunResult stats = parlot_read({"stats", dir(), "--by", "thread", "--exclude", "."});
  ASSERT_EQ(stats.exit_status, 0) << stats.err;
  const std::regex marks_line(R"(\n +(\d+)  marks\n)");
  std::vector<std::string> counts;
  for (std::sregex_iterator m(stats.out.begin(), stats.out.end(), marks_line), end; m != end; ++m) {
    counts.push_back((*m)[1]);
  }
  EXPECT_EQ(counts, (std::vector<std::string>{"4", "1", "1"})) << stats.out;
}

TEST_F(Marks, DiffContextShowsTheMarks) {
  const RunResult d =
      parlot_read({"diff", dir(), "--left", "process=0,thread=1", "--right", "process=0,thread=2"});
  ASSERT_EQ(d.exit_status, 0) << d.err;
  EXPECT_THAT(d.out, HasSubstr("  process 0 thread 1:\n"
                               "  < @ mark \"thread 1\"\n"
                               "  < enter visible at api_fixture.c:65\n"
                               "  < exit  visible\n"
                               "  process 0 thread 2:\n"
                               "  > @ mark \"thread 2\"\n"
                               "    (stream ends)\n"));
}

TEST_F(Marks, ChromeExportHasAnInstantPerMarkOnItsThread) {
  const fs::path out = dir_->path() / "chrome.json";
  const RunResult e = parlot_read({"export", dir(), "--format", "chrome", "-o", out.string()});
  ASSERT_EQ(e.exit_status, 0) << e.err;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  std::map<std::uint64_t, std::vector<std::string>> instants;  // tid -> "ts label"
  std::map<std::uint64_t, std::string> thread_names;
  for (const auto& ev : j.at("traceEvents")) {
    if (ev.at("ph") == "M" && ev.at("name") == "thread_name") {
      thread_names[ev.at("tid")] = ev.at("args").at("name");
    }
    if (ev.at("ph") != "i") continue;
    EXPECT_EQ(ev.at("s"), "t");
    instants[ev.at("tid")].push_back(std::to_string(ev.at("ts").get<std::uint64_t>()) + " " +
                                     ev.at("name").get<std::string>());
  }
  ASSERT_EQ(instants.size(), 3u);
  std::vector<std::vector<std::string>> by_thread_index(3);
  for (const auto& [tid, list] : instants) {
    const std::string& name = thread_names.at(tid);  // "thread #N (tid T)"
    by_thread_index.at(name.at(8) - '0') = list;
  }
  // Logical clock: ts = index of the event after the mark.
  EXPECT_EQ(by_thread_index[0], (std::vector<std::string>{"1 in main", "4 inside", "8 leaf",
                                                          "9 odd \x1b[31m \"q\" \\ end"}));
  EXPECT_EQ(by_thread_index[1], (std::vector<std::string>{"0 thread 1"}));
  EXPECT_EQ(by_thread_index[2], (std::vector<std::string>{"0 thread 2"}));
  // A window keeps the marks inside it only.
  const RunResult w =
      parlot_read({"export", dir(), "--format", "chrome", "-o", out.string(), "--window", "3:9"});
  ASSERT_EQ(w.exit_status, 0) << w.err;
  std::ifstream win(out);
  std::vector<std::string> kept;
  const auto windowed = nlohmann::json::parse(win);
  for (const auto& ev : windowed.at("traceEvents")) {
    if (ev.at("ph") == "i") kept.push_back(ev.at("name"));
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"inside", "leaf"}));
}

TEST_F(Marks, PerfettoExportHasInstantEventsOnTheThreadTracks) {
  if (!have("protoc")) GTEST_SKIP() << "protobuf-compiler not installed";
  const RunResult formats = parlot_read({"export", "--help"});
  if (formats.out.find("perfetto") == std::string::npos) GTEST_SKIP() << "built without protozero";
  const fs::path out = dir_->path() / "trace.pb";
  const RunResult e = parlot_read({"export", dir(), "--format", "perfetto", "-o", out.string()});
  ASSERT_EQ(e.exit_status, 0) << e.err;
  const RunResult decoded = run({"/bin/sh", "-c",
                                 "protoc --proto_path=" PARLOT_PERFETTO_PROTO_DIR
                                 " --decode=perfetto.protos.Trace perfetto_trace_subset.proto < " +
                                     out.string()});
  ASSERT_EQ(decoded.exit_status, 0) << decoded.err;
  // Track of each thread (by thread name), then the instants per track.
  std::map<std::string, std::string> thread_of_track;        // uuid -> "thread #N"
  std::map<std::string, std::vector<std::string>> instants;  // uuid -> "ts label"
  std::istringstream in(decoded.out);
  std::string uuid, timestamp, type, track, name;
  const std::regex field(R"(^\s*(\w+): (.*)$)");
  for (std::string line; std::getline(in, line);) {
    if (line == "packet {") {
      timestamp = type = track = name = "";
      continue;
    }
    if (line == "}") {
      if (type == "TYPE_INSTANT") instants[track].push_back(timestamp + " " + name);
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, field)) continue;
    const std::string key = m[1], value = m[2];
    if (key == "uuid") uuid = value;
    if (key == "thread_name") thread_of_track[uuid] = value;
    if (key == "timestamp") timestamp = value;
    if (key == "type") type = value;
    if (key == "track_uuid") track = value;
    if (key == "name") name = value;
  }
  std::map<std::string, std::vector<std::string>> by_thread;
  for (const auto& [t, list] : instants) by_thread[thread_of_track.at(t)] = list;
  EXPECT_EQ(by_thread, (std::map<std::string, std::vector<std::string>>{
                           {"\"thread #0\"",
                            {"1 \"in main\"", "4 \"inside\"", "8 \"leaf\"",
                             "9 \"odd \\033[31m \\\"q\\\" \\\\ end\""}},
                           {"\"thread #1\"", {"0 \"thread 1\""}},
                           {"\"thread #2\"", {"0 \"thread 2\""}}}))
      << decoded.out;
}

TEST_F(Marks, Otf2ExportHasALocationMarkerPerMark) {
  if (!have("otf2-marker")) GTEST_SKIP() << "otf2-tools not installed";
  const RunResult formats = parlot_read({"export", "--help"});
  if (formats.out.find("otf2") == std::string::npos) GTEST_SKIP() << "built without OTF2";
  const fs::path out = dir_->path() / "otf2";
  const RunResult e = parlot_read({"export", dir(), "--format", "otf2", "-o", out.string()});
  ASSERT_EQ(e.exit_status, 0) << e.err;
  const RunResult m = run({"otf2-marker", (out / "traces.otf2").string()});
  ASSERT_EQ(m.exit_status, 0) << m.err;
  EXPECT_THAT(m.out, HasSubstr("Group: \"Parlot\", Category: \"mark\""));
  EXPECT_THAT(m.out,
              HasSubstr("Time: 1, Duration 0, Scope: LOCATION:0, Text: \"in main\"\n"
                        "MARKER      Time: 4, Duration 0, Scope: LOCATION:0, Text: \"inside\""));
  EXPECT_THAT(m.out, HasSubstr("Time: 0, Duration 0, Scope: LOCATION:1, Text: \"thread 1\""));
  EXPECT_THAT(m.out, HasSubstr("Time: 0, Duration 0, Scope: LOCATION:2, Text: \"thread 2\""));
}

TEST(UserApi, TheExampleTracesOnlyItsComputation) {
  TempDir dir;
  const std::string program = examples_dir() + "/user_api";
  const RunResult r =
      run({PARLOT_FRONTEND_PATH, "record", "-d", dir.path().string(), "--", program, "10"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(traced 1, flush 0)"));
  const RunResult t = parlot_read({"trace", dir.path().string()});
  ASSERT_EQ(t.exit_status, 0) << t.err;
  // Marks open the phases; "set-up" and "compute" both precede compute's
  // entry (set-up's calls were paused) and keep their order.
  EXPECT_THAT(t.out, HasSubstr("main() {\n  @ mark \"set-up\"\n  @ mark \"compute\"\n"
                               "  compute() {\n    step();\n"));
  EXPECT_THAT(t.out, HasSubstr("  } /* compute() */\n  @ mark \"report\"\n  report();\n"
                               "} /* main() */\n"));
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("fill_table")));
  EXPECT_THAT(t.out, ::testing::Not(HasSubstr("scramble")));
  EXPECT_THAT(run({program, "10"}).out, HasSubstr("(traced 0, flush -1)"));
}

TEST(UserApi, TheStubRunsUntraced) {
  const RunResult r = run({PARLOT_API_FIXTURE, "pause"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(r.out, "tracing=0\n");
  const RunResult f = run({PARLOT_API_FIXTURE, "flush", "10"});
  EXPECT_THAT(f.out, HasSubstr("flush=-1\n"));
}

}  // namespace
}  // namespace parlot::e2e
