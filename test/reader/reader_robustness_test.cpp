// The reader never trusts a file (include/parlot/trace_reader.h): real
// traces of reader_fixture, made at test time under libparlotrt.so, are read
// back intact, then truncated at (nearly) every offset, corrupted byte by
// byte, given impossible field values, semantically broken and removed. Every
// outcome must be a clean read (possibly of fewer events, with
// summary().damage set) or a parlot::FormatError naming the damaged file and
// a byte offset inside it; never a crash, a hang, another exception type or
// an allocation sized by the file. The last group runs parlot-read itself.
//
// Tests marked "Regression (fixed):" were written failing, to show a defect
// of the reader; the defect has since been fixed and they guard against it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "parlot/call_stack_tracker.h"
#include "parlot/codec.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "reader_test_support.h"

#if defined(__SANITIZE_ADDRESS__)
// Large allocations fail (and are reported) instead of touching gigabytes.
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=1024";
}
#endif

namespace {

using namespace parlot;
using namespace parlot::test;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using Kind = ReadOutcome::Kind;

/// Functions of reader_fixture: 16 leaves, 8 mids, lcg, recurse, repeated,
/// random_walk, work, warm_up, worker_main, main.
constexpr std::uint64_t kFixtureFunctions = 32;
constexpr std::uint64_t kHeader = sizeof(format::TraceFileHeader);
constexpr std::uint64_t kBlockHeader = sizeof(format::BlockHeader);

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

template <class T>
void patch(std::vector<std::uint8_t>& bytes, std::size_t offset, T value) {
  ASSERT_LE(offset + sizeof value, bytes.size());
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

template <class T>
T peek(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  T v{};
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

bool is_prefix(const std::vector<std::uint32_t>& part, const std::vector<std::uint32_t>& whole) {
  return part.size() <= whole.size() && std::equal(part.begin(), part.end(), whole.begin());
}

std::string text_of(const std::vector<std::uint8_t>& b) {
  return {b.begin(), b.end()};
}
std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

/// Byte offset of the line of `text` starting with `prefix`.
std::size_t line_offset(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return 0;
  const std::size_t p = text.find("\n" + prefix);
  return p == std::string::npos ? std::string::npos : p + 1;
}

/// Asserts the contract on one outcome of reading a damaged copy `file`
/// whose size is `size`: no foreign exception; a FormatError names `file`
/// and an offset inside it (the tracker's, an event index, at most the
/// events decoded); a clean read of a file with a trailer has its count.
::testing::AssertionResult clean_outcome(const ReadOutcome& o, const fs::path& file,
                                         std::uint64_t size) {
  switch (o.kind) {
    case Kind::kOtherException:
      return ::testing::AssertionFailure() << "not a FormatError: " << o.describe();
    case Kind::kFormatError:
      if (o.error_file != file) {
        return ::testing::AssertionFailure() << "error names another file: " << o.describe();
      }
      if (o.error_from_tracker ? o.error_offset > o.events.size() : o.error_offset > size) {
        return ::testing::AssertionFailure()
               << "offset beyond the file (size " << size << "): " << o.describe();
      }
      if (o.what.find(file.string() + ": offset " + std::to_string(o.error_offset)) != 0) {
        return ::testing::AssertionFailure() << "what() lacks 'file: offset N': " << o.what;
      }
      return ::testing::AssertionSuccess();
    case Kind::kOk:
      if (!o.summary) return ::testing::AssertionFailure() << "no summary";
      if (o.summary->trailer && o.events.size() != o.summary->trailer->events) {
        return ::testing::AssertionFailure()
               << "complete file read " << o.events.size() << " events, trailer says "
               << o.summary->trailer->events;
      }
      if (!o.summary->trailer && o.summary->damage.empty()) {
        return ::testing::AssertionFailure() << "no trailer and no damage reported";
      }
      return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "?";
}

/// Every test works in its own mkdtemp directory (removed at the end) and
/// makes the real traces it needs there, on first use.
class ReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { install_crash_reporter(); }

  fs::path trace(const TraceKind& kind) {
    const auto it = traces_.find(kind.name());
    if (it != traces_.end()) return it->second;
    const fs::path p = make_trace(tmp_.path() / "runs", kind);
    traces_[kind.name()] = p;
    return p;
  }

  /// A private copy of a real process directory, to damage.
  fs::path copy_of(const TraceKind& kind, const std::string& name) {
    const fs::path to = tmp_.path() / "work" / name;
    fs::create_directories(to.parent_path());
    copy_tree(trace(kind), to);
    return to;
  }

  fs::path scratch(const std::string& name) {
    const fs::path p = tmp_.path() / "scratch" / name;
    fs::create_directories(p.parent_path());
    return p;
  }

  std::vector<std::uint32_t> intact_events(const fs::path& file) {
    const ReadOutcome o = read_thread_file(file, true, kFixtureFunctions);
    EXPECT_EQ(o.kind, Kind::kOk) << o.describe();
    return o.events;
  }

  TempDir tmp_;
  std::map<std::string, fs::path> traces_;
};

// ============================================================================
// 1. Sanity: intact traces read fully and identically
// ============================================================================

class ReaderSanity : public ReaderTest {};

TEST_F(ReaderSanity, IntactTracesReadFullyAndNestWell) {
  const std::string fixture = fs::canonical(fixture_path()).string();
  for (const TraceKind& kind : {kLz, kRaw, kLz4k, kRaw4k, kLz2, kLz2_4k}) {
    SCOPED_TRACE(kind.name());
    const fs::path dir = trace(kind);
    // Both the process directory and the run directory above it open.
    ASSERT_EQ(open_trace_directory(dir.parent_path()).size(), 1u);
    const auto processes = open_trace_directory(dir);
    ASSERT_EQ(processes.size(), 1u);
    const ProcessTrace& p = processes[0];
    EXPECT_THAT(p.warnings, ::testing::IsEmpty());
    EXPECT_GT(p.metadata.pid, 0u);
    EXPECT_GT(p.metadata.end_ns, p.metadata.start_ns);
    EXPECT_EQ(p.metadata.compress, kind.compress);
    EXPECT_EQ(p.metadata.threads, 2u);
    EXPECT_EQ(p.metadata.executable, fixture);
    EXPECT_EQ(p.metadata.functions, kFixtureFunctions);
    EXPECT_EQ(p.function_addresses.size(), kFixtureFunctions);
    EXPECT_EQ(read_function_table(dir / "functions"), p.function_addresses);
    ASSERT_FALSE(p.load_map.empty());
    EXPECT_TRUE(std::any_of(p.load_map.begin(), p.load_map.end(),
                            [&](const LoadedObject& o) { return o.path == fixture; }));
    for (const LoadedObject& o : p.load_map) EXPECT_LT(o.start, o.end) << o.path;
    // Every function address lies in the fixture's mapping.
    for (const std::uint64_t a : p.function_addresses) {
      EXPECT_TRUE(std::any_of(
          p.load_map.begin(), p.load_map.end(),
          [&](const LoadedObject& o) { return o.path == fixture && a >= o.start && a < o.end; }))
          << std::hex << a;
    }

    ASSERT_EQ(p.thread_files.size(), 2u);
    for (std::size_t i = 0; i < p.thread_files.size(); ++i) {
      SCOPED_TRACE(p.thread_files[i].string());
      ThreadEventReader reader(p.thread_files[i]);
      const ThreadTraceSummary& s = reader.summary();
      ASSERT_TRUE(s.trailer.has_value());
      EXPECT_EQ(s.damage, "");
      EXPECT_EQ(s.thread_index, i);
      EXPECT_EQ(s.pid, p.metadata.pid);
      EXPECT_EQ(s.codec, !kind.compress    ? format::Codec::kRawWords
                         : kind.codec == 2 ? format::Codec::kLzRank
                                           : format::Codec::kLzZe);
      EXPECT_EQ(s.file_bytes, fs::file_size(p.thread_files[i]));
      EXPECT_EQ(s.payload_bytes, s.trailer->payload_bytes);
      EXPECT_EQ(s.trailer->dropped_events, 0u);
      EXPECT_EQ(s.trailer->corrected_exits, 0u);
      EXPECT_EQ(s.trailer->unmatched_exits, 0u);
      if (kind.buffer_kb == 4) {
        // Codec 2 packs this fixture's events into fewer 4 KiB blocks.
        EXPECT_GE(s.blocks, !kind.compress ? 9u : kind.codec == 2 ? 2u : 4u);
      }
      CallStackTracker tracker(p.function_addresses.size(), p.thread_files[i]);
      std::uint64_t raw = 0, depth = 0, max_depth = 0, enters = 0;
      for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
        for (const std::uint32_t v : b) {
          const CallEvent e = tracker.push(v);  // throws if not well nested
          raw += codec::raw_bytes_of(v);
          if (e.kind == CallEvent::Kind::kEnter) {
            ++enters;
            max_depth = std::max<std::uint64_t>(max_depth, ++depth);
          } else {
            --depth;
          }
        }
      }
      EXPECT_EQ(reader.events_read(), s.trailer->events);
      EXPECT_GT(reader.events_read(), 20000u);
      EXPECT_EQ(reader.events_read(), 2 * enters);
      EXPECT_EQ(raw, s.trailer->raw_bytes);
      EXPECT_EQ(max_depth, s.trailer->max_depth);
      EXPECT_THAT(tracker.open_calls(), ::testing::IsEmpty());
      EXPECT_TRUE(reader.next_batch().empty());  // stays at the end
    }
  }
}

TEST_F(ReaderSanity, CompressedAndRawRunsDecodeToIdenticalThreadStreams) {
  std::map<std::string, std::vector<std::vector<std::uint32_t>>> by_kind;
  for (const TraceKind& kind : {kLz, kRaw, kLz4k, kRaw4k, kLz2, kLz2_4k}) {
    for (const fs::path& f : thread_files(trace(kind))) {
      const ReadOutcome o = read_thread_file(f, true, kFixtureFunctions);
      ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
      ASSERT_EQ(o.summary->thread_index, by_kind[kind.name()].size());
      by_kind[kind.name()].push_back(o.events);
    }
  }
  const auto& reference = by_kind[kLz.name()];
  ASSERT_EQ(reference.size(), 2u);
  EXPECT_NE(reference[0], reference[1]);  // different seeds per thread
  for (const auto& [name, threads] : by_kind) {
    ASSERT_EQ(threads.size(), reference.size()) << name;
    for (std::size_t i = 0; i < threads.size(); ++i) {
      EXPECT_TRUE(threads[i] == reference[i])
          << name << " thread #" << i << " differs from " << kLz.name() << " (" << threads[i].size()
          << " vs " << reference[i].size() << " events)";
    }
  }
}

TEST_F(ReaderSanity, ToolReadsTheIntactTrace) {
  const fs::path dir = trace(kLz4k);
  for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"}) {
    const RunResult r = run_program({read_tool_path(), cmd, dir.string()}, {}, 20);
    EXPECT_TRUE(r.exited) << cmd << " signal " << r.signal << (r.timed_out ? " (timeout)" : "");
    EXPECT_EQ(r.exit_status, 0) << cmd << "\n" << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("error"))) << cmd;
  }
  // The call tree without call sites (--no-sites).
  const RunResult t = run_program({read_tool_path(), "trace", "--no-sites", dir.string()}, {}, 20);
  EXPECT_THAT(t.out, HasSubstr("recurse() {"));
  EXPECT_THAT(t.out, HasSubstr("worker_main() {"));
  EXPECT_THAT(t.out, HasSubstr("leaf_0();"));
}

// ============================================================================
// 2. Truncation
// ============================================================================

/// Offsets to cut `bytes` at: every offset below `every_below`, +-20 bytes
/// around every block header and the end, and 200 random ones; descending.
std::vector<std::uint64_t> cut_offsets(const std::vector<std::uint8_t>& bytes,
                                       std::uint64_t every_below, std::uint32_t seed) {
  std::set<std::uint64_t> s;
  const std::uint64_t size = bytes.size();
  for (std::uint64_t i = 0; i <= std::min(every_below, size); ++i) s.insert(i);
  std::vector<std::uint64_t> marks = block_offsets(bytes);
  marks.push_back(size);
  for (const std::uint64_t m : marks) {
    for (std::int64_t d = -20; d <= 20; ++d) {
      const std::int64_t o = static_cast<std::int64_t>(m) + d;
      if (o >= 0 && static_cast<std::uint64_t>(o) <= size) s.insert(static_cast<std::uint64_t>(o));
    }
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200; ++i) s.insert(rng() % (size + 1));
  return {s.rbegin(), s.rend()};  // descending: cut one copy shorter and shorter
}

