// Helpers of the reader robustness tests: temporary directories, real traces
// made by running reader_fixture under libparlotrt.so, running programs with
// a timeout, reading a thread file to an outcome, and hand-made thread files.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "parlot/format.h"
#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot::test {

namespace fs = std::filesystem;

/// Paths of the programs under test. PARLOT_TEST_RUNTIME, PARLOT_TEST_FIXTURE
/// and PARLOT_TEST_READ in the environment override the built ones (e.g. to
/// trace with an unsanitized runtime from a sanitized build).
std::string runtime_path();
std::string fixture_path();
/// odd_names_fixture: a function named by invalid UTF-8 with an ESC in it.
std::string odd_names_fixture_path();
std::string read_tool_path();
/// True when this test binary was built with PARLOT_SANITIZE.
bool sanitized_build();

struct RunResult {
  bool exited = false;    ///< ended by exit (WIFEXITED)
  int exit_status = -1;   ///< WEXITSTATUS when exited
  bool signaled = false;  ///< killed by a signal (WIFSIGNALED), timeout kill included
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
  std::string out;
  std::string err;
};

/// Runs `argv` (argv[0] a path) with `env` entries ("NAME=value") added to
/// the environment; captures stdout and stderr; kills it (SIGKILL) after
/// `timeout_s` seconds. `limit_as_bytes`: if non-zero, the program runs
/// under an RLIMIT_AS of that many bytes.
RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      double timeout_s, std::uint64_t limit_as_bytes = 0);

/// The kinds of trace the tests make. The corruption tests work on codec
/// 1's layout (zero-elimination groups), so the compressed kinds use codec
/// 1 (PARLOT_CODEC=1) unless `codec` says 2.
struct TraceKind {
  bool compress = true;
  unsigned buffer_kb = 0;  ///< 0 = the runtime's default (256)
  unsigned codec = 1;      ///< PARLOT_CODEC when compressing
  std::string name() const;
};
inline const TraceKind kLz{true, 0};
inline const TraceKind kRaw{false, 0};
inline const TraceKind kLz4k{true, 4};
inline const TraceKind kRaw4k{false, 4};
inline const TraceKind kLz2{true, 0, 2};
inline const TraceKind kLz2_4k{true, 4, 2};

/// Runs `program` (empty: reader_fixture) under the runtime with
/// PARLOT_DIR=`parent`/<kind> and returns the one process directory it
/// made. Fails the test (fatal assertion in the caller via
/// ASSERT_NO_FATAL_FAILURE) when it cannot.
fs::path make_trace(const fs::path& parent, const TraceKind& kind, const std::string& program = "");

/// The thread files of a process directory, by thread index (file names
/// thread-<index>-<tid>.trace).
std::vector<fs::path> thread_files(const fs::path& process_dir);

std::vector<std::uint8_t> read_bytes(const fs::path& file);
void write_bytes(const fs::path& file, const std::vector<std::uint8_t>& bytes);
/// Copies a directory tree (regular files and directories only).
void copy_tree(const fs::path& from, const fs::path& to);

/// What reading a thread file gave.
struct ReadOutcome {
  enum class Kind { kOk, kFormatError, kOtherException };
  Kind kind = Kind::kOk;
  std::vector<std::uint32_t> events;          ///< events read before the end or the error
  std::optional<ThreadTraceSummary> summary;  ///< when the file opened
  // kFormatError:
  fs::path error_file;
  std::uint64_t error_offset = 0;
  std::string what;
  bool error_from_tracker = false;  ///< thrown by CallStackTracker (offset = event index)
  std::string exception_type;       ///< kOtherException: typeid name
  std::string describe() const;
};

/// Opens `file` with ThreadEventReader, reads every batch and, when `track`,
/// pushes every event through a CallStackTracker(function_count, file).
/// Never throws: every exception is classified.
ReadOutcome read_thread_file(const fs::path& file, bool track = false,
                             std::uint64_t function_count = 0);

/// Runs `fn` and classifies what it throws (for the other parsers).
struct CallOutcome {
  ReadOutcome::Kind kind = ReadOutcome::Kind::kOk;
  fs::path error_file;
  std::uint64_t error_offset = 0;
  std::string what;
  std::string exception_type;
  std::string describe() const;
};
CallOutcome call_classified(const std::function<void()>& fn);

/// Bytes of an encoded event stream (the codec::Encoder / RawEncoder output
/// after finish()), as the runtime would write it for `events`.
std::vector<std::uint8_t> encode_events(const std::vector<std::uint32_t>& events, bool lz);

/// Zero-elimination packing of LZ words (docs/FORMAT.md), padded to whole
/// groups with zero words: lets a test write token streams directly.
std::vector<std::uint8_t> ze_pack(const std::vector<std::uint16_t>& words);

/// A thread trace file built by hand (format.h structs).
struct HandMadeThread {
  format::Codec codec = format::Codec::kLzZe;
  std::uint64_t tid = 4242;
  std::uint64_t pid = 4242;
  std::uint64_t thread_index = 0;
  std::vector<std::vector<std::uint8_t>> blocks;  ///< payloads of the data blocks
  bool trailer = true;
  std::uint64_t events = 0;  ///< trailer event count
  std::uint64_t raw_bytes = 0;
  std::vector<std::uint8_t> bytes() const;
};

/// Splits `payload` into blocks of at most `block_bytes` bytes, cut at
/// zero-elimination group boundaries (lz) or literal boundaries (raw words).
std::vector<std::vector<std::uint8_t>> split_blocks(const std::vector<std::uint8_t>& payload,
                                                    bool lz, std::size_t block_bytes);

/// Offsets of every block header in an intact thread file, trailer last.
std::vector<std::uint64_t> block_offsets(const std::vector<std::uint8_t>& file);

/// Runs `fn` in a forked child with an optional address-space limit
/// (bytes of RLIMIT_AS above the current size; ignored in sanitized builds,
/// whose shadow memory does not fit a limit) and a timeout. The child's exit
/// code is fn's return value.
struct ChildResult {
  bool exited = false;
  int exit_status = -1;
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  double seconds = 0;
};
ChildResult run_in_child(const std::function<int()>& fn, double timeout_s,
                         std::uint64_t extra_address_space = 0);

/// Labels what the test is doing; printed if the process dies of a signal.
void set_crash_context(const std::string& what);
void install_crash_reporter();

}  // namespace parlot::test
