// Helpers of the end-to-end tests: temporary directories, running a
// program under libparlotrt.so, running parlot-read, reading events back.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot::e2e {

using parlot::test::TempDir;

struct RunResult {
  int exit_status = -1;  ///< exit code, or -1 if killed by a signal
  int signal = 0;        ///< the signal that killed it, or 0
  std::string out;       ///< stdout
  std::string err;       ///< stderr
};

/// Runs `argv` with `env` ("NAME=value") added to the environment, capturing
/// stdout and stderr. Times out after 120 s (then the exit status is 124).
RunResult run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

/// The whole content of file `p` ("" when it cannot be read).
std::string slurp(const std::filesystem::path& p);

/// Starts `argv` (argv[0] a path) in the background with stdout and stderr
/// into file `out`; returns its pid (the caller waits for it).
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& out);

/// True when `program` is on PATH.
bool have(const std::string& program);

/// Runs `argv` with LD_PRELOAD=libparlotrt.so and PARLOT_DIR=`trace_dir`.
RunResult run_traced(const std::vector<std::string>& argv, const std::filesystem::path& trace_dir,
                     std::vector<std::string> env = {});

/// Runs parlot-read with `args`; `trace` and `stacks` get --no-sites (the
/// call trees the tests compare leave call sites out).
RunResult parlot_read(const std::vector<std::string>& args);

/// Runs parlot-read with exactly `args` (call sites shown where recorded).
RunResult parlot_read_with_sites(const std::vector<std::string>& args);

/// Every thread's events (function IDs, 0 = exit) of a process, by thread index.
std::vector<std::vector<std::uint32_t>> read_thread_events(const ProcessTrace& process);

/// Splits parlot-read trace output into per-thread blocks, keyed by
/// thread index, each without its "# thread" header line.
std::vector<std::string> split_threads(const std::string& trace_text);

/// The fixture binaries (gcc -O0, gcc -O2, clang -O2 when available).
std::vector<std::string> fixture_paths();

std::string examples_dir();

/// The mpirun found on PATH, or "" if there is none.
std::string find_mpirun();

}  // namespace parlot::e2e