/// Every offset of a file in normal builds, the first 2 KiB in sanitized
/// ones; PARLOT_TEST_EXHAUSTIVE=0/1 overrides.
std::uint64_t every_offset_below(std::uint64_t size) {
  const char* e = std::getenv("PARLOT_TEST_EXHAUSTIVE");
  const bool all = e != nullptr ? std::strcmp(e, "0") != 0 : !sanitized_build();
  return all ? size : 2048;
}

struct CutTally {
  std::size_t cuts = 0, header_errors = 0, damaged = 0, complete = 0, in_trailer = 0;
};

/// Cuts a copy of thread file `original` at every offset of `offsets`
/// (descending) and checks: a cut inside the 64-byte header is a
/// FormatError at offset <= the cut; any longer cut opens, reports damage
/// at or before the cut (none for the whole file), and yields a prefix of
/// the intact events that nests well; shorter cuts never yield more events.
CutTally check_cuts(const fs::path& original, const fs::path& work,
                    const std::vector<std::uint64_t>& offsets,
                    const std::vector<std::uint32_t>& intact) {
  CutTally t;
  const std::vector<std::uint8_t> bytes = read_bytes(original);
  const std::uint64_t size = bytes.size();
  // Cuts at or inside the trailer keep every data block: the final block's
  // event count says where the events end, so exactly the intact events
  // come back (the padding of the last group is not decoded as events).
  const std::uint64_t trailer = block_offsets(bytes).back();
  write_bytes(work, bytes);
  int failures = 0;
  std::size_t last_events = intact.size();
  for (const std::uint64_t cut : offsets) {
    if (failures > 8) {
      ADD_FAILURE() << "too many failures; stopping at cut " << cut;
      break;
    }
    fs::resize_file(work, cut);
    set_crash_context("reading " + original.string() + " cut at " + std::to_string(cut));
    const ReadOutcome o = read_thread_file(work, true, kFixtureFunctions);
    ++t.cuts;
    const std::string where =
        "cut at " + std::to_string(cut) + " of " + std::to_string(size) + ": " + o.describe();
    bool ok = static_cast<bool>(clean_outcome(o, work, cut));
    if (!ok) ADD_FAILURE() << where << "\n" << clean_outcome(o, work, cut).message();
    if (cut >= trailer && cut < size) {
      ++t.damaged;
      ++t.in_trailer;
      if (o.kind != Kind::kOk || o.events != intact || o.summary->damage_offset != trailer) {
        ok = false;
        ADD_FAILURE() << where << ": a cut in the trailer keeps every data block";
      }
      last_events = std::min(o.events.size(), intact.size());
    } else if (cut < kHeader) {
      ++t.header_errors;
      if (o.kind != Kind::kFormatError || o.error_offset > cut) {
        ok = false;
        ADD_FAILURE() << where << ": a cut header must be a FormatError";
      }
    } else if (o.kind != Kind::kOk) {
      ok = false;
      ADD_FAILURE() << where << ": a cut after the header must open and read (docs/FORMAT.md: "
                    << "everything in the complete blocks before it decodes)";
    } else {
      const ThreadTraceSummary& s = *o.summary;
      if (cut == size) {
        ++t.complete;
        if (!s.trailer || o.events != intact) {
          ok = false;
          ADD_FAILURE() << where << ": the whole file must read completely";
        }
      } else {
        ++t.damaged;
        if (s.trailer || s.damage.empty() || s.damage_offset > cut) {
          ok = false;
          ADD_FAILURE() << where << ": expected damage at or before the cut";
        }
        if (!is_prefix(o.events, intact)) {
          ok = false;
          std::size_t same = 0;
          while (same < o.events.size() && same < intact.size() && o.events[same] == intact[same]) {
            ++same;
          }
          ADD_FAILURE() << where << ": events are not a prefix of the intact stream ("
                        << o.events.size() << " events, first difference at event " << same
                        << " of " << intact.size() << ")";
        }
        if (o.events.size() > last_events) {
          ok = false;
          ADD_FAILURE() << where << ": a shorter cut gave more events (" << o.events.size() << " > "
                        << last_events << ")";
        }
      }
      last_events = o.events.size();
    }
    if (!ok) ++failures;
  }
  set_crash_context("");
  return t;
}

class ReaderTruncation : public ReaderTest {};

TEST_F(ReaderTruncation, MultiBlockCompressedThreadFileAtEveryOffset) {
  const auto files = thread_files(trace(kLz4k));
  ASSERT_EQ(files.size(), 2u);
  const auto bytes = read_bytes(files[0]);
  ASSERT_GE(block_offsets(bytes).size(), 5u) << "want several data blocks";
  const auto intact = intact_events(files[0]);
  const auto start = std::chrono::steady_clock::now();
  const CutTally t = check_cuts(files[0], scratch("cut.trace"),
                                cut_offsets(bytes, every_offset_below(bytes.size()), 1), intact);
  RecordProperty("cuts", static_cast<int>(t.cuts));
  std::printf("  %zu cuts of %zu bytes (%zu in the header, %zu damaged) in %.2f s\n", t.cuts,
              bytes.size(), t.header_errors, t.damaged, seconds_since(start));
  EXPECT_EQ(t.complete, 1u);
}

// The raw file is 3.5 times larger: every offset in its first 8 KiB (two
// blocks), sampled beyond.
TEST_F(ReaderTruncation, MultiBlockRawThreadFile) {
  const auto files = thread_files(trace(kRaw4k));
  const auto bytes = read_bytes(files[1]);
  ASSERT_GE(block_offsets(bytes).size(), 9u);
  const auto intact = intact_events(files[1]);
  const auto start = std::chrono::steady_clock::now();
  const CutTally t = check_cuts(
      files[1], scratch("cut.trace"),
      cut_offsets(bytes, std::min<std::uint64_t>(8192, every_offset_below(bytes.size())), 2),
      intact);
  std::printf("  %zu cuts of %zu bytes in %.2f s\n", t.cuts, bytes.size(), seconds_since(start));
  EXPECT_GT(t.damaged, 2000u);
  EXPECT_EQ(t.complete, 1u);
}

TEST_F(ReaderTruncation, SingleBlockCompressedThreadFileSampled) {
  const auto files = thread_files(trace(kLz));
  const auto bytes = read_bytes(files[1]);
  ASSERT_EQ(block_offsets(bytes).size(), 2u) << "one data block and the trailer";
  const auto intact = intact_events(files[1]);
  check_cuts(files[1], scratch("cut.trace"), cut_offsets(bytes, 2048, 3), intact);
}

// A file cut at or inside its trailer still holds every data block:
// docs/FORMAT.md says everything in the complete blocks decodes, so the
// reader must give back exactly the intact events. For the LZ codec this
// fails.
// Regression (fixed): ThreadEventReader (reader/lib/thread_event_reader.cpp, next_batch
// with no trailer: limit ~0) decodes the zero words with which
// codec::Encoder::finish() pads the last zero-elimination group as tokens:
// after a final match length, "0" is a literal 0, and "0 0" is a no-match
// plus a literal 0, so 1 or 2 phantom exit events follow the real stream.
// E.g. reader_fixture's thread-0 lz file cut at its trailer yields its
// 33078 events plus one 0, thread 1 its 33154 plus two. parlot-read then
// reports "offset 33078: exit with no open call at event 33078" (trace,
// stats) instead of the cut-short damage, and info counts 33079 events. The
// same phantom lets a trailer claiming one event too many read without a
// reader error. The reader cannot tell padding from data: a fix needs the
// format to mark the stream's end in the data (e.g. events per block) or a
// padding token the decoder recognises.
TEST_F(ReaderTruncation, CutAtOrInsideTheTrailerKeepsExactlyTheIntactEvents) {
  for (const TraceKind& kind : {kLz4k, kLz, kRaw4k}) {
    for (const fs::path& f : thread_files(trace(kind))) {
      const auto bytes = read_bytes(f);
      const auto intact = intact_events(f);
      const std::uint64_t trailer = block_offsets(bytes).back();
      ASSERT_EQ(trailer + kBlockHeader + sizeof(format::TrailerPayload), bytes.size());
      const fs::path work = scratch("trailer-cut.trace");
      for (const std::uint64_t cut : {trailer, trailer + 40}) {
        write_bytes(work, std::vector<std::uint8_t>(
                              bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)));
        const ReadOutcome o = read_thread_file(work, false);
        const std::string where = kind.name() + " " + f.filename().string() + " cut at " +
                                  std::to_string(cut) + " (trailer at " + std::to_string(trailer) +
                                  ")";
        ASSERT_EQ(o.kind, Kind::kOk) << where << ": " << o.describe();
        EXPECT_EQ(o.summary->damage_offset, trailer) << where;
        const std::vector<std::uint32_t> extra(
            o.events.begin() +
                static_cast<std::ptrdiff_t>(std::min(o.events.size(), intact.size())),
            o.events.end());
        EXPECT_TRUE(o.events == intact)
            << where << ": " << o.events.size() << " events instead of " << intact.size()
            << "; extra events at the end: " << ::testing::PrintToString(extra);
      }
    }
  }
}

TEST_F(ReaderTruncation, FunctionTableAtEveryOffsetIsAnError) {
  const fs::path dir = trace(kLz);
  const auto bytes = read_bytes(dir / "functions");
  const LoadBiases biases = read_process_metadata(dir / "process").load_biases;
  const fs::path work = scratch("functions");
  write_bytes(work, bytes);
  for (std::uint64_t cut = bytes.size(); cut-- > 0;) {
    fs::resize_file(work, cut);
    const CallOutcome o = call_classified([&] { read_function_table(work, biases); });
    ASSERT_EQ(o.kind, Kind::kFormatError) << "cut " << cut << ": " << o.describe();
    EXPECT_EQ(o.error_file, work);
    EXPECT_LE(o.error_offset, cut);
  }
}

// The process file at every offset; the load map (each read costs ~25 ms,
// see LoadMapReadIsSizedByTheFile) at +-2 bytes of every line end and 40
// random offsets.
TEST_F(ReaderTruncation, ProcessAndLoadMapFiles) {
  const fs::path dir = trace(kLz);
  const LoadBiases biases = read_process_metadata(dir / "process").load_biases;
  for (const std::string name : {"process", "loadmap"}) {
    const auto bytes = read_bytes(dir / name);
    std::set<std::uint64_t> cuts;
    if (name == "process") {
      for (std::uint64_t i = 0; i < bytes.size(); ++i) cuts.insert(i);
    } else {
      std::mt19937_64 rng(4);
      for (std::uint64_t i = 0; i < bytes.size(); ++i) {
        if (bytes[i] != '\n') continue;
        for (std::uint64_t d = 0; d <= 4; ++d) {
          if (i + d >= 2 && i + d - 2 < bytes.size()) cuts.insert(i + d - 2);
        }
      }
      for (int i = 0; i < 40; ++i) cuts.insert(rng() % bytes.size());
      cuts.insert(0);
    }
    const fs::path work = scratch(name);
    write_bytes(work, bytes);
    std::size_t errors = 0;
    for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
      const std::uint64_t cut = *it;
      fs::resize_file(work, cut);
      const CallOutcome o = call_classified([&] {
        if (name == "process") {
          read_process_metadata(work);
        } else {
          read_load_map(work, biases);
        }
      });
      ASSERT_NE(o.kind, Kind::kOtherException) << name << " cut " << cut << ": " << o.describe();
      // Only a cut right after a newline can parse; the rest must fail.
      const bool at_line_end = cut > 0 && bytes[cut - 1] == '\n';
      if (o.kind == Kind::kFormatError) {
        ++errors;
        EXPECT_EQ(o.error_file, work);
        EXPECT_LE(o.error_offset, cut);
        if (!at_line_end && cut > 0) {
          EXPECT_THAT(o.what, HasSubstr("no newline")) << cut;
        }
      } else {
        EXPECT_TRUE(at_line_end) << name << " cut " << cut << " parsed";
      }
    }
    EXPECT_GT(errors, cuts.size() / 2) << name;
  }
}

