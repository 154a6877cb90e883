// The node layout (PARLOT_LAYOUT=node): one file per node whatever the
// number of processes and threads, read by every view exactly as the
// process layout; a node file cut at any offset of its last records reads
// up to its last complete record; a corrupted byte is named by node file
// and offset; a SIGKILLed process leaves the others readable; under
// mpirun, K ranks per simulated node (PARLOT_NODE_RANKS).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_support.h"
#include "parlot/format.h"
#include "parlot/node_format.h"
#include "parlot/trace_reader.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class NodeLayout : public ::testing::Test {
 protected:
  /// Runs the fixture (with `args`) traced into `dir` in `layout`.
  RunResult record(const fs::path& dir, const std::string& layout,
                   const std::vector<std::string>& args = {}) {
    std::vector<std::string> argv{PARLOT_NODE_LAYOUT_FIXTURE};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, {std::string("LD_PRELOAD=") + PARLOT_RUNTIME_PATH,
                      "PARLOT_DIR=" + dir.string(), "PARLOT_LAYOUT=" + layout, "PARLOT_NODE=n0"});
  }

  /// The names in `dir`.
  static std::set<std::string> entries(const fs::path& dir) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
  }

  /// Offsets of the records of node file `file` (and its size at the end).
  static std::vector<std::uint64_t> record_offsets(const fs::path& file) {
    const std::string bytes = slurp(file);
    std::vector<std::uint64_t> offsets;
    for (std::uint64_t off = 0; off + sizeof(format::NodeRecordHeader) <= bytes.size();) {
      format::NodeRecordHeader h;
      std::memcpy(&h, bytes.data() + off, sizeof h);
      if (h.magic != format::kNodeRecordMagic || h.record_bytes == 0) break;
      offsets.push_back(off);
      off += h.record_bytes;
    }
    offsets.push_back(bytes.size());
    return offsets;
  }

  /// `text` with the trace directory, pids and tids of `dir`'s processes
  /// made neutral ("DIR", "P<k>", "T<k>" in listing order), so that two runs
  /// of one deterministic program print the same.
  static std::string neutral(std::string text, const fs::path& dir) {
    std::vector<UnreadableProcess> unreadable;
    std::map<std::string, std::string> names;
    int k = 0;
    for (const auto& listed : list_trace_directory(dir, &unreadable)) {
      const ProcessTrace p = open_process_directory(listed, true);
      names[std::to_string(p.metadata.pid)] = "P" + std::to_string(k);
      for (const auto& f : p.thread_files) {
        const std::string name = f.filename().string();  // thread-<index>-<tid>.trace
        const std::string tid =
            name.substr(name.rfind('-') + 1, name.size() - 6 - name.rfind('-') - 1);
        if (!names.contains(tid))
          names[tid] = "T" + std::to_string(k) + "." + name.substr(7, name.find('-', 7) - 7);
      }
      ++k;
    }
    std::string out;
    const std::regex number("[0-9]+");
    auto begin = std::sregex_iterator(text.begin(), text.end(), number);
    std::size_t at = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += text.substr(at, it->position() - at);
      auto n = names.find(it->str());
      out += n != names.end() ? n->second : it->str();
      at = it->position() + it->length();
    }
    out += text.substr(at);
    // Process directories: "<dir>/pid-P" and "<dir>/node-n0.parlot/pid-P".
    for (const std::string& prefix : {dir.string() + "/node-n0.parlot/", dir.string() + "/"}) {
      for (std::size_t i; (i = out.find(prefix)) != std::string::npos;)
        out.replace(i, prefix.size(), "DIR/");
    }
    return out;
  }

  /// For the views that print times: numbers (and their time units) made '#', spaces squeezed,
  /// lines sorted (rows ordered by time may swap).
  static std::vector<std::string> without_numbers(const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(std::regex_replace(s, std::regex("[0-9]+(\\.[0-9]+)?"), "#"));
    for (std::string line; std::getline(in, line);) {
      line = std::regex_replace(line, std::regex("# ?(ns|us|ms|s)\\b"), "#");
      lines.push_back(std::regex_replace(line, std::regex(" +"), " "));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  TempDir tmp_;
};

TEST_F(NodeLayout, ForkAndThreadsMakeOneNodeFileAndEveryViewPrintsWhatTheProcessLayoutPrints) {
  const fs::path node = tmp_.path() / "node";
  const fs::path process = tmp_.path() / "process";
  const RunResult a = record(node, "node");
  ASSERT_EQ(a.exit_status, 0) << a.err;
  const RunResult b = record(process, "process");
  ASSERT_EQ(b.exit_status, 0) << b.err;
  // One file, no directory: the parent, its two threads and the fork child.
  EXPECT_EQ(entries(node), std::set<std::string>{"node-n0.parlot"});
  EXPECT_EQ(entries(process).size(), 2u);
  const auto listed = list_trace_directory(node);
  ASSERT_EQ(listed.size(), 2u);
  for (const std::vector<std::string>& view :
       {std::vector<std::string>{"trace"}, {"stacks"}, {"classes"}, {"stats"}}) {
    std::vector<std::string> n = view, p = view;
    n.push_back(node.string());
    p.push_back(process.string());
    const RunResult rn = parlot_read(n);
    const RunResult rp = parlot_read(p);
    ASSERT_EQ(rn.exit_status, 0) << view[0] << ": " << rn.err;
    ASSERT_EQ(rp.exit_status, 0) << view[0] << ": " << rp.err;
    EXPECT_FALSE(rn.out.empty());
    EXPECT_EQ(neutral(rn.out, node), neutral(rp.out, process)) << view[0];
  }
  // info and report print durations: equal but for the numbers.
  for (const char* view : {"info", "report"}) {
    const RunResult rn = parlot_read({view, node.string()});
    const RunResult rp = parlot_read({view, process.string()});
    ASSERT_EQ(rn.exit_status, 0) << view << ": " << rn.err;
    ASSERT_EQ(rp.exit_status, 0) << view << ": " << rp.err;
    EXPECT_EQ(without_numbers(neutral(rn.out, node)), without_numbers(neutral(rp.out, process)))
        << view;
  }
}

TEST_F(NodeLayout, RecordSummarisesTheProcessesOfTheNodeFile) {
  const fs::path node = tmp_.path() / "node";
  const RunResult r = run({PARLOT_FRONTEND_PATH, "record", "--layout", "node", "-d", node.string(),
                           "--", PARLOT_NODE_LAYOUT_FIXTURE});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("parlot: 2 processes, 4 threads, "));
  EXPECT_EQ(entries(node).size(), 1u);
  // One process of the node file, named on its own.
  const auto listed = list_trace_directory(node);
  ASSERT_EQ(listed.size(), 2u);
  const RunResult one = parlot_read({"info", listed[1].directory.string()});
  EXPECT_EQ(one.exit_status, 0) << one.err;
  EXPECT_THAT(one.out, HasSubstr("process " + std::to_string(listed[1].metadata.pid) + ":"));
  EXPECT_THAT(one.out, HasSubstr("total: 1 thread"));
}

