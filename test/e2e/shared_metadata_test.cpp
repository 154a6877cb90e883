// Rank-invariant metadata (docs/FORMAT.md, `functions` version 6 and
// `loadmap` version 2): processes that run the same program write the same
// `functions` and `loadmap` bytes whatever their load addresses, each
// process's load biases going to its `process` file; and the reader names
// every function as it named them from the older formats, which it still
// reads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>

#include "e2e_support.h"

namespace parlot::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

bool address_space_randomised() {
  return slurp("/proc/sys/kernel/randomize_va_space").substr(0, 1) != "0";
}

// Writes the metadata of process directory `p` in the formats of the
// runtimes before the split (`loadmap` version 1 with run-time addresses
// and biases, `functions` version 5 with run-time addresses), from what the
// reader made of the new files.
void write_old_formats(const ProcessTrace& p) {
  {
    std::ofstream map(p.directory / "loadmap", std::ios::trunc);
    map << format::kLoadMapV1MagicLine << "\n" << std::hex;
    for (const LoadedObject& o : p.load_map) {
      std::string path;
      for (const char c : o.path) path += c == ' ' ? std::string("\\x20") : std::string(1, c);
      map << o.start << " " << o.end << " " << o.load_bias << " "
          << (o.build_id.empty() ? "-" : o.build_id) << " " << path << "\n";
    }
  }
  std::ofstream table(p.directory / "functions", std::ios::binary | std::ios::trunc);
  format::FunctionsHeader h{};
  std::memcpy(h.magic, format::kFunctionsMagic, sizeof h.magic);
  h.version = format::kFunctionsAddressVersion;
  h.count = p.function_addresses.size();
  table.write(reinterpret_cast<const char*>(&h), sizeof h);
  table.write(reinterpret_cast<const char*>(p.function_addresses.data()),
              static_cast<std::streamsize>(p.function_addresses.size() * 8));
}

// parlot-read's output with the trace directory's name taken out.
std::string read_output(const std::vector<std::string>& args, const fs::path& dir) {
  const RunResult r = parlot_read(args);
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return std::regex_replace(r.out, std::regex(dir.string()), "DIR");
}

class SharedMetadataRoundTrip : public ::testing::TestWithParam<bool> {};

// The runtime writes the new formats; the reader names every function from
// them exactly as from the old formats of the same run (generated from it),
// and those still read. With PARLOT_LIBCALLS=1, library calls are entry
// stubs outside every object (entries without an object).
TEST_P(SharedMetadataRoundTrip, NamesAreThoseOfTheOldFormats) {
  const bool libcalls = GetParam();
  const std::string program = examples_dir() + "/quicksort_threads";
  TempDir dir;
  std::vector<std::string> env;
  if (libcalls) env.push_back("PARLOT_LIBCALLS=1");
  const RunResult r = run_traced({program, "2000"}, dir.path(), env);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 1u);
  const ProcessTrace& p = processes[0];
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_THAT(slurp(p.directory / "loadmap"),
              ::testing::StartsWith(std::string(format::kLoadMapMagicLine) + "\n"));
  EXPECT_FALSE(p.metadata.load_biases.empty());
  ASSERT_FALSE(p.function_addresses.empty());
  // Every function lies in an object of the map (stubs excepted).
  std::size_t in_objects = 0;
  for (const std::uint64_t a : p.function_addresses) {
    for (const LoadedObject& o : p.load_map) in_objects += o.contains(a) ? 1 : 0;
  }
  if (!libcalls) {
    EXPECT_EQ(in_objects, p.function_addresses.size());
  }

  const std::vector<std::vector<std::string>> views = {{"trace", dir.path().string()},
                                                       {"stats", dir.path().string()}};
  std::vector<std::string> new_outputs;
  for (const auto& v : views) new_outputs.push_back(read_output(v, dir.path()));
  EXPECT_THAT(new_outputs[0], HasSubstr("quicksort"));
  EXPECT_THAT(new_outputs[0], ::testing::Not(HasSubstr("0x")));

  write_old_formats(p);
  const auto old = open_trace_directory(dir.path());
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].function_addresses, p.function_addresses);
  ASSERT_EQ(old[0].load_map.size(), p.load_map.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    EXPECT_EQ(read_output(views[i], dir.path()), new_outputs[i]) << views[i][0];
  }
}

INSTANTIATE_TEST_SUITE_P(LibraryCalls, SharedMetadataRoundTrip, ::testing::Bool());

// Four ranks of one MPI program (with Parlot's MPI wrappers, one more
// object) write byte-identical `functions` and `loadmap` files, although
// their objects are loaded at other addresses; their `process` files hold
// the biases that tell them apart.
TEST(SharedMetadata, SpmdRanksWriteTheSameFunctionsAndLoadMap) {
  const std::string program = examples_dir() + "/halo_mpi";
  if (!fs::exists(program)) GTEST_SKIP() << program << " was not built (MPI not found)";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH";
  std::string preload = PARLOT_RUNTIME_PATH;
  if (!std::string(PARLOT_MPI_WRAPPERS_PATH).empty()) preload += ":" PARLOT_MPI_WRAPPERS_PATH;
  TempDir dir;
  // The process layout, whose files this test compares byte for byte (under
  // a launcher the node layout is the default: it holds the same bytes as
  // records of one node file).
  const RunResult r = run({mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "4", "-x",
                           "LD_PRELOAD=" + preload, "-x", "PARLOT_DIR=" + dir.path().string(), "-x",
                           "PARLOT_LAYOUT=process", program, "6"});
  ASSERT_EQ(r.exit_status, 0) << r.out << r.err;
  const auto processes = open_trace_directory(dir.path());
  ASSERT_EQ(processes.size(), 4u);
  const std::string functions = slurp(processes[0].directory / "functions");
  const std::string loadmap = slurp(processes[0].directory / "loadmap");
  ASSERT_GT(functions.size(), sizeof(format::FunctionsHeader));
  ASSERT_THAT(loadmap, HasSubstr("halo_mpi"));
  bool addresses_differ = false;
  for (const ProcessTrace& p : processes) {
    SCOPED_TRACE(p.directory.string());
    ASSERT_TRUE(p.errors.empty()) << p.errors[0];
    EXPECT_EQ(slurp(p.directory / "functions"), functions);
    EXPECT_EQ(slurp(p.directory / "loadmap"), loadmap);
    EXPECT_EQ(p.metadata.load_biases.size(), processes[0].metadata.load_biases.size());
    addresses_differ |= p.function_addresses != processes[0].function_addresses;
  }
  // What the identical bytes stand for differs: the files do not hold
  // run-time addresses (unless the kernel does not randomise them).
  if (address_space_randomised()) {
    EXPECT_TRUE(addresses_differ);
  }
  // And every rank's functions are named alike.
  const std::string names = read_output({"stats", processes[1].directory.string()}, dir.path());
  EXPECT_THAT(names, HasSubstr("exchange_halo"));
  for (std::size_t i = 2; i < processes.size(); ++i) {
    EXPECT_EQ(read_output({"stats", processes[i].directory.string()}, dir.path()), names);
  }
}

}  // namespace
}  // namespace parlot::e2e