// ============================================================================
// 3. Corruption: random bytes
// ============================================================================

/// Changes 1-3 bytes of `b` in [lo, hi): a bit flip, a random byte, 0 or 0xff.
void mutate(std::vector<std::uint8_t>& b, std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  const int n = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < n; ++i) {
    const std::size_t pos = lo + rng() % (hi - lo);
    switch (rng() % 4) {
      case 0:
        b[pos] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:
        b[pos] = static_cast<std::uint8_t>(rng());
        break;
      case 2:
        b[pos] = 0;
        break;
      default:
        b[pos] = 0xff;
        break;
    }
  }
}

struct FlipTally {
  std::size_t trials = 0, ok = 0, format_errors = 0, tracker_errors = 0, unchanged = 0;
  double slowest = 0;
};

/// `trials` mutations of thread file `original`, positions chosen by
/// `position(rng)`; each mutated copy is read and tracked.
FlipTally flip_thread_file(const fs::path& original, const fs::path& work, std::uint64_t seed,
                           int trials,
                           const std::function<std::size_t(std::mt19937_64&)>& position) {
  FlipTally t;
  const auto bytes = read_bytes(original);
  std::mt19937_64 rng(seed);
  int failures = 0;
  for (int i = 0; i < trials && failures < 8; ++i) {
    auto b = bytes;
    const std::size_t pos = position(rng);
    mutate(b, rng, pos, std::min(pos + 1 + rng() % 8, b.size()));
    if (b == bytes) ++t.unchanged;
    write_bytes(work, b);
    const std::string ctx = original.filename().string() + " seed " + std::to_string(seed) +
                            " trial " + std::to_string(i) + " near offset " + std::to_string(pos);
    set_crash_context("reading " + ctx);
    const auto start = std::chrono::steady_clock::now();
    const ReadOutcome o = read_thread_file(work, true, kFixtureFunctions);
    t.slowest = std::max(t.slowest, seconds_since(start));
    ++t.trials;
    const auto c = clean_outcome(o, work, b.size());
    if (!c) {
      ++failures;
      ADD_FAILURE() << ctx << ": " << c.message();
    }
    if (o.kind == Kind::kOk) ++t.ok;
    if (o.kind == Kind::kFormatError) ++(o.error_from_tracker ? t.tracker_errors : t.format_errors);
  }
  set_crash_context("");
  return t;
}

class ReaderCorruption : public ReaderTest {};

TEST_F(ReaderCorruption, RandomBytesAnywhereInThreadFiles) {
  for (const TraceKind& kind : {kLz4k, kRaw4k}) {
    const auto files = thread_files(trace(kind));
    for (std::size_t i = 0; i < files.size(); ++i) {
      const std::uint64_t size = fs::file_size(files[i]);
      const FlipTally t = flip_thread_file(
          files[i], scratch("flip.trace"), 1000 + i + (kind.compress ? 0 : 10), 600,
          [&](std::mt19937_64& rng) { return static_cast<std::size_t>(rng() % size); });
      std::printf(
          "  %s #%zu: %zu trials, %zu ok, %zu reader errors, %zu tracker errors, "
          "slowest %.3f s\n",
          kind.name().c_str(), i, t.trials, t.ok, t.format_errors, t.tracker_errors, t.slowest);
      EXPECT_GT(t.format_errors + t.tracker_errors, t.trials / 4) << "corruption goes unnoticed";
      EXPECT_LT(t.slowest, 2.0);
    }
  }
}

TEST_F(ReaderCorruption, RandomBytesInHeadersBlockHeadersAndTrailers) {
  for (const TraceKind& kind : {kLz4k, kRaw4k}) {
    const fs::path file = thread_files(trace(kind))[0];
    const auto bytes = read_bytes(file);
    std::vector<std::size_t> structural;  // every byte of the header and of every block header
    for (std::size_t i = 0; i < kHeader; ++i) structural.push_back(i);
    for (const std::uint64_t off : block_offsets(bytes)) {
      const bool trailer = peek<std::uint32_t>(bytes, off) == format::kTrailerMagic;
      const std::size_t n = kBlockHeader + (trailer ? sizeof(format::TrailerPayload) : 0);
      for (std::size_t k = 0; k < n; ++k) structural.push_back(off + k);
    }
    const FlipTally t = flip_thread_file(
        file, scratch("flip.trace"), 77, 800,
        [&](std::mt19937_64& rng) { return structural[rng() % structural.size()]; });
    std::printf("  %s: %zu trials, %zu ok, %zu reader errors, %zu tracker errors\n",
                kind.name().c_str(), t.trials, t.ok, t.format_errors, t.tracker_errors);
    EXPECT_GT(t.format_errors, t.trials / 4);
  }
}

TEST_F(ReaderCorruption, RandomBytesInTheFunctionTable) {
  const fs::path dir = trace(kLz);
  const auto bytes = read_bytes(dir / "functions");
  const LoadBiases biases = read_process_metadata(dir / "process").load_biases;
  const fs::path work = scratch("functions");
  std::mt19937_64 rng(5);
  std::size_t errors = 0;
  for (int i = 0; i < 2000; ++i) {
    auto b = bytes;
    // Half the trials hit the 24-byte header.
    const std::size_t hi = i % 2 ? sizeof(format::FunctionsHeader) : b.size();
    mutate(b, rng, 0, hi);
    write_bytes(work, b);
    std::vector<std::uint64_t> table;
    const CallOutcome o = call_classified([&] { table = read_function_table(work, biases); });
    ASSERT_NE(o.kind, Kind::kOtherException) << "trial " << i << ": " << o.describe();
    if (o.kind == Kind::kFormatError) {
      ++errors;
      EXPECT_EQ(o.error_file, work);
      EXPECT_LE(o.error_offset, b.size());
    } else {
      // Entries of 8 bytes up to version 5, of 16 in version 6.
      const std::size_t entry = peek<std::uint16_t>(b, 8) > format::kFunctionsAddressVersion
                                    ? sizeof(format::FunctionEntry)
                                    : 8;
      EXPECT_EQ(table.size() * entry + sizeof(format::FunctionsHeader), b.size());
    }
  }
  EXPECT_GT(errors, 500u);
}

/// Text mutations: byte changes, and inserted or deleted bytes (newlines,
/// backslashes, spaces, NULs).
void mutate_text(std::vector<std::uint8_t>& b, std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      mutate(b, rng, 0, b.size());
      break;
    case 1: {
      static const std::uint8_t kInteresting[] = {'\n', '\\', ' ', 0, 'x', '-', '9', 'f', 0xff};
      const std::size_t pos = rng() % (b.size() + 1);
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(pos),
               kInteresting[rng() % sizeof kInteresting]);
      break;
    }
    default: {
      const std::size_t pos = rng() % b.size();
      b.erase(b.begin() + static_cast<std::ptrdiff_t>(pos));
      break;
    }
  }
}

TEST_F(ReaderCorruption, RandomEditsOfTheProcessFile) {
  const fs::path dir = copy_of(kLz, "proc");
  const auto bytes = read_bytes(dir / "process");
  std::mt19937_64 rng(6);
  std::size_t errors = 0;
  for (int i = 0; i < 2000; ++i) {
    auto b = bytes;
    mutate_text(b, rng);
    write_bytes(dir / "process", b);
    const CallOutcome o = call_classified([&] { read_process_metadata(dir / "process"); });
    ASSERT_NE(o.kind, Kind::kOtherException) << "trial " << i << ": " << o.describe();
    if (o.kind == Kind::kFormatError) {
      ++errors;
      EXPECT_EQ(o.error_file, dir / "process");
      EXPECT_LE(o.error_offset, b.size());
    }
    if (i % 50 == 0) {  // the whole directory names the same file
      const CallOutcome d = call_classified([&] { open_trace_directory(dir); });
      ASSERT_NE(d.kind, Kind::kOtherException) << d.describe();
      if (o.kind == Kind::kOk && d.kind == Kind::kFormatError) {
        // A load_bias line edited into another valid one: the load map's
        // or the function table's object then has no bias, which names it.
        EXPECT_THAT(d.what, HasSubstr("has no load_bias line")) << d.describe();
      } else {
        EXPECT_EQ(d.kind, o.kind) << d.describe();
        if (d.kind == Kind::kFormatError) {
          EXPECT_EQ(d.error_file, dir / "process");
        }
      }
    }
  }
  EXPECT_GT(errors, 200u);
}

TEST_F(ReaderCorruption, RandomEditsOfTheLoadMap) {
  const fs::path dir = copy_of(kLz, "proc");
  const auto bytes = read_bytes(dir / "loadmap");
  std::mt19937_64 rng(7);
  std::size_t errors = 0;
  // Few trials: every read_load_map costs ~25 ms (see LoadMapReadIsSizedByTheFile).
  for (int i = 0; i < 100; ++i) {
    auto b = bytes;
    mutate_text(b, rng);
    write_bytes(dir / "loadmap", b);
    const CallOutcome o = call_classified([&] { read_load_map(dir / "loadmap"); });
    ASSERT_NE(o.kind, Kind::kOtherException) << "trial " << i << ": " << o.describe();
    if (o.kind == Kind::kFormatError) {
      ++errors;
      EXPECT_EQ(o.error_file, dir / "loadmap");
      EXPECT_LE(o.error_offset, b.size());
    }
  }
  // About a quarter of random edits hit an index, an address or a
  // separator; the rest change a path or a build ID, which stay valid (how
  // many depends on the length of the fixture's paths).
  EXPECT_GT(errors, 12u);
}

// ============================================================================
// 3b. Corruption: specific impossible fields of a thread file
// ============================================================================

class ReaderBadFields : public ReaderTest {
 protected:
  void SetUp() override {
    ReaderTest::SetUp();
    original_ = thread_files(trace(kLz4k))[0];
    bytes_ = read_bytes(original_);
    blocks_ = block_offsets(bytes_);
    ASSERT_GE(blocks_.size(), 4u);
    work_ = scratch("bad.trace");
  }

  /// Writes `b` to the work file and reads it (tracked).
  ReadOutcome read(const std::vector<std::uint8_t>& b) {
    write_bytes(work_, b);
    return read_thread_file(work_, true, kFixtureFunctions);
  }

  /// Expects a FormatError at exactly `offset` whose message has `words`.
  void expect_error(const std::vector<std::uint8_t>& b, std::uint64_t offset,
                    const std::string& words) {
    const ReadOutcome o = read(b);
    ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
    EXPECT_EQ(o.error_file, work_);
    EXPECT_FALSE(o.error_from_tracker);
    EXPECT_EQ(o.error_offset, offset) << o.what;
    EXPECT_THAT(o.what, HasSubstr(work_.string() + ": offset " + std::to_string(offset) + ": "));
    EXPECT_THAT(o.what, HasSubstr(words));
  }

  std::uint64_t trailer() const { return blocks_.back(); }

  fs::path original_, work_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint64_t> blocks_;
};

TEST_F(ReaderBadFields, WrongMagic) {
  auto b = bytes_;
  b[5] = 'X';
  expect_error(b, 0, "magic");
  std::fill(b.begin(), b.begin() + 8, 0);
  expect_error(b, 0, "magic");
}

TEST_F(ReaderBadFields, WrongVersion) {
  for (const std::uint16_t v : {0, format::kVersion + 1, 0xffff}) {
    auto b = bytes_;
    patch<std::uint16_t>(b, 8, v);
    expect_error(b, 8, "version " + std::to_string(v));
  }
}

TEST_F(ReaderBadFields, UnknownCodec) {
  for (const std::uint16_t c : {3, 7, 0xffff}) {
    auto b = bytes_;
    patch<std::uint16_t>(b, 10, c);
    expect_error(b, 10, "codec " + std::to_string(c));
  }
}

TEST_F(ReaderBadFields, ImpossibleHeaderSize) {
  for (const std::uint32_t h : {0u, 1u, 63u, 4097u, 0x7fffffffu, 0xffffffffu,
                                static_cast<std::uint32_t>(bytes_.size() + 1)}) {
    auto b = bytes_;
    patch<std::uint32_t>(b, 12, h);
    expect_error(b, 12, "header size");
  }
  // A plausible but wrong size lands the block walk off the block headers.
  auto b = bytes_;
  patch<std::uint32_t>(b, 12, 128);
  expect_error(b, 128, "block magic");
}