TEST_F(NodeLayout, ANodeFileCutAtAnyOffsetOfItsLastRecordsReadsUpToTheLastWholeOne) {
  const fs::path node = tmp_.path() / "node";
  ASSERT_EQ(record(node, "node").exit_status, 0);
  const fs::path file = node / "node-n0.parlot";
  const std::string whole = slurp(file);
  const auto offsets = record_offsets(file);
  ASSERT_EQ(offsets.back(), whole.size()) << "records do not tile the file";
  ASSERT_GE(offsets.size(), 6u);
  // Every cut inside the last three records, read through the library
  // (what every view lists); then one cut through parlot-read.
  const std::uint64_t from = offsets[offsets.size() - 4];
  auto cut_to = [&](std::uint64_t cut) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(whole.data(), static_cast<std::streamsize>(cut));
  };
  for (std::uint64_t cut = from; cut < whole.size(); ++cut) {
    cut_to(cut);
    std::vector<UnreadableProcess> unreadable;
    const auto listed = list_trace_directory(node, &unreadable);
    EXPECT_EQ(listed.size(), 2u) << "cut at " << cut;
    for (const auto& l : listed) (void)open_process_directory(l, true);
    const std::uint64_t last_whole =
        *std::prev(std::upper_bound(offsets.begin(), offsets.end(), cut));
    if (cut == last_whole) {
      EXPECT_TRUE(unreadable.empty()) << "cut at " << cut << ": " << unreadable[0].message;
      continue;
    }
    ASSERT_EQ(unreadable.size(), 1u) << "cut at " << cut;
    EXPECT_THAT(unreadable[0].message,
                HasSubstr(file.string() + ": offset " + std::to_string(last_whole) + ": "))
        << "cut at " << cut;
    EXPECT_THAT(unreadable[0].message,
                HasSubstr("the last " + std::to_string(cut - last_whole) + " bytes"))
        << "cut at " << cut;
  }
  const std::uint64_t cut = offsets[offsets.size() - 2] + 7;
  cut_to(cut);
  const RunResult r = parlot_read({"info", node.string()});
  EXPECT_EQ(r.exit_status, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("process "));
  EXPECT_THAT(r.err + r.out,
              HasSubstr(file.string() + ": offset " + std::to_string(offsets[offsets.size() - 2]) +
                        ": incomplete record header; the last 7 bytes"));
}

