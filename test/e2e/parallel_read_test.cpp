// Reading big jobs (issue 9 §6-§7): `mpirun -np N parlot-read
// stats|classes|stacks|trace|loops|diff DIR` splits the process
// directories over the ranks (each rank opens only its share) and must
// print exactly what the serial run prints, and `classes` over a job of
// many short processes (examples/fork_tree) must put each planted outlier
// alone in its class.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e_support.h"
#include "parlot/trace_reader.h"

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class ParallelRead : public ::testing::Test {
 protected:
  static std::string fork_tree() { return examples_dir() + "/fork_tree"; }
  static std::string halo() { return examples_dir() + "/halo_mpi"; }

  /// `parlot-read ARGS` under `mpirun -np ranks`.
  RunResult mpirun_read(int ranks, const std::vector<std::string>& args) {
    std::vector<std::string> argv{mpirun_, "--allow-run-as-root", "--oversubscribe",
                                  "-np",   std::to_string(ranks), PARLOT_READ_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    // In a sanitized build: Open MPI's allocations left at exit are not
    // parlot-read's leaks.
    return run(argv, {"ASAN_OPTIONS=detect_leaks=0"});
  }

  /// Every view's serial output must equal its output under mpirun with
  /// each of `ranks`.
  void expect_same_as_serial(const std::vector<std::vector<std::string>>& views,
                             const std::vector<int>& ranks) {
    for (const auto& args : views) {
      // Call sites shown (where recorded) in both: stacks' partials carry them.
      const RunResult serial = parlot_read_with_sites(args);
      ASSERT_EQ(serial.exit_status, 0) << args[0] << ": " << serial.err;
      ASSERT_FALSE(serial.out.empty());
      for (const int n : ranks) {
        const RunResult parallel = mpirun_read(n, args);
        EXPECT_EQ(parallel.exit_status, 0) << args[0] << " on " << n << " ranks: " << parallel.err;
        EXPECT_EQ(parallel.out, serial.out) << args[0] << " on " << n << " ranks";
      }
    }
  }

  std::string mpirun_ = find_mpirun();
  TempDir tmp_;
};

// A fork tree of 24 children: child 7 takes another branch once, child 11
// hangs until the parent SIGTERMs it (an open stack to merge). One child at
// a time (--parallel 1), so child k starts k-th and is process k + 1.
class ParallelReadForkTree : public ParallelRead {
 protected:
  void SetUp() override {
    if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH";
    const RunResult r =
        run({PARLOT_FRONTEND_PATH, "record", "-q", "-d", dir().string(), "--", fork_tree(), "24",
             "20", "--outlier", "7", "--hang", "11", "--parallel", "1"});
    ASSERT_EQ(r.exit_status, 1) << r.out << r.err;  // the hung child counts as failed
    ASSERT_THAT(r.out, HasSubstr("children: 24, failed: 1\n"));
  }
  fs::path dir() const { return tmp_.path() / "fork_tree"; }
};

TEST_F(ParallelReadForkTree, StatsUnderMpirunEqualsSerial) {
  const std::string d = dir().string();
  expect_same_as_serial({{"stats", d}, {"stats", "--by", "process", d}}, {4, 3});
}

TEST_F(ParallelReadForkTree, ClassesUnderMpirunEqualsSerial) {
  const std::string d = dir().string();
  expect_same_as_serial({{"classes", d}, {"classes", "--by", "stack", "--similarity", d}}, {4, 3});
}

TEST_F(ParallelReadForkTree, StacksUnderMpirunEqualsSerial) {
  const std::string d = dir().string();
  const RunResult stacks = parlot_read({"stacks", d});
  // Child 11 is process 12 (the parent is process 0).
  EXPECT_EQ(stacks.out,
            "25 threads (processes 0-24)\n"
            "  main [24 threads: processes 1-24]\n"
            "    spawn_children [24 threads: processes 1-24] (stack ends here for processes "
            "1-11,13-24)\n"
            "      child_work [1 thread: process 12]\n"
            "        wait_forever [1 thread: process 12]\n"
            "  (no open call: process 0)\n");
  expect_same_as_serial({{"stacks", d}, {"stacks", "--format", "dot", d}}, {4, 3});
}

TEST_F(ParallelReadForkTree, TraceUnderMpirunEqualsSerial) {
  const std::string d = dir().string();
  expect_same_as_serial({{"trace", d},
                         {"trace", "--format", "jsonl", "--exclude", "^step$", d},
                         {"trace", "--include", "main|child_work|wait_forever", d}},
                        {4, 3});
}

TEST_F(ParallelReadForkTree, LoopsUnderMpirunEqualsSerial) {
  const std::string d = dir().string();
  expect_same_as_serial({{"loops", d}, {"loops", "--max-depth", "3", "--max-body", "2", d}},
                        {4, 3});
}

// diff of a run against itself and against a run without the outlier and
// the hang (children 7 and 11 differ), both ways, with and without a filter.
TEST_F(ParallelReadForkTree, DiffUnderMpirunEqualsSerial) {
  const fs::path plain = tmp_.path() / "plain";
  const RunResult r = run({PARLOT_FRONTEND_PATH, "record", "-q", "-d", plain.string(), "--",
                           fork_tree(), "24", "20", "--parallel", "1"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const std::string d = dir().string(), p = plain.string();
  const RunResult against = parlot_read({"diff", d, p});
  EXPECT_THAT(against.out, HasSubstr("process 8 thread 0: first divergence at event "));
  EXPECT_THAT(against.out, HasSubstr("process 12 thread 0: first divergence at event "));
  EXPECT_THAT(against.out, HasSubstr("2 threads differ (2 groups), 23 identical\n"));
  expect_same_as_serial({{"diff", d, d},
                         {"diff", d, p},
                         {"diff", "--exclude", "^step", "--context", "1", p, d},
                         {"diff", "--left", "rank=8", "--right", "rank=9", d}},
                        {4, 3});
}

// The strace log of each rank of `mpirun -np 2 parlot-read ARGS`:
// the files each opened.
std::vector<std::string> opened_files_per_rank(const std::string& mpirun, const fs::path& logs,
                                               const std::vector<std::string>& args) {
  std::vector<std::string> argv{
      mpirun,
      "--allow-run-as-root",
      "--oversubscribe",
      "-np",
      "2",
      "sh",
      "-c",
      "exec strace -f -qq -e trace=open,openat -o \"$0.$OMPI_COMM_WORLD_RANK\" \"$@\"",
      (logs / "strace").string(),
      PARLOT_READ_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run(argv, {"ASAN_OPTIONS=detect_leaks=0"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return {slurp(logs / "strace.0"), slurp(logs / "strace.1")};
}

// Each rank opens only its share: under mpirun -np 2, rank 0 reads every
// process file (the order needs them) but the function table, load map and
// thread files only of the processes it owns (even positions); rank 1 those
// of the odd ones. This fails if every rank opened every process.
TEST_F(ParallelReadForkTree, EachRankOpensOnlyItsShare) {
  if (!have("strace")) GTEST_SKIP() << "strace is not on PATH";
  const auto listing = list_trace_directory(dir());
  ASSERT_EQ(listing.size(), 25u);
  for (const char* view : {"stats", "trace", "loops"}) {
    const auto logs = opened_files_per_rank(mpirun_, tmp_.path(), {view, dir().string()});
    if (logs[0].find("PTRACE") != std::string::npos || logs[0].empty()) {
      GTEST_SKIP() << "strace cannot trace here";
    }
    for (std::size_t i = 0; i < listing.size(); ++i) {
      const std::string process = "\"" + (listing[i].directory / "process").string() + "\"";
      const std::string functions = "\"" + (listing[i].directory / "functions").string() + "\"";
      const std::string loadmap = "\"" + (listing[i].directory / "loadmap").string() + "\"";
      const std::string thread = "\"" + (listing[i].directory / "thread-").string();
      const unsigned owner = i % 2;
      for (unsigned rank = 0; rank < 2; ++rank) {
        const std::string& log = logs[rank];
        const bool owns = rank == owner;
        EXPECT_THAT(log, HasSubstr(process)) << view << ": rank " << rank;
        EXPECT_EQ(log.find(functions) != std::string::npos, owns)
            << view << ": rank " << rank << ", process " << i;
        EXPECT_EQ(log.find(loadmap) != std::string::npos, owns)
            << view << ": rank " << rank << ", process " << i;
        EXPECT_EQ(log.find(thread) != std::string::npos, owns)
            << view << ": rank " << rank << ", process " << i;
      }
    }
  }
}

// A damaged process is reported once, on the summary line, and the output
// and exit status are the serial run's: process 5 without its function
// table, then with a function table cut short; either way its functions
// show as IDs, the other processes as usual, exit status 2.
TEST_F(ParallelReadForkTree, DamagedProcessIsReportedOnceAsSerially) {
  const auto listing = list_trace_directory(dir());
  ASSERT_EQ(listing.size(), 25u);
  const fs::path functions = listing[5].directory / "functions";
  const std::string table = slurp(functions);
  ASSERT_GT(table.size(), 16u);
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
  };
  const std::string d = dir().string();
  auto check = [&](const std::string& named) {
    // diff reads the directory twice (LEFT and RIGHT): still one report.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"stats", d}, {"trace", d}, {"loops", d}, {"diff", d, d}}) {
      const RunResult serial = parlot_read_with_sites(args);
      EXPECT_EQ(serial.exit_status, 2) << serial.err;
      EXPECT_NE(serial.out, "");
      EXPECT_EQ(count(serial.err, named), 1u) << serial.err;
      EXPECT_EQ(count(serial.err, "parlot-read: "), 1u) << serial.err;
      for (const int n : {2, 3}) {
        const RunResult parallel = mpirun_read(n, args);
        EXPECT_EQ(parallel.exit_status, 2) << args[0] << " on " << n << " ranks: " << parallel.err;
        EXPECT_EQ(parallel.out, serial.out) << args[0] << " on " << n << " ranks";
        EXPECT_EQ(count(parallel.err, named), 1u) << parallel.err;
        EXPECT_THAT(parallel.err, HasSubstr(serial.err)) << args[0] << " on " << n << " ranks";
      }
    }
  };
  fs::rename(functions, tmp_.path() / "functions.saved");
  check(functions.string() + ": offset 0: missing");
  {
    std::ofstream cut(functions, std::ios::binary);
    cut.write(table.data(), 12);  // shorter than its 16-byte header
  }
  check(functions.string() + ": offset 0: ");
}

// Corrupt event data found while printing (after other processes' text):
// the serial run prints up to it and goes on with the other processes,
// then one summary line names it (exit status 2); under mpirun the leader
// prints the same text and the same line. Process 3's thread file is
// damaged (owned by rank 1 under -np 2, by rank 0 under -np 3), in the
// first place, scanning byte by byte, where the decoder fails rather than
// the file's structure checks.
TEST_F(ParallelReadForkTree, CorruptEventsWhilePrintingEndAsSerially) {
  const fs::path copy = tmp_.path() / "corrupt";
  const auto listing = list_trace_directory(dir());
  ASSERT_EQ(listing.size(), 25u);
  const fs::path relative = fs::relative(listing[3].directory, dir());
  const std::string d = copy.string();
  RunResult serial;
  bool found = false;
  for (std::size_t offset = 64; offset < 400 && !found; offset += 2) {
    fs::remove_all(copy);
    fs::copy(dir(), copy, fs::copy_options::recursive);
    fs::path file;
    for (const auto& e : fs::directory_iterator(copy / relative)) {
      if (e.path().filename().string().starts_with("thread-")) file = e.path();
    }
    std::string bytes = slurp(file);
    if (offset + 4 > bytes.size()) break;
    for (std::size_t i = offset; i < offset + 4; ++i) bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    serial = parlot_read_with_sites({"trace", d});
    found = serial.exit_status == 2 && !serial.out.empty() &&
            serial.err.find("corrupt event data") != std::string::npos;
  }
  ASSERT_TRUE(found) << "no offset makes the decoder fail";
  // The processes after the damaged one are printed too.
  EXPECT_THAT(serial.out, HasSubstr("# process " + std::to_string(listing[24].metadata.pid)));
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"trace", d}, {"loops", d}, {"diff", dir().string(), d}}) {
    const RunResult expected = args[0] == "trace" ? serial : parlot_read(args);
    EXPECT_EQ(expected.exit_status, 2) << args[0];
    for (const int n : {2, 3}) {
      const RunResult parallel = mpirun_read(n, args);
      EXPECT_EQ(parallel.exit_status, 2) << args[0] << " on " << n << " ranks";
      EXPECT_EQ(parallel.out, expected.out) << args[0] << " on " << n << " ranks";
      const auto first = parallel.err.find("parlot-read: ");
      ASSERT_NE(first, std::string::npos) << parallel.err;
      EXPECT_EQ(parallel.err.find("parlot-read: ", first + 1), std::string::npos) << parallel.err;
      EXPECT_THAT(parallel.err, HasSubstr(expected.err)) << args[0] << " on " << n << " ranks";
    }
  }
}

TEST_F(ParallelRead, HaloOnFourRanksReadOnFourRanksEqualsSerial) {
  if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  if (!fs::exists(halo())) GTEST_SKIP() << halo() << " was not built (MPI not found)";
  const fs::path dir = tmp_.path() / "halo";
  const RunResult r =
      run({mpirun_, "--allow-run-as-root", "--oversubscribe", "-np", "4", PARLOT_FRONTEND_PATH,
           "record", "-q", "-d", dir.string(), "--", halo(), "--wrong-branch", "1"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const std::string d = dir.string();
  expect_same_as_serial(
      {{"stats", d}, {"classes", d}, {"stacks", d}, {"trace", d}, {"loops", d}, {"diff", d, d}},
      {4});
}

// Every view's --mpi keeps the MPI calls and the functions on their call
// paths only (relax, use_ghosts, init_field and parse_args make no MPI call
// and go), with the calls' own counts; the same under mpirun.
TEST_F(ParallelRead, MpiFilterKeepsMpiCallsAndTheirCallPaths) {
  if (mpirun_.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  if (!fs::exists(halo())) GTEST_SKIP() << halo() << " was not built (MPI not found)";
  const fs::path dir = tmp_.path() / "halo";
  const RunResult r =
      run({mpirun_, "--allow-run-as-root", "--oversubscribe", "-np", "2", PARLOT_FRONTEND_PATH,
           "record", "-q", "-d", dir.string(), "--", halo(), "3"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const std::string d = dir.string();
  // 2 (main) + 6 (init, rank, size) + 3 x 22 (an iteration) + 2 (finalize).
  const std::string skeleton =
      " (76 events): main { MPI_Init MPI_Comm_rank MPI_Comm_size 3 x [ exchange_halo { 2 x [ "
      "shift { MPI_Irecv MPI_Issend MPI_Waitall } ] } residual_norm { MPI_Allreduce } ] "
      "MPI_Finalize }\n";
  const RunResult loops = parlot_read({"loops", "--mpi", d});
  ASSERT_EQ(loops.exit_status, 0) << loops.err;
  EXPECT_EQ(loops.out, "rank 0 thread 0" + skeleton + "rank 1 thread 0" + skeleton);

  // The calls-per-function section of stats: name -> calls.
  auto calls = [](const std::string& text) {
    std::map<std::string, std::uint64_t> out;
    std::istringstream in(text.substr(0, text.find("caller -> callee")));
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line);
      std::uint64_t n = 0;
      std::string name;
      if (fields >> n >> name) out[name] = n;
    }
    return out;
  };
  const RunResult all = parlot_read({"stats", d});
  const RunResult mpi = parlot_read({"stats", "--mpi", d});
  ASSERT_EQ(mpi.exit_status, 0) << mpi.err;
  const auto kept = calls(mpi.out);
  const auto every = calls(all.out);
  std::vector<std::string> names;
  for (const auto& [name, n] : kept) {
    names.push_back(name);
    EXPECT_EQ(n, every.at(name)) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"MPI_Allreduce", "MPI_Comm_rank", "MPI_Comm_size",
                                             "MPI_Finalize", "MPI_Init", "MPI_Irecv", "MPI_Issend",
                                             "MPI_Waitall", "exchange_halo", "main",
                                             "residual_norm", "shift"}));
  for (const char* gone : {"relax", "use_ghosts", "init_field", "parse_args"}) {
    EXPECT_EQ(every.count(gone), 1u) << gone;
  }
  expect_same_as_serial({{"stats", "--mpi", d},
                         {"trace", "--mpi", d},
                         {"loops", "--mpi", d},
                         {"classes", "--mpi", d},
                         {"stacks", "--mpi", d},
                         {"diff", "--mpi", d, d}},
                        {2});
}

// 64 children, children 5 and 40 take another branch (at different
// steps): each must be alone in its class, the parent alone in another,
// and the 61 others together.
TEST_F(ParallelRead, ClassesPutEachOutlierChildAlone) {
  const fs::path dir = tmp_.path() / "outliers";
  const RunResult r =
      run({PARLOT_FRONTEND_PATH, "record", "-q", "-d", dir.string(), "--", fork_tree(), "64", "50",
           "--outlier", "5", "--outlier", "40", "--parallel", "1"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const RunResult classes = parlot_read({"classes", dir.string()});
  ASSERT_EQ(classes.exit_status, 0) << classes.err;
  EXPECT_THAT(classes.out, HasSubstr("4 classes of 65 threads (--by trace)\n"
                                     "class B: process 0 (1 thread), representative process 0 "
                                     "thread 0\n"));
  // Child k is process k + 1. Child 5 leaves step at step 5 (event
  // 4 + 5 * 10: main, spawn_children and child_work entered, then 10 events
  // per step), child 40 at step 40.
  EXPECT_THAT(classes.out,
              HasSubstr("class C: process 6 (1 thread), representative process 6 thread 0\n"
                        "  versus class A: first divergence at event 53 "));
  EXPECT_THAT(classes.out,
              HasSubstr("class D: process 41 (1 thread), representative process 41 thread 0\n"
                        "  versus class A: first divergence at event 403 "));
  EXPECT_THAT(classes.out, HasSubstr(">       enter step_other at fork_tree.c:80\n"));
  EXPECT_THAT(classes.out, HasSubstr("class A: processes 1-5,7-40,42-64 (62 threads), "
                                     "representative process 1 thread 0\n"));
}

// A fork child of a rank records its parent's rank. Two ranks that each
// fork two children (child 1 an outlier): six processes, two per rank
// number. Each thread keeps a name of its own ("rank R fork K thread T"),
// so the views never merge two of them. Before, both children and their
// rank were "rank R thread 0": classes printed the same representative for
// two classes, and stacks counted 2 threads instead of 6.
TEST_F(ParallelRead, ForkChildrenOfRanksAreNamedApart) {
  const fs::path dir = tmp_.path() / "ranked_forks";
  for (const char* rank : {"0", "1"}) {
    const RunResult r = run({PARLOT_FRONTEND_PATH, "record", "-q", "-d", dir.string(), "--",
                             fork_tree(), "2", "5", "--outlier", "1", "--parallel", "1"},
                            {std::string("OMPI_COMM_WORLD_RANK=") + rank});
    ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  }
  const std::string d = dir.string();
  const RunResult classes = parlot_read({"classes", d});
  ASSERT_EQ(classes.exit_status, 0) << classes.err;
  EXPECT_THAT(classes.out,
              HasSubstr("3 classes of 6 threads (--by trace)\n"
                        "class A: ranks 0-1 (2 threads), representative rank 0 thread 0\n"));
  EXPECT_THAT(classes.out, HasSubstr("class B: ranks 0-1 fork 1 (2 threads), representative rank "
                                     "0 fork 1 thread 0\n"));
  EXPECT_THAT(classes.out, HasSubstr("class C: ranks 0-1 fork 2 (2 threads), representative rank "
                                     "0 fork 2 thread 0\n"));
  const RunResult stacks = parlot_read({"stacks", d});
  ASSERT_EQ(stacks.exit_status, 0) << stacks.err;
  EXPECT_THAT(stacks.out, ::testing::StartsWith("6 threads (ranks 0-1 + fork 1 + fork 2)\n"));
  const RunResult loops = parlot_read({"loops", d});
  ASSERT_EQ(loops.exit_status, 0) << loops.err;
  std::vector<std::string> labels;
  std::istringstream lines(loops.out);
  for (std::string line; std::getline(lines, line);)
    labels.push_back(line.substr(0, line.find(" (")));
  EXPECT_EQ(labels, (std::vector<std::string>{"rank 0 thread 0", "rank 0 fork 1 thread 0",
                                              "rank 0 fork 2 thread 0", "rank 1 thread 0",
                                              "rank 1 fork 1 thread 0", "rank 1 fork 2 thread 0"}));
  // Child 1 (fork 2) leaves the common path at step 1: step_other.
  const RunResult diff =
      parlot_read({"diff", d, "--left", "rank=1,fork=1", "--right", "rank=1,fork=2", "--no-loops"});
  EXPECT_EQ(diff.exit_status, 0) << diff.err;
  EXPECT_THAT(diff.out, HasSubstr("rank 1 fork 1 thread 0 vs rank 1 fork 2 thread 0: first "
                                  "divergence at event "));
  EXPECT_THAT(diff.out, HasSubstr(">       enter step_other at fork_tree.c:80\n"));
  if (!mpirun_.empty()) {
    expect_same_as_serial({{"classes", d}, {"stacks", d}, {"loops", d}, {"stats", d}}, {2});
  }
}

}  // namespace
}  // namespace parlot::e2e