TEST_F(ReaderBadFields, ImpossibleBlockSizes) {
  for (const std::uint64_t block : {blocks_[0], blocks_[2]}) {
    for (const std::uint32_t n : {0u, format::kMaxBlockPayload + 1, 0x80000000u, 0xffffffffu}) {
      auto b = bytes_;
      patch<std::uint32_t>(b, block + 4, n);
      expect_error(b, block + 4, "block size");
    }
  }
}

TEST_F(ReaderBadFields, BlockSizeBeyondTheFileReadsAsCutShort) {
  // Indistinguishable from a file cut inside that block: damage, not a throw.
  auto b = bytes_;
  patch<std::uint32_t>(b, blocks_[1] + 4, format::kMaxBlockPayload);
  const ReadOutcome o = read(b);
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  EXPECT_EQ(o.summary->damage_offset, blocks_[1]);
  EXPECT_EQ(o.summary->blocks, 1u);
}

TEST_F(ReaderBadFields, BlockSizeOneShortMisalignsTheNextHeader) {
  auto b = bytes_;
  const auto n = peek<std::uint32_t>(b, blocks_[1] + 4);
  patch<std::uint32_t>(b, blocks_[1] + 4, n - 1);
  expect_error(b, blocks_[2] - 1, "block magic");
}

TEST_F(ReaderBadFields, BadBlockMagic) {
  auto b = bytes_;
  patch<std::uint32_t>(b, blocks_[2], 0x12345678u);
  expect_error(b, blocks_[2], "block magic");
}

TEST_F(ReaderBadFields, TrailerMagicOnADataBlock) {
  auto b = bytes_;
  patch<std::uint32_t>(b, blocks_[1], format::kTrailerMagic);
  expect_error(b, blocks_[1] + 4, "trailer size");
}

TEST_F(ReaderBadFields, SequenceOutOfOrder) {
  auto b = bytes_;
  patch<std::uint64_t>(b, blocks_[1] + 8, 2);
  patch<std::uint64_t>(b, blocks_[2] + 8, 1);
  expect_error(b, blocks_[1] + 8, "sequence 2, expected 1");
  b = bytes_;
  patch<std::uint64_t>(b, trailer() + 8, blocks_.size());  // one too many
  expect_error(b, trailer() + 8, "sequence");
  b = bytes_;
  patch<std::uint64_t>(b, blocks_[0] + 8, ~std::uint64_t{0});
  expect_error(b, blocks_[0] + 8, "sequence");
}

TEST_F(ReaderBadFields, TrailerWithWrongSize) {
  auto b = bytes_;
  patch<std::uint32_t>(b, trailer() + 4, 79);
  expect_error(b, trailer() + 4, "trailer size");
  patch<std::uint32_t>(b, trailer() + 4, 0xffffffffu);
  expect_error(b, trailer() + 4, "trailer size");
}

TEST_F(ReaderBadFields, TrailerWithWrongPayloadCount) {
  for (const std::int64_t d : {1, -1}) {
    auto b = bytes_;
    const auto n = peek<std::uint64_t>(b, trailer() + kBlockHeader + 16);
    patch<std::uint64_t>(b, trailer() + kBlockHeader + 16, n + static_cast<std::uint64_t>(d));
    expect_error(b, trailer() + kBlockHeader + 16, "payload bytes");
  }
}

TEST_F(ReaderBadFields, DataAfterTheTrailer) {
  auto b = bytes_;
  b.push_back(0);
  expect_error(b, bytes_.size(), "after the trailer");
  // A second trailer.
  b = bytes_;
  b.insert(b.end(), bytes_.end() - static_cast<std::ptrdiff_t>(kBlockHeader + 80), bytes_.end());
  expect_error(b, bytes_.size(), "after the trailer");
}

// The final data block and the trailer both carry the event count
// (docs/FORMAT.md): a trailer that disagrees is caught at open.
TEST_F(ReaderBadFields, TrailerCountDisagreeingWithTheFinalBlock) {
  const auto n = peek<std::uint64_t>(bytes_, trailer() + kBlockHeader);
  for (const std::uint64_t claim : {n + 1, n - 1, std::uint64_t{0}, ~std::uint64_t{0}}) {
    auto b = bytes_;
    patch<std::uint64_t>(b, trailer() + kBlockHeader, claim);
    expect_error(b, trailer() + kBlockHeader, "trailer counts");
  }
}

std::uint64_t final_block(const std::vector<std::uint8_t>& bytes) {
  const auto offsets = block_offsets(bytes);
  return offsets[offsets.size() - 2];
}

TEST_F(ReaderBadFields, BothCountsClaimMoreEventsThanTheBlocksHold) {
  const auto n = peek<std::uint64_t>(bytes_, trailer() + kBlockHeader);
  ASSERT_EQ(peek<std::uint64_t>(bytes_, final_block(bytes_) + kBlockHeader), n);
  for (const std::uint64_t claim : {n + 1000, n + (std::uint64_t{1} << 40), ~std::uint64_t{0}}) {
    auto b = bytes_;
    patch<std::uint64_t>(b, trailer() + kBlockHeader, claim);
    patch<std::uint64_t>(b, final_block(b) + kBlockHeader, claim);
    write_bytes(work_, b);
    const auto start = std::chrono::steady_clock::now();
    // Untracked: the reader's own error.
    const ReadOutcome o = read_thread_file(work_, false);
    EXPECT_LT(seconds_since(start), 2.0);
    ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
    EXPECT_EQ(o.error_offset, trailer()) << o.what;
    EXPECT_THAT(o.what, HasSubstr("event data ends"));
    EXPECT_TRUE(clean_outcome(read_thread_file(work_, true, kFixtureFunctions), work_, b.size()));
  }
  // One event more than encoded: the zero padding of the last group decodes
  // as a phantom exit, which the tracker refuses (an exit at depth 0).
  auto b = bytes_;
  patch<std::uint64_t>(b, trailer() + kBlockHeader, n + 1);
  patch<std::uint64_t>(b, final_block(b) + kBlockHeader, n + 1);
  write_bytes(work_, b);
  const ReadOutcome o = read_thread_file(work_, true, kFixtureFunctions);
  EXPECT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_TRUE(clean_outcome(o, work_, b.size()));
}

TEST_F(ReaderBadFields, BothCountsClaimFewerEventsReadsThatMany) {
  auto b = bytes_;
  const auto n = peek<std::uint64_t>(b, trailer() + kBlockHeader);
  patch<std::uint64_t>(b, trailer() + kBlockHeader, n - 1001);
  patch<std::uint64_t>(b, final_block(b) + kBlockHeader, n - 1001);
  const ReadOutcome o = read(b);
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  EXPECT_EQ(o.events.size(), n - 1001);
  patch<std::uint64_t>(b, trailer() + kBlockHeader, 0);
  patch<std::uint64_t>(b, final_block(b) + kBlockHeader, 0);
  EXPECT_TRUE(read(b).events.empty());
}

TEST_F(ReaderBadFields, ZeroEliminationGroupCutShort) {
  // A bitmap promising 8 bytes at the very end of a block.
  HandMadeThread t;
  auto payload = encode_events({1, 2, 0, 0}, true);
  payload.push_back(0xff);
  payload.push_back(1);
  t.blocks = {payload};
  t.events = 100;
  const fs::path work = scratch("ze.trace");
  write_bytes(work, t.bytes());
  const ReadOutcome o = read_thread_file(work);
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  // The block is the final one: its payload starts with the 8-byte count.
  EXPECT_EQ(o.error_offset, kHeader + kBlockHeader + 8 + payload.size() - 2) << o.what;
  EXPECT_THAT(o.what, HasSubstr("group cut short"));
}

TEST_F(ReaderBadFields, OddRawBlock) {
  HandMadeThread t;
  t.codec = format::Codec::kRawWords;
  t.blocks = {{1, 0, 0, 0, 7}};
  t.events = 3;
  const fs::path work = scratch("odd.trace");
  write_bytes(work, t.bytes());
  const ReadOutcome o = read_thread_file(work);
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_offset, kHeader + kBlockHeader + 8 + 4) << o.what;  // after the count
  EXPECT_THAT(o.what, HasSubstr("odd byte"));
}

TEST_F(ReaderBadFields, RawLiteralSplitAcrossBlocksIsAccepted) {
  // docs/FORMAT.md: the runtime never splits a two-word literal; a reader
  // accepts it anyway.
  HandMadeThread t;
  t.codec = format::Codec::kRawWords;
  const auto payload = encode_events({0x12345678u, 0}, false);  // 3 words
  t.blocks = {{payload.begin(), payload.begin() + 2}, {payload.begin() + 2, payload.end()}};
  t.events = 2;
  const fs::path work = scratch("split.trace");
  write_bytes(work, t.bytes());
  const ReadOutcome o = read_thread_file(work, true);
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  EXPECT_EQ(o.events, (std::vector<std::uint32_t>{0x12345678u, 0}));
}

TEST_F(ReaderBadFields, HalfALiteralAtTheEnd) {
  HandMadeThread t;
  t.codec = format::Codec::kRawWords;
  t.blocks = {{1, 0, 0, 0, 0x34, 0x92}};  // 1, exit, high half of a literal
  t.events = 3;
  const fs::path work = scratch("half.trace");
  write_bytes(work, t.bytes());
  ReadOutcome o = read_thread_file(work);
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_THAT(o.what, HasSubstr("event data ends after 2 of 3"));
  t.trailer = false;  // cut short: the half literal is dropped
  write_bytes(work, t.bytes());
  o = read_thread_file(work);
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  EXPECT_EQ(o.events, (std::vector<std::uint32_t>{1, 0}));
}

TEST_F(ReaderBadFields, EmptyAndTinyFiles) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{8}, kHeader - 1}) {
    const std::vector<std::uint8_t> b(bytes_.begin(),
                                      bytes_.begin() + static_cast<std::ptrdiff_t>(n));
    expect_error(b, 0, "shorter than");
  }
  // The header alone: a thread that never wrote a block.
  const ReadOutcome o = read({bytes_.begin(), bytes_.begin() + kHeader});
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  EXPECT_TRUE(o.events.empty());
  EXPECT_EQ(o.summary->damage_offset, kHeader);
}

// ============================================================================
// 3c. Corruption: the function table and the text files
// ============================================================================

class ReaderMetadataFiles : public ReaderTest {
 protected:
  void SetUp() override {
    ReaderTest::SetUp();
    dir_ = trace(kLz);
    functions_ = read_bytes(dir_ / "functions");
    process_ = text_of(read_bytes(dir_ / "process"));
    loadmap_ = text_of(read_bytes(dir_ / "loadmap"));
    biases_ = read_process_metadata(dir_ / "process").load_biases;
  }

  CallOutcome functions(const std::vector<std::uint8_t>& b, std::uint64_t max_count = 1ull << 30) {
    const fs::path f = scratch("functions");
    write_bytes(f, b);
    return call_classified([&] { read_function_table(f, biases_, max_count); });
  }
  CallOutcome process(const std::string& text) {
    const fs::path f = scratch("process");
    write_bytes(f, bytes_of(text));
    return call_classified([&] { read_process_metadata(f); });
  }
  CallOutcome loadmap(const std::string& text) {
    const fs::path f = scratch("loadmap");
    write_bytes(f, bytes_of(text));
    return call_classified([&] { read_load_map(f, biases_); });
  }

  fs::path dir_;
  std::vector<std::uint8_t> functions_;
  std::string process_, loadmap_;
  LoadBiases biases_;
};

TEST_F(ReaderMetadataFiles, FunctionTableHugeCountIsRefusedWithoutAllocating) {
  for (const std::uint64_t count : {std::uint64_t{1} << 40, std::uint64_t{1} << 61,
                                    (std::uint64_t{1} << 61) + 4, ~std::uint64_t{0}}) {
    auto b = functions_;
    patch<std::uint64_t>(b, 16, count);
    const fs::path f = scratch("functions");
    write_bytes(f, b);
    // In a child limited to 256 MiB more address space: 2^40 entries (8 TiB)
    // could never be allocated; only a refusal passes.
    const ChildResult r = run_in_child(
        [&] {
          try {
            read_function_table(f, biases_);
            return 1;
          } catch (const FormatError& e) {
            return e.file() == f && e.offset() == 16 ? 0 : 2;
          } catch (const std::bad_alloc&) {
            return 3;
          }
        },
        10, 256u << 20);
    EXPECT_TRUE(r.exited && r.exit_status == 0)
        << "count " << count << ": exit " << r.exit_status << " signal " << r.signal
        << (r.timed_out ? " timeout" : "");
    EXPECT_LT(r.seconds, 5.0);
  }
}