TEST_F(NodeLayout, ACorruptedByteIsNamedByNodeFileAndOffsetAndTheOtherRecordsStillRead) {
  const fs::path node = tmp_.path() / "node";
  ASSERT_EQ(record(node, "node").exit_status, 0);
  const fs::path file = node / "node-n0.parlot";
  std::string bytes = slurp(file);
  const auto offsets = record_offsets(file);
  ASSERT_GE(offsets.size(), 6u);
  // A payload byte of a record in the middle (a thread file's block).
  const std::uint64_t victim = offsets[offsets.size() / 2];
  bytes[victim + sizeof(format::NodeRecordHeader) + 2] ^= 0x20;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  const RunResult r = parlot_read({"info", node.string()});
  EXPECT_NE(r.exit_status, 0);
  EXPECT_THAT(r.err + r.out, HasSubstr(file.string() + ": offset " + std::to_string(victim) +
                                       ": record checksum mismatch"));
  EXPECT_THAT(r.out, HasSubstr("process "));
}

TEST_F(NodeLayout, ASigkilledProcessLeavesTheOthersReadable) {
  const fs::path node = tmp_.path() / "node";
  const RunResult r = record(node, "node", {"kill"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_EQ(entries(node), std::set<std::string>{"node-n0.parlot"});
  std::vector<UnreadableProcess> unreadable;
  const auto listed = list_trace_directory(node, &unreadable);
  EXPECT_TRUE(unreadable.empty());
  ASSERT_EQ(listed.size(), 2u);
  // The parent (which finished) reads whole: three threads with trailers.
  int finished = 0;
  for (const auto& l : listed) {
    if (l.metadata.end_ns == 0) continue;  // the killed child
    ++finished;
    const ProcessTrace p = open_process_directory(l, false);
    EXPECT_TRUE(p.errors.empty());
    ASSERT_EQ(p.thread_files.size(), 3u);
    for (const auto& f : p.thread_files) {
      ThreadEventReader t(f);
      EXPECT_TRUE(t.summary().trailer.has_value()) << f;
    }
  }
  EXPECT_EQ(finished, 1);
}

TEST_F(NodeLayout, EightRanksOfFourPerNodeMakeTwoNodeFilesReadLikeTheProcessLayout) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  TempDir& tmp = tmp_;
  const std::string halo = examples_dir() + "/halo_mpi";
  if (!fs::exists(halo)) GTEST_SKIP() << "no halo_mpi example";
  auto record = [&](const fs::path& dir, const std::string& layout) {
    return run(
        {mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "8", "-x", "PARLOT_NODE_RANKS",
         PARLOT_FRONTEND_PATH, "record", "-q", "--layout", layout, "-d", dir.string(), "--", halo},
        {"PARLOT_NODE_RANKS=4"});
  };
  const fs::path node = tmp.path() / "node";
  const fs::path process = tmp.path() / "process";
  const RunResult a = record(node, "node");
  ASSERT_EQ(a.exit_status, 0) << a.out << a.err;
  const RunResult b = record(process, "process");
  ASSERT_EQ(b.exit_status, 0) << b.out << b.err;
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(node)) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"node-ranks-0.parlot", "node-ranks-4.parlot"}));
  const auto listed = list_trace_directory(node);
  ASSERT_EQ(listed.size(), 8u);
  for (std::size_t i = 0; i < listed.size(); ++i)
    EXPECT_EQ(listed[i].metadata.rank, std::to_string(i));
  for (const char* view : {"stacks", "classes"}) {
    const RunResult rn = parlot_read({view, node.string()});
    const RunResult rp = parlot_read({view, process.string()});
    ASSERT_EQ(rn.exit_status, 0) << view << ": " << rn.err;
    ASSERT_EQ(rp.exit_status, 0) << view << ": " << rp.err;
    EXPECT_FALSE(rn.out.empty());
    EXPECT_EQ(neutral(rn.out, node), neutral(rp.out, process)) << view;
  }
}

}  // namespace
}  // namespace parlot::e2e