TEST_F(ReaderMetadataFiles, FunctionTableBadFields) {
  auto b = functions_;
  b[0] = 'Q';
  EXPECT_EQ(functions(b).error_offset, 0u);
  EXPECT_THAT(functions(b).what, HasSubstr("magic"));
  b = functions_;
  patch<std::uint16_t>(b, 8, format::kFunctionsVersion + 1);
  EXPECT_EQ(functions(b).error_offset, 8u);
  EXPECT_THAT(functions(b).what,
              HasSubstr("version " + std::to_string(format::kFunctionsVersion + 1)));
  b = functions_;
  patch<std::uint64_t>(b, 16, peek<std::uint64_t>(b, 16) + 1);
  EXPECT_EQ(functions(b).kind, Kind::kFormatError);
  EXPECT_EQ(functions(b).error_offset, 16u);
  b = functions_;
  b.push_back(0);  // not a whole entry
  EXPECT_EQ(functions(b).kind, Kind::kFormatError);
  b.insert(b.end(), sizeof(format::FunctionEntry) - 1, 0);  // one entry more than the count
  EXPECT_EQ(functions(b).kind, Kind::kFormatError);
  EXPECT_EQ(functions(functions_, kFixtureFunctions - 1).kind, Kind::kFormatError);
  EXPECT_EQ(functions(functions_, kFixtureFunctions).kind, Kind::kOk);
  for (const std::size_t n : {std::size_t{0}, std::size_t{8}, std::size_t{23}}) {
    const CallOutcome o =
        functions({functions_.begin(), functions_.begin() + static_cast<std::ptrdiff_t>(n)});
    EXPECT_EQ(o.kind, Kind::kFormatError) << n;
    EXPECT_EQ(o.error_offset, 0u) << n;
  }
}

TEST_F(ReaderMetadataFiles, ProcessFileWithoutItsMagicLine) {
  const std::string body = process_.substr(process_.find('\n') + 1);
  for (const std::string& text :
       {body, "parlot-process 2\n" + body, "parlot-process 1 \n" + body,
        "parlot-process 1\r\n" + body, std::string("\n"), std::string()}) {
    const CallOutcome o = process(text);
    ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
    EXPECT_EQ(o.error_offset, 0u) << o.what;
  }
}

TEST_F(ReaderMetadataFiles, ProcessFileBadValues) {
  const std::size_t pid_line = line_offset(process_, "pid ");
  ASSERT_NE(pid_line, std::string::npos);
  auto replace_line = [&](const std::string& key, const std::string& line) {
    const std::size_t at = line_offset(process_, key + " ");
    return process_.substr(0, at) + line + process_.substr(process_.find('\n', at));
  };
  for (const std::string v : {"12x", "", "-1", "+1", "0x10", "99999999999999999999999"}) {
    const CallOutcome o = process(replace_line("pid", "pid " + v));
    ASSERT_EQ(o.kind, Kind::kFormatError) << v << ": " << o.describe();
    EXPECT_EQ(o.error_offset, pid_line + 4) << o.what;  // the value
  }
  // No pid at all.
  const CallOutcome o = process(replace_line("pid", "pidx 1"));
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_THAT(o.what, HasSubstr("no pid"));
  EXPECT_EQ(process(replace_line("pid", "pid")).kind, Kind::kFormatError);
  // Last line without its newline.
  EXPECT_EQ(process(process_.substr(0, process_.size() - 1)).error_offset,
            process_.rfind('\n', process_.size() - 2) + 1);
  // Over the 1 MiB limit (a line of 1 MiB + 1 byte).
  EXPECT_EQ(process(process_ + "arg " + std::string(1 << 20, 'a') + "\n").kind, Kind::kFormatError);
}

// The offset of an escape error must point at the bad escape itself.
// Regression (fixed): reader/lib/process_metadata_reader.cpp passes the offset of the LINE
// to detail::unescape (host, executable, arg, rank; and for the load map's
// path field), which adds the position inside the VALUE: the reported
// offset is short by the length of "key " (process) or of the four fields
// before the path (load map). E.g. "host abc\" on a line at offset L
// reports L+4 (the space after "host"), not L+8/L+9.
TEST_F(ReaderMetadataFiles, DanglingBackslashAndBadEscapesNameTheirOffset) {
  const std::size_t at = line_offset(process_, "host ");
  ASSERT_NE(at, std::string::npos);
  const std::string before = process_.substr(0, at);
  const std::string after = process_.substr(process_.find('\n', at));
  struct Case {
    std::string value;
    std::size_t backslash;  // index in the value
  };
  for (const Case& c :
       {Case{"abc\\", 3}, Case{"a\\q", 1}, Case{"a\\x4", 1}, Case{"a\\xzz", 1}, Case{"\\", 0}}) {
    const CallOutcome o = process(before + "host " + c.value + after);
    ASSERT_EQ(o.kind, Kind::kFormatError) << c.value << ": " << o.describe();
    const std::size_t backslash = at + 5 + c.backslash;
    EXPECT_GE(o.error_offset, backslash) << c.value << ": " << o.what;
    EXPECT_LE(o.error_offset, backslash + 2) << c.value << ": " << o.what;
  }
  // The load map path field: "start end bias build-id path".
  const std::size_t line = loadmap_.find('\n') + 1;
  const std::size_t path = loadmap_.rfind(' ', loadmap_.find('\n', line)) + 1;
  const std::string text = loadmap_.substr(0, loadmap_.find('\n', line)) + "\\\n";
  const CallOutcome o = loadmap(text);
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  const std::size_t backslash = text.size() - 2;
  EXPECT_GE(o.error_offset, path) << o.what;
  EXPECT_GE(o.error_offset, backslash) << o.what;
  EXPECT_LE(o.error_offset, backslash + 1) << o.what;
}

TEST_F(ReaderMetadataFiles, LoadMapBadLines) {
  // Version 1 (older traces): run-time addresses and biases.
  const std::string first = std::string(format::kLoadMapV1MagicLine) + "\n";
  const std::size_t line = first.size();
  struct Case {
    std::string line;
    std::string words;
  };
  for (const Case& c :
       {Case{"zz000 2000 0 - /bin/x", "start address"}, Case{"1000 20g0 0 - /bin/x", "end address"},
        Case{"1000 2000 -5 - /bin/x", "load bias"}, Case{"1000 2000 0x0 - /bin/x", "load bias"},
        Case{"10000000000000000 2000 0 - /bin/x", "start address"},
        Case{"1000 2000 0 -", "too few fields"},
        Case{"1000 2000 0 - ", "empty"},  // empty path is allowed...
        Case{"", "too few fields"}, Case{"2000 1000 0 - /bin/x", "empty address range"},
        Case{"1000 1000 0 - /bin/x", "empty address range"},
        Case{" 1000 2000 0 - /bin/x", "start address"}}) {
    const CallOutcome o = loadmap(first + c.line + "\n");
    if (c.words == "empty" && o.kind == Kind::kOk) continue;  // ...as an unnamed object
    ASSERT_EQ(o.kind, Kind::kFormatError) << "'" << c.line << "': " << o.describe();
    EXPECT_THAT(o.what, HasSubstr(c.words)) << c.line;
    EXPECT_GE(o.error_offset, line) << c.line;
    EXPECT_LE(o.error_offset, line + c.line.size()) << c.line;
  }
  EXPECT_EQ(loadmap("parlot-loadmap 3\n").error_offset, 0u);
  EXPECT_THAT(loadmap("parlot-loadmap 3\n").what, HasSubstr("expected 'parlot-loadmap 2'"));
  EXPECT_EQ(loadmap("").kind, Kind::kFormatError);
  EXPECT_EQ(loadmap(loadmap_.substr(0, loadmap_.size() - 1)).kind, Kind::kFormatError);
}

// Version 2 (what the runtime writes): `<index> <link start> <link end>
// <build id> <path>`, made run-time ranges with the process file's biases.
TEST_F(ReaderMetadataFiles, LoadMapVersion2BadLines) {
  const std::string first = std::string(format::kLoadMapMagicLine) + "\n";
  ASSERT_TRUE(loadmap_.starts_with(first));
  ASSERT_FALSE(biases_.empty());
  struct Case {
    std::string line;
    std::string words;
  };
  for (const Case& c :
       {Case{"x 0 1000 - /bin/x", "object index"},
        Case{"1 0 1000 - /bin/x", "out of order (expected 0)"},
        Case{"0 zz 1000 - /bin/x", "start address"}, Case{"0 0 1g00 - /bin/x", "end address"},
        Case{"0 1000 1000 - /bin/x", "empty address range"}, Case{"0 0 1000 -", "too few fields"},
        Case{"", "too few fields"}}) {
    const CallOutcome o = loadmap(first + c.line + "\n");
    ASSERT_EQ(o.kind, Kind::kFormatError) << "'" << c.line << "': " << o.describe();
    EXPECT_THAT(o.what, HasSubstr(c.words)) << c.line;
    EXPECT_GE(o.error_offset, first.size()) << c.line;
    EXPECT_LE(o.error_offset, first.size() + c.line.size()) << c.line;
  }
  // The real map: each object's range is its link-time range moved by its
  // bias; an object whose bias is missing is an error at its line.
  const LoadMap map = read_load_map(dir_ / "loadmap", biases_);
  ASSERT_EQ(map.size(), biases_.size());
  std::istringstream lines(loadmap_.substr(first.size()));
  std::string text;
  for (std::size_t i = 0; std::getline(lines, text); ++i) {
    std::istringstream fields(text);
    std::uint64_t index = 0, start = 0, end = 0;
    fields >> std::dec >> index >> std::hex >> start >> end;
    ASSERT_EQ(index, i);
    EXPECT_EQ(map[i].load_bias, biases_.at(static_cast<std::uint32_t>(i)));
    EXPECT_EQ(map[i].start, start + map[i].load_bias);
    EXPECT_EQ(map[i].end, end + map[i].load_bias);
  }
  LoadBiases missing = biases_;
  missing.erase(1);
  const fs::path f = scratch("loadmap");
  write_bytes(f, bytes_of(loadmap_));
  const CallOutcome o = call_classified([&] { read_load_map(f, missing); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, f);
  EXPECT_EQ(o.error_offset, loadmap_.find("\n1 ") + 1);
  EXPECT_THAT(o.what, HasSubstr("object 1 has no load_bias line in the process file"));
  LoadBiases wrapping = biases_;
  wrapping[0] = ~std::uint64_t{0};
  EXPECT_THAT(call_classified([&] { read_load_map(f, wrapping); }).what, HasSubstr("wraps"));
}

// The process file's `load_bias <index> <bias>` lines.
TEST_F(ReaderMetadataFiles, ProcessFileBadLoadBiases) {
  const std::size_t at = line_offset(process_, "load_bias 0 ");
  ASSERT_NE(at, std::string::npos);
  const std::string before = process_.substr(0, at);
  const std::string after = process_.substr(process_.find('\n', at) + 1);
  for (const auto& [line, words] :
       std::vector<std::pair<std::string, std::string>>{{"load_bias 0", "without a bias"},
                                                        {"load_bias x 1000", "object index"},
                                                        {"load_bias 0 1000x", "load bias"},
                                                        {"load_bias 4294967295 0", "range"}}) {
    const CallOutcome o = process(before + line + "\n" + after);
    ASSERT_EQ(o.kind, Kind::kFormatError) << line << ": " << o.describe();
    EXPECT_THAT(o.what, HasSubstr(words)) << line;
    EXPECT_GE(o.error_offset, at) << line;
    EXPECT_LE(o.error_offset, at + line.size()) << line;
  }
  // The same bias twice is the same object; two biases are corruption.
  const std::string same = process_.substr(at, process_.find('\n', at) + 1 - at);
  EXPECT_EQ(process(process_ + same).kind, Kind::kOk);
  const CallOutcome two = process(process_ + "load_bias 0 1234000\n");
  ASSERT_EQ(two.kind, Kind::kFormatError) << two.describe();
  EXPECT_THAT(two.what, HasSubstr("two load biases for object 0"));
  EXPECT_EQ(two.error_offset, process_.size() + 10);
}

// Version 6: (object, offset) entries, resolved with the biases; an entry
// without an object holds its run-time address; the same table written as
// version 5 (run-time addresses, older traces) reads to the same addresses.
TEST_F(ReaderMetadataFiles, FunctionTableVersion6Entries) {
  ASSERT_EQ(peek<std::uint16_t>(functions_, 8), format::kFunctionsVersion);
  const std::size_t header = sizeof(format::FunctionsHeader);
  const std::size_t entry = sizeof(format::FunctionEntry);
  ASSERT_EQ((functions_.size() - header) % entry, 0u);
  const std::size_t n = (functions_.size() - header) / entry;
  ASSERT_GT(n, 0u);
  const auto table = read_function_table(dir_ / "functions", biases_);
  ASSERT_EQ(table.size(), n);
  std::vector<std::uint8_t> v5(functions_.begin(), functions_.begin() + header);
  patch<std::uint16_t>(v5, 8, format::kFunctionsAddressVersion);
  for (std::size_t i = 0; i < n; ++i) {
    const auto object = peek<std::uint32_t>(functions_, header + i * entry);
    const auto offset = peek<std::uint64_t>(functions_, header + i * entry + 8);
    ASSERT_NE(object, format::kNoObject);
    EXPECT_EQ(table[i], biases_.at(object) + offset) << i;
    v5.resize(v5.size() + 8);
    patch<std::uint64_t>(v5, v5.size() - 8, table[i]);
  }
  const fs::path f = scratch("functions");
  write_bytes(f, v5);
  EXPECT_EQ(read_function_table(f, LoadBiases{}), table);
  // An object without a bias: the entry's offset.
  auto b = functions_;
  patch<std::uint32_t>(b, header + entry, 4000);
  CallOutcome o = functions(b);
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_offset, header + entry);
  EXPECT_THAT(o.what, HasSubstr("function ID 2: object 4000 has no load_bias line"));
  // No object: the offset is the address.
  patch<std::uint32_t>(b, header + entry, format::kNoObject);
  patch<std::uint64_t>(b, header + entry + 8, 0x7f0012345678);
  write_bytes(f, b);
  const auto stub = read_function_table(f, biases_);
  ASSERT_EQ(stub.size(), n);
  EXPECT_EQ(stub[1], 0x7f0012345678u);
  // A table cut in an entry while the process ran (count 0) reads the
  // whole entries before the cut.
  b = functions_;
  patch<std::uint64_t>(b, 16, 0);
  b.resize(header + entry + entry / 2);
  write_bytes(f, b);
  const auto cut = read_function_table(f, biases_);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0], table[0]);
}

// A load map is at most 64 MiB; reading one must stay well below quadratic
// time in its line count.
// Regression (fixed): read_load_map (reader/lib/process_metadata_reader.cpp, the "seen"
// loop) compares every line with every earlier one to drop the runtime's
// duplicate lines: O(n^2). Measured (RelWithDebInfo): 25,000 distinct lines
// ("<hex> <hex> 0 - /x", 0.6 MB) 0.2 s, 50,000 lines 2.1 s, 100,000 lines
// (2.4 MB) 13 s; a 64 MiB load map (2.8 million lines) would take hours, so
// a hostile or damaged directory hangs parlot-read. Here 100,000 lines in a
// child killed after 3 s (linear reading takes ~0.1 s).
TEST_F(ReaderMetadataFiles, LargeLoadMapReadsInLinearTime) {
  std::string text = "parlot-loadmap 1\n";
  char line[64];
  for (unsigned i = 0; i < 100000; ++i) {
    std::snprintf(line, sizeof line, "%x %x 0 - /x\n", 0x100000u + i * 0x1000u,
                  0x100000u + i * 0x1000u + 0x800u);
    text += line;
  }
  const fs::path f = scratch("loadmap");
  write_bytes(f, bytes_of(text));
  const ChildResult r = run_in_child(
      [&] {
        try {
          return read_load_map(f).size() == 100000 ? 0 : 1;
        } catch (...) {
          return 2;
        }
      },
      3);
  EXPECT_FALSE(r.timed_out) << "read_load_map of 100000 lines (" << text.size()
                            << " bytes) did not finish in 3 s";
  EXPECT_TRUE(r.exited && r.exit_status == 0) << r.exit_status << " " << r.signal;
}

// Reading a small text file must allocate about its size, not its limit.
// Regression (fixed): detail::read_text_file (reader/lib/text_file.cpp) does
// data.resize(max_bytes + 1) before reading: every read_load_map allocates
// and zero-fills 64 MiB + 1 (every read_process_metadata 1 MiB + 1) whatever
// the file's size. Reading the fixture's 900-byte load map takes ~25 ms and
// fails with std::bad_alloc (not even a FormatError) when less than 64 MiB
// of address space is left: here, in a child limited to 48 MiB more.
TEST_F(ReaderMetadataFiles, LoadMapReadIsSizedByTheFile) {
  if (sanitized_build()) GTEST_SKIP() << "RLIMIT_AS does not fit sanitizer shadow memory";
  const fs::path f = dir_ / "loadmap";
  ASSERT_LT(fs::file_size(f), 4096u);
  const ChildResult r = run_in_child(
      [&] {
        try {
          return read_load_map(f).empty() ? 1 : 0;
        } catch (const std::bad_alloc&) {
          return 3;
        } catch (...) {
          return 2;
        }
      },
      10, 48u << 20);
  EXPECT_TRUE(r.exited) << "signal " << r.signal;
  EXPECT_EQ(r.exit_status, 0) << "3 = std::bad_alloc reading a " << fs::file_size(f)
                              << "-byte load map with 48 MiB of address space to spare";
}

// ============================================================================
// 4. Semantic corruption: well-formed streams that do not nest
// ============================================================================

class ReaderSemantic : public ReaderTest {
 protected:
  /// A copy of a real process directory whose thread-1 file is replaced by
  /// a hand-made one carrying `events` (with a trailer, in 4 KiB blocks).
  fs::path directory_with_thread1(const TraceKind& kind, const std::vector<std::uint32_t>& events,
                                  const std::string& name) {
    const fs::path dir = copy_of(kind, name);
    const fs::path old = thread_files(dir)[1];
    ThreadEventReader original(old);
    HandMadeThread t;
    t.codec = kind.compress ? format::Codec::kLzZe : format::Codec::kRawWords;
    t.tid = original.summary().tid;
    t.pid = original.summary().pid;
    t.thread_index = 1;
    t.blocks = split_blocks(encode_events(events, kind.compress), kind.compress, 4096);
    t.events = events.size();
    for (const auto v : events) t.raw_bytes += codec::raw_bytes_of(v);
    write_bytes(old, t.bytes());
    return dir;
  }

  /// Reads thread 1 of `dir` as the tool does: through the directory.
  ReadOutcome read_thread1(const fs::path& dir) {
    const auto processes = open_trace_directory(dir);
    EXPECT_EQ(processes.size(), 1u);
    return read_thread_file(processes.at(0).thread_files.at(1), true,
                            processes.at(0).function_addresses.size());
  }
};

TEST_F(ReaderSemantic, HandMadeCopyOfARealStreamReadsBack) {
  for (const TraceKind& kind : {kLz, kRaw}) {
    const auto real = intact_events(thread_files(trace(kind))[1]);
    const fs::path dir = directory_with_thread1(kind, real, "same-" + kind.name());
    const ReadOutcome o = read_thread1(dir);
    ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
    EXPECT_TRUE(o.events == real);
    EXPECT_GE(o.summary->blocks, kind.compress ? 4u : 9u);
  }
}

TEST_F(ReaderSemantic, ExitAtDepthZero) {
  for (const TraceKind& kind : {kLz, kRaw}) {
    auto events = intact_events(thread_files(trace(kind))[1]);
    const std::size_t n = events.size();
    events.push_back(0);  // one exit more than entries
    const fs::path dir = directory_with_thread1(kind, events, "exit-" + kind.name());
    const fs::path file = thread_files(dir)[1];
    const ReadOutcome o = read_thread1(dir);
    ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
    EXPECT_TRUE(o.error_from_tracker);
    EXPECT_EQ(o.error_file, file);
    EXPECT_EQ(o.error_offset, n);  // the event index
    EXPECT_THAT(o.what, HasSubstr(file.string() + ": offset " + std::to_string(n) +
                                  ": exit with no open call"));
    // ...and as the very first event.
    const fs::path dir0 = directory_with_thread1(kind, {0, 1, 0}, "exit0-" + kind.name());
    const ReadOutcome o0 = read_thread1(dir0);
    ASSERT_EQ(o0.kind, Kind::kFormatError) << o0.describe();
    EXPECT_EQ(o0.error_offset, 0u);
  }
}

TEST_F(ReaderSemantic, FunctionIdBeyondTheTable) {
  for (const TraceKind& kind : {kLz, kRaw}) {
    const auto real = intact_events(thread_files(trace(kind))[1]);
    for (const std::uint32_t bad :
         {static_cast<std::uint32_t>(kFixtureFunctions + 1), 0x8000u, format::kMaxFunctionId}) {
      auto events = real;
      // Replace the ID of the entry at about the middle (an entry: non-zero).
      std::size_t at = events.size() / 2;
      while (events[at] == 0) ++at;
      events[at] = bad;
      const fs::path dir =
          directory_with_thread1(kind, events, "id-" + std::to_string(bad) + kind.name());
      const ReadOutcome o = read_thread1(dir);
      ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
      EXPECT_TRUE(o.error_from_tracker);
      EXPECT_EQ(o.error_offset, at);
      EXPECT_THAT(o.what, HasSubstr("unknown function ID " + std::to_string(bad)));
      EXPECT_EQ(o.events.size(), at);
    }
  }
}

// Words of an LZ stream: four literals 1, then `lengths` matches of 65535
// events predicted from the context (1, 1, 1): all entries into ID 1, the
// stream nesting deeper and deeper, ~262,000 events per 9 bytes of file.
std::vector<std::uint8_t> deep_nesting_payload(std::size_t lengths) {
  std::vector<std::uint16_t> words = {0, 1, 0, 1, 0, 1, 0, 1};
  words.insert(words.end(), lengths, 0xffff);
  return ze_pack(words);
}

TEST_F(ReaderSemantic, DeepNestingPayloadDecodesAsDesigned) {
  // The test stream itself: 4 + 2 x 65535 entries into function 1.
  const auto payload = deep_nesting_payload(4);
  HandMadeThread t;
  t.blocks = {payload};
  t.trailer = false;
  const fs::path f = scratch("deep-small.trace");
  write_bytes(f, t.bytes());
  const ReadOutcome o = read_thread_file(f, true, 1);
  ASSERT_EQ(o.kind, Kind::kOk) << o.describe();
  ASSERT_EQ(o.events.size(), 4u + 4 * 65535u);
  EXPECT_TRUE(
      std::all_of(o.events.begin(), o.events.end(), [](std::uint32_t v) { return v == 1; }));
}

// No runtime nests deeper than PARLOT_MAX_DEPTH (at most 2^26 frames; deeper
// calls are dropped and counted in the trailer), so a stream nesting deeper
// is corrupt and the call stack rebuilt from it must stay bounded.
// Regression (fixed): CallStackTracker (include/parlot/call_stack_tracker.h) pushes every
// entry on an unbounded std::vector. An 18 KB LZ file (no trailer: cut
// short) of 8192 maximal matches of ID 1 decodes to 2^29 nested entries;
// tracking them needs 2 GiB (4 bytes per event, and a 16 MiB block can
// encode 1.9e11 events), so parlot-read trace/stats dies of std::bad_alloc
// or the OOM killer. Here the child, limited to 1 GiB more address space,
// gets std::bad_alloc (exit 3) instead of a FormatError. Sanitized builds
// (no RLIMIT_AS, slow pushes) use 1100 matches (2^26 + 2.9 million entries,
// just deeper than any runtime) and get them all accepted (exit 1).
TEST_F(ReaderSemantic, NestingDeeperThanAnyRuntimeIsAnErrorNotAnAllocation) {
  const std::size_t matches = sanitized_build() ? 1100 : 8192;
  HandMadeThread t;
  t.blocks = split_blocks(deep_nesting_payload(matches), true, 4096);
  t.trailer = false;
  const fs::path f = scratch("deep.trace");
  write_bytes(f, t.bytes());
  EXPECT_LT(fs::file_size(f), 20000u);
  const ChildResult r = run_in_child(
      [&] {
        try {
          ThreadEventReader reader(f);
          CallStackTracker tracker(1, f);
          for (auto b = reader.next_batch(); !b.empty(); b = reader.next_batch()) {
            for (const std::uint32_t v : b) tracker.push(v);
          }
          return 1;  // every open call accepted
        } catch (const FormatError& e) {
          return e.file() == f ? 0 : 2;
        } catch (const std::bad_alloc&) {
          return 3;
        }
      },
      sanitized_build() ? 60 : 20, std::uint64_t{1} << 30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.exited) << "signal " << r.signal;
  EXPECT_EQ(r.exit_status, 0) << "1 = " << 4 + matches * 65535
                              << " nested calls accepted, 3 = std::bad_alloc";
}

// ============================================================================
// 5. Missing files
// ============================================================================

class ReaderMissingFiles : public ReaderTest {};

TEST_F(ReaderMissingFiles, NoFunctionTable) {
  const fs::path dir = copy_of(kLz, "nofn");
  fs::remove(dir / "functions");
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_TRUE(processes[0].function_addresses.empty());
  ASSERT_EQ(processes[0].warnings.size(), 1u);
  EXPECT_THAT(processes[0].warnings[0], HasSubstr((dir / "functions").string()));
  // IDs are then unchecked: the stream still reads and nests.
  const ReadOutcome o = read_thread_file(processes[0].thread_files[0], true, 0);
  EXPECT_EQ(o.kind, Kind::kOk) << o.describe();
  // The tool names functions #N, and says the table of this finished
  // process is missing (damage: exit status 2).
  const RunResult r = run_program({read_tool_path(), "trace", "--no-sites", dir.string()}, {}, 20);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr((dir / "functions").string() + ": offset 0: missing"));
  EXPECT_THAT(r.out, HasSubstr("#1() {"));
}

TEST_F(ReaderMissingFiles, NoLoadMap) {
  const fs::path dir = copy_of(kLz, "nomap");
  fs::remove(dir / "loadmap");
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_TRUE(processes[0].load_map.empty());
  ASSERT_EQ(processes[0].warnings.size(), 1u);
  EXPECT_THAT(processes[0].warnings[0], HasSubstr((dir / "loadmap").string()));
  EXPECT_EQ(processes[0].function_addresses.size(), kFixtureFunctions);
  const RunResult r = run_program({read_tool_path(), "trace", dir.string()}, {}, 20);
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_status, 2) << r.err;  // shown, but an input is missing
  EXPECT_THAT(r.err, HasSubstr((dir / "loadmap").string() + ": offset 0: missing"));
  EXPECT_THAT(r.out, HasSubstr("0x"));  // unnamed addresses
}

// The listing reads only process files: a damaged function table or load
// map is found when that process is opened (open_process_directory, what
// each rank of an mpirun'd parlot-read does for its own processes only),
// with the file and offset, not when the directory is listed.
TEST_F(ReaderMissingFiles, ListingReadsOnlyTheProcessFile) {
  const fs::path cut = copy_of(kLz, "listed-cut");
  const fs::path junk = copy_of(kLz, "listed-junk");
  const auto whole = open_trace_directory(cut);
  ASSERT_EQ(whole.size(), 1u);
  fs::resize_file(cut / "functions", 12);  // shorter than its header
  const std::uint64_t map_size = fs::file_size(junk / "loadmap");
  {
    std::ofstream map(junk / "loadmap", std::ios::app);
    map << "not-a-load-map-line\n";
  }
  for (const fs::path& dir : {cut, junk}) {
    const auto listing = list_trace_directory(dir);
    ASSERT_EQ(listing.size(), 1u);
    EXPECT_EQ(listing[0].directory, dir);
    EXPECT_EQ(listing[0].metadata.pid, whole[0].metadata.pid);
    EXPECT_EQ(listing[0].metadata.start_ns, whole[0].metadata.start_ns);
    // The run directory above lists it too (with the other copies).
    EXPECT_FALSE(list_trace_directory(dir.parent_path()).empty());
  }
  CallOutcome o = call_classified([&] { open_process_directory(list_trace_directory(cut)[0]); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, cut / "functions");
  EXPECT_EQ(o.error_offset, 0u);
  o = call_classified([&] { open_process_directory(list_trace_directory(junk)[0]); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, junk / "loadmap");
  EXPECT_EQ(o.error_offset, map_size);
}

TEST_F(ReaderMissingFiles, NoProcessFile) {
  const fs::path dir = copy_of(kLz, "noproc");
  fs::remove(dir / "process");
  CallOutcome o = call_classified([&] { open_trace_directory(dir); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, dir);
  EXPECT_EQ(o.error_offset, 0u);
  // The run directory above it has no process directory left either.
  o = call_classified([&] { open_trace_directory(dir.parent_path()); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, dir.parent_path());
  o = call_classified([&] { read_process_metadata(dir / "process"); });
  ASSERT_EQ(o.kind, Kind::kFormatError) << o.describe();
  EXPECT_EQ(o.error_file, dir / "process");
}

TEST_F(ReaderMissingFiles, EmptyDirectoryRegularFileAndNothing) {
  const fs::path empty = scratch("empty");
  fs::create_directories(empty);
  const fs::path file = scratch("plain-file");
  write_bytes(file, bytes_of("parlot-process 1\npid 1\n"));
  for (const fs::path& p : {empty, file, scratch("does-not-exist")}) {
    const CallOutcome o = call_classified([&] { open_trace_directory(p); });
    ASSERT_EQ(o.kind, Kind::kFormatError) << p << ": " << o.describe();
    EXPECT_EQ(o.error_file, p);
    EXPECT_EQ(o.error_offset, 0u);
  }
  const ReadOutcome t = read_thread_file(scratch("no-such.trace"));
  EXPECT_EQ(t.kind, Kind::kFormatError) << t.describe();
  for (const auto& f : {std::function<void()>([&] { read_function_table(scratch("none")); }),
                        std::function<void()>([&] { read_load_map(scratch("none")); }),
                        std::function<void()>([&] { read_process_metadata(scratch("none")); })}) {
    const CallOutcome o = call_classified(f);
    EXPECT_EQ(o.kind, Kind::kFormatError) << o.describe();
    EXPECT_EQ(o.error_file, scratch("none"));
  }
}

TEST_F(ReaderMissingFiles, DirectoriesWhereFilesShouldBe) {
  // A directory named like each file: an error naming it, never a throw of
  // another type.
  for (const std::string name : {"process", "functions", "loadmap"}) {
    const fs::path dir = copy_of(kLz, "dir-" + name);
    fs::remove(dir / name);
    fs::create_directory(dir / name);
    const CallOutcome o = call_classified([&] { open_trace_directory(dir); });
    ASSERT_EQ(o.kind, Kind::kFormatError) << name << ": " << o.describe();
    EXPECT_EQ(o.error_file, dir / name);
  }
  const ReadOutcome t = read_thread_file(scratch(""));
  EXPECT_EQ(t.kind, Kind::kFormatError) << t.describe();
}

// A FIFO (or other special file) where a metadata file should be: an
// error naming it, as for thread files, which are skipped unless regular.
// Regression (fixed): open_trace_directory (reader/lib/trace_directory.cpp, open_process)
// checks only fs::exists() for "process", "loadmap" and "functions", and
// read_text_file / read_function_table open them with std::ifstream: a
// FIFO named "loadmap" (or "process", "functions") in a process directory
// blocks in open(2) forever; parlot-read hangs (reproduce: mkfifo
// <dir>/loadmap after removing it; parlot-read info <dir>). Each child is
// killed after 1.5 s.
TEST_F(ReaderMissingFiles, FifoWhereAMetadataFileShouldBeDoesNotHang) {
  for (const std::string name : {"process", "loadmap", "functions"}) {
    const fs::path dir = copy_of(kLz, "fifo-" + name);
    fs::remove(dir / name);
    ASSERT_EQ(mkfifo((dir / name).c_str(), 0600), 0);
    const ChildResult r = run_in_child(
        [&] {
          try {
            open_trace_directory(dir);
            return 1;
          } catch (const FormatError& e) {
            return e.file() == dir / name ? 0 : 2;
          }
        },
        1.5);
    EXPECT_FALSE(r.timed_out) << "open_trace_directory blocks on a FIFO named " << name;
    EXPECT_TRUE(r.exited && r.exit_status == 0)
        << name << ": exit " << r.exit_status << " signal " << r.signal;
  }
}

TEST_F(ReaderMissingFiles, NoThreadFiles) {
  const fs::path dir = copy_of(kLz, "nothreads");
  for (const fs::path& f : thread_files(dir)) fs::remove(f);
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_TRUE(processes[0].thread_files.empty());
}

// ============================================================================
// 6. parlot-read on damaged directories
// ============================================================================

class ParlotReadTool : public ReaderTest {
 protected:
  /// Runs parlot-read `cmd` on `dir` (20 s timeout) and checks the damage
  /// contract: exit status `status` (2: what could be read was shown; 1:
  /// nothing could be read), no signal, and on stderr one summary line
  /// "parlot-read: ...: <file>: offset N: ...".
  void expect_failure(const std::string& cmd, const fs::path& dir, const fs::path& file,
                      int status = 2) {
    SCOPED_TRACE("parlot-read " + cmd + " " + dir.string());
    const RunResult r = run_program({read_tool_path(), cmd, dir.string()}, tool_env(), 20);
    EXPECT_FALSE(r.timed_out) << "hang";
    EXPECT_FALSE(r.signaled) << "killed by signal " << r.signal << "\n" << r.err;
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.exit_status, status) << r.err;
    EXPECT_THAT(r.err, HasSubstr(file.string() + ": offset "));
    EXPECT_THAT(r.err, ContainsRegex("^parlot-read: [^\n]*offset [0-9]+: [^\n]*\n$")) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("runtime error")));  // UBSan
    EXPECT_THAT(r.err, Not(HasSubstr("Sanitizer")));
  }

  static std::vector<std::string> tool_env() {
    // Sanitizer findings must not pass for the expected exit status 1.
    return {"ASAN_OPTIONS=exitcode=86:max_allocation_size_mb=1024",
            "UBSAN_OPTIONS=halt_on_error=1:exitcode=87:print_stacktrace=1"};
  }
};

TEST_F(ParlotReadTool, TruncatedThreadFile) {
  const fs::path dir = copy_of(kLz4k, "truncated");
  const fs::path file = thread_files(dir)[0];
  const auto offsets = block_offsets(read_bytes(file));
  fs::resize_file(file, offsets[2] + 100);  // inside the third block
  for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"})
    expect_failure(cmd, dir, file);
  {
    const RunResult r =
        run_program({read_tool_path(), "trace", "--format", "jsonl", dir.string()}, tool_env(), 20);
    EXPECT_TRUE(r.exited && r.exit_status == 2) << r.exit_status << " " << r.signal << "\n"
                                                << r.err;
    EXPECT_THAT(r.err, HasSubstr(file.string() + ": offset " + std::to_string(offsets[2]) +
                                 ": block payload cut short"));
  }
  fs::resize_file(file, 40);  // inside the header
  for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"})
    expect_failure(cmd, dir, file);
}

TEST_F(ParlotReadTool, CorruptedThreadFile) {
  const fs::path dir = copy_of(kLz4k, "corrupt");
  const fs::path file = thread_files(dir)[1];
  auto b = read_bytes(file);
  const auto offsets = block_offsets(b);
  patch<std::uint32_t>(b, offsets[1], 0xdeadbeefu);  // block magic
  write_bytes(file, b);
  for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"})
    expect_failure(cmd, dir, file);
  // Payload corruption (a zero-elimination group cut short at a block's
  // end) is found only by the commands that decode.
  b = read_bytes(thread_files(trace(kLz4k))[1]);
  const std::uint64_t last = offsets[offsets.size() - 2];  // the last data block
  const std::uint64_t end = last + kBlockHeader + peek<std::uint32_t>(b, last + 4);
  std::uint64_t bitmap_at = last + kBlockHeader;
  for (std::uint64_t p = bitmap_at; p < end;
       p += 1 + static_cast<std::uint64_t>(std::popcount(static_cast<unsigned>(b[p])))) {
    bitmap_at = p;
  }
  ASSERT_LT(std::popcount(static_cast<unsigned>(b[bitmap_at])), 8);  // the padded group
  b[bitmap_at] = 0xff;  // promises 8 bytes the block does not hold
  write_bytes(file, b);
  ASSERT_EQ(read_thread_file(file).kind, Kind::kFormatError);
  for (const std::string cmd : {"trace", "stats", "loops", "classes", "stacks"})
    expect_failure(cmd, dir, file);
  // A stream that does not nest.
  const fs::path dir2 = copy_of(kRaw, "unnested");
  const fs::path file2 = thread_files(dir2)[0];
  auto r = read_bytes(file2);
  patch<std::uint16_t>(r, kHeader + kBlockHeader, 0);  // first event: an exit
  write_bytes(file2, r);
  for (const std::string cmd : {"trace", "stats", "loops", "classes", "stacks"})
    expect_failure(cmd, dir2, file2);
}

TEST_F(ParlotReadTool, CorruptedMetadataFiles) {
  struct Case {
    std::string file;
    std::function<void(std::vector<std::uint8_t>&)> damage;
  };
  const std::vector<Case> cases = {
      {"functions", [](auto& b) { b[16] ^= 0x40; }},
      {"functions", [](auto& b) { b.pop_back(); }},
      {"process", [](auto& b) { b[3] = 'X'; }},
      {"process", [](auto& b) { b.pop_back(); }},
      {"loadmap", [](auto& b) { b[20] = 'z'; }},
      {"loadmap", [](auto& b) { b.insert(b.end() - 1, '\\'); }},
  };
  int i = 0;
  for (const Case& c : cases) {
    const fs::path dir = copy_of(kLz, "meta-" + std::to_string(i++));
    auto b = read_bytes(dir / c.file);
    c.damage(b);
    write_bytes(dir / c.file, b);
    // Without its process file the only process cannot be read at all;
    // without a good function table or load map it is read unnamed.
    const int status = c.file == "process" ? 1 : 2;
    for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"})
      expect_failure(cmd, dir, dir / c.file, status);
  }
}

TEST_F(ParlotReadTool, RandomlyCorruptedThreadFilesNeverKillTheTool) {
  const fs::path dir = copy_of(kLz4k, "random");
  const fs::path file = thread_files(dir)[0];
  const auto bytes = read_bytes(file);
  std::mt19937_64 rng(11);
  for (int i = 0; i < (sanitized_build() ? 3 : 6); ++i) {
    auto b = bytes;
    mutate(b, rng, 0, b.size());
    write_bytes(file, b);
    const ReadOutcome o = read_thread_file(file, true, kFixtureFunctions);
    // The tool reports an error and a file cut inside a block (damage,
    // exit status 2); a file of this finished process that ends after a
    // whole block is a thread cut short (exit status 0, one line).
    const bool cut_at_block =
        o.kind == Kind::kOk && !o.summary->trailer && o.summary->ends_at_block_boundary;
    const bool bad = (o.kind != Kind::kOk || !o.summary->trailer) && !cut_at_block;
    for (const std::string cmd : {"trace", "stats", "loops", "classes", "stacks"}) {
      const RunResult r = run_program({read_tool_path(), cmd, dir.string()}, tool_env(), 20);
      EXPECT_FALSE(r.timed_out) << cmd << " trial " << i;
      EXPECT_FALSE(r.signaled) << cmd << " trial " << i << " signal " << r.signal << "\n" << r.err;
      EXPECT_EQ(r.exit_status, bad ? 2 : 0) << cmd << " trial " << i << "\n" << r.err;
      if (bad) {
        EXPECT_THAT(r.err, HasSubstr(file.string() + ": offset ")) << cmd << " trial " << i;
      }
    }
  }
}

// A load map may name any object path; one that cannot be read is a
// warning (its addresses shown as numbers, exit status 0), never a hang.
// Regression (fixed): parlot::symbolizer (via parlot-read trace/stats) opens the objects
// named in the load map without checking they are regular files: a load
// map line whose path is a FIFO makes parlot-read hang forever (the same
// line naming a missing file gives "warning: cannot read ..." and exit 0).
// Reproduce: mkfifo /tmp/obj; replace the fixture's path on line 2 of
// <dir>/loadmap with /tmp/obj; parlot-read stats <dir>. Killed after 4 s.
TEST_F(ParlotReadTool, LoadMapObjectThatIsAFifoDoesNotHang) {
  const fs::path dir = copy_of(kLz, "fifo-object");
  const fs::path fifo = scratch("object-fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string fixture = fs::canonical(fixture_path()).string();
  std::string text = text_of(read_bytes(dir / "loadmap"));
  const std::size_t at = text.find(" " + fixture + "\n");
  ASSERT_NE(at, std::string::npos);
  text.replace(at + 1, fixture.size(), fifo.string());
  write_bytes(dir / "loadmap", bytes_of(text));
  const RunResult r = run_program({read_tool_path(), "stats", dir.string()}, tool_env(),
                                  sanitized_build() ? 15 : 4);
  EXPECT_FALSE(r.timed_out) << "parlot-read stats hangs on a FIFO named by the load map";
  EXPECT_FALSE(r.signaled && !r.timed_out) << "signal " << r.signal;
  EXPECT_EQ(r.exit_status, 0) << r.err;
}

// Without a function table any ID is valid and is shown as "#<id>"; the
// tool's per-ID caches must not be sized by the largest ID in the file.
// (Regression test: before commit 2bc8dfb, FunctionNames and the jsonl
// cache did resize(id + 1), so ID 2^31-1 made parlot-read allocate 2^31
// pointers and strings and die of std::bad_alloc, "parlot-read: error:
// std::bad_alloc" without file or offset.) The tool runs with RLIMIT_AS =
// 4 GiB (ASan: max_allocation_size_mb=1024).
TEST_F(ParlotReadTool, LargeFunctionIdWithoutATableDoesNotAllocatePerId) {
  const fs::path dir = copy_of(kLz, "bigid");
  fs::remove(dir / "functions");
  const fs::path file = thread_files(dir)[1];
  HandMadeThread t;
  t.thread_index = 1;
  const std::vector<std::uint32_t> events = {5, format::kMaxFunctionId, 0, 0};
  t.blocks = {encode_events(events, true)};
  t.events = events.size();
  write_bytes(file, t.bytes());
  for (const std::string cmd : {"trace", "jsonl", "stats"}) {
    std::vector<std::string> argv = {read_tool_path(), cmd, dir.string()};
    if (cmd == "jsonl") argv = {read_tool_path(), "trace", "--format", "jsonl", dir.string()};
    const RunResult r =
        run_program(argv, tool_env(), 30, sanitized_build() ? 0 : std::uint64_t{4} << 30);
    EXPECT_FALSE(r.timed_out) << cmd;
    EXPECT_FALSE(r.signaled) << cmd << " signal " << r.signal;
    EXPECT_EQ(r.exit_status, 2) << cmd << "\n" << r.err.substr(0, 2000);  // no function table
    EXPECT_NE(r.out.find("#2147483647"), std::string::npos)
        << cmd << ": output does not name #2147483647";
  }
}

// Issue 8 case 16: a thread file that the process file counts ("threads N")
// but that is missing, or that is not a regular file, loses that thread's
// events: every command says so and exits 2 (it was skipped silently with
// exit 0). The other thread is still read. Thread indices are not dense
// (a thread without events has no file), so a missing file is found by the
// count and reported for the directory's thread files as a whole.
TEST_F(ParlotReadTool, MissingThreadFileIsReportedAndExitsTwo) {
  const fs::path dir = copy_of(kLz, "missing-thread");
  const fs::path gone = thread_files(dir)[1];
  fs::remove(gone);
  for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"}) {
    expect_failure(cmd, dir, dir / "thread-*.trace");
  }
  const RunResult r = run_program({read_tool_path(), "trace", dir.string()}, tool_env(), 20);
  EXPECT_THAT(r.err, HasSubstr("counts 2 threads, 1 has a file; 1 thread's events are lost"));
  EXPECT_THAT(r.out, HasSubstr("# thread "));  // thread #0 still printed
  EXPECT_THAT(r.out, HasSubstr("main() {"));
  const auto processes = open_trace_directory(dir);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].thread_files.size(), 1u);
  ASSERT_EQ(processes[0].errors.size(), 1u);
}

TEST_F(ParlotReadTool, NonRegularThreadFileIsNamedAndExitsTwo) {
  for (const std::string kind : {"directory", "fifo", "dangling-symlink"}) {
    SCOPED_TRACE(kind);
    const fs::path dir = copy_of(kLz, "odd-thread-" + kind);
    const fs::path file = thread_files(dir)[1];
    fs::remove(file);
    if (kind == "directory") {
      fs::create_directory(file);
    } else if (kind == "fifo") {
      ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
    } else {
      fs::create_symlink(dir / "nowhere", file);
    }
    for (const std::string cmd : {"info", "trace", "stats", "loops", "classes", "stacks"})
      expect_failure(cmd, dir, file);
    const RunResult r = run_program({read_tool_path(), "stats", dir.string()}, tool_env(), 20);
    EXPECT_THAT(r.err, HasSubstr(file.string() + ": offset 0: thread file is not a regular file"));
    EXPECT_THAT(r.out, HasSubstr("main"));  // thread #0 still counted
  }
}

// Issue 8 case 14: a function whose name is not valid UTF-8 and holds a
// terminal escape sequence ("odd" 0xff ESC "[31mname", odd_names_fixture):
// jsonl output replaces the bad byte with U+FFFD and escapes ESC as \u001b,
// every line parses and the stream goes on to the end; text output shows
// both bytes as \xNN. No raw ESC or 0xff byte reaches the terminal.
TEST_F(ParlotReadTool, InvalidUtf8AndEscapesInNamesAreEscapedAndTheStreamGoesOn) {
  const fs::path dir = make_trace(tmp_.path() / "odd-names", kLz, odd_names_fixture_path());
  auto no_raw_bytes = [](const std::string& out) {
    return out.find('\x1b') == std::string::npos && out.find('\xff') == std::string::npos;
  };
  {
    const RunResult r =
        run_program({read_tool_path(), "trace", "--format", "jsonl", dir.string()}, tool_env(), 20);
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(no_raw_bytes(r.out));
    std::vector<std::pair<std::string, std::string>> events;  // kind, function
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      ASSERT_FALSE(j.is_discarded()) << "not JSON: " << line;
      events.emplace_back(j.at("kind").get<std::string>(), j.at("function").get<std::string>());
    }
    const std::string shown = "odd\xef\xbf\xbd\x1b[31mname";  // U+FFFD for 0xff
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"enter", "main"}, {"enter", shown},   {"enter", "leaf"}, {"exit", "leaf"},
        {"exit", shown},   {"enter", "after"}, {"enter", "leaf"}, {"exit", "leaf"},
        {"exit", "after"}, {"exit", "main"}};
    EXPECT_EQ(events, expected);
    EXPECT_THAT(r.out, HasSubstr(R"("function":"odd)"
                                 "\xef\xbf\xbd"
                                 R"(\u001b[31mname")"));
  }
  {
    const RunResult r = run_program({read_tool_path(), "trace", dir.string()}, tool_env(), 20);
    ASSERT_TRUE(r.exited);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(no_raw_bytes(r.out));
    EXPECT_THAT(r.out, HasSubstr("  odd\\xff\\x1b[31mname() {\n    leaf();\n  } /* "
                                 "odd\\xff\\x1b[31mname() */\n  after() {\n"));
    EXPECT_THAT(r.out, HasSubstr("} /* main() */\n"));
  }
  {
    const RunResult r = run_program({read_tool_path(), "stats", dir.string()}, tool_env(), 20);
    EXPECT_EQ(r.exit_status, 0) << r.err;
    EXPECT_TRUE(no_raw_bytes(r.out));
    EXPECT_THAT(r.out, HasSubstr("main -> odd\\xff\\x1b[31mname\n"));
  }
}

}  // namespace
