// Helpers of the hardening suite: running the test programs (each built by
// gcc and clang at -O0 and -O2) under libparlotrt.so, running parlot-read,
// and comparing call trees in parlot-read's text form.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "parlot/trace_reader.h"
#include "temp_dir.h"

namespace parlot::hardening {

using parlot::test::TempDir;

struct RunResult {
  int exit_status = -1;    ///< exit code, or -1 if killed by a signal
  int signal = 0;          ///< the signal that killed it, or 0
  bool timed_out = false;  ///< killed after the timeout
  std::string out;         ///< stdout
  std::string err;         ///< stderr
};

struct RunOptions {
  std::vector<std::string> env;  ///< "NAME=value", added to (or replacing in) the environment
  int timeout_s = 60;
  std::string cwd;  ///< working directory of the child (empty: the test's)
  /// Called with the child's pid after it ended, before its output is read
  /// (e.g. to wait for a daemon it left behind that writes to the same files).
  std::function<void(pid_t)> after_exit;
};

/// Runs `argv` (argv[0] is a path) with the test's environment minus
/// LD_PRELOAD and PARLOT_*, plus `options.env`; no core files; stdin is
/// /dev/null. The child leads its own process group, killed on timeout.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

/// Runs `argv` with LD_PRELOAD=libparlotrt.so and PARLOT_DIR=`trace_dir`.
RunResult run_traced(const std::vector<std::string>& argv, const std::filesystem::path& trace_dir,
                     RunOptions options = {});

/// Runs parlot-read with `args`; `trace` and `stacks` get --no-sites (the
/// call trees the tests compare leave call sites out).
RunResult parlot_read(const std::vector<std::string>& args);

/// Runs parlot-read with exactly `args` (call sites shown where recorded).
RunResult parlot_read_with_sites(const std::vector<std::string>& args);

/// Path of test program `name` built as `variant` (gcc_O0, gcc_O2, clang_O0, clang_O2).
std::string program(const std::string& name, const std::string& variant);
/// Path of the plugin library built as `variant`.
std::string plugin_library(const std::string& variant);
/// The variants built (clang ones only when clang was found).
std::vector<std::string> variants();

/// One thread block of `parlot-read trace` text output.
struct ThreadText {
  std::size_t process = 0;  ///< index of its process in the output (0 = first)
  std::string executable;   ///< from the "# process" line
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t index = 0;  ///< thread index in its process
  std::string body;         ///< the call tree, without the "#" lines
};
std::vector<ThreadText> split_threads(const std::string& trace_text);

/// One event of a call tree; `name` as parlot-read displays it ("f()",
/// "ns::g(int)").
struct Event {
  bool enter;
  std::string name;
  bool operator==(const Event&) const = default;
};
using Events = std::vector<Event>;
/// Prints "enter f()" / "exit f()" in gtest messages.
void PrintTo(const Event& e, std::ostream* os);

/// Expected call tree from a compact spec: names separated by spaces, a
/// name followed by `{ ... }` has callees. A name without '(' is displayed
/// with "()" appended, like parlot-read does. E.g. "main{f{g h} g}".
Events tree(std::string_view spec);
/// The same, rendered as parlot-read's text.
std::string tree_text(std::string_view spec);
/// Renders events as parlot-read's text (uftrace replay style).
std::string render(const Events& events);
/// Parses one thread body of parlot-read's text back into events.
Events parse_text(const std::string& body);
/// Removes the frames whose name satisfies `drop`, keeping their callees
/// (one level up).
Events strip_frames(const Events& events, const std::function<bool(const std::string&)>& drop);
/// Removes whole subtrees rooted at frames named `name`; returns how many.
std::size_t remove_subtrees(Events& events, const std::string& name);

/// Every thread's events of `process` (by thread index), with names from the
/// symbolizer. Events of a file cut short are those up to its last block.
std::vector<Events> named_events(const ProcessTrace& process);

/// Checks `body` (parlot-read text of a trace that may have been cut short)
/// against the `expected` text of the complete trace: every line but the
/// last must equal the expected line; the last may also be the "f() {" form
/// of an expected "f();" (an entry whose exit was not read).
::testing::AssertionResult is_prefix_of_tree(const std::string& body, const std::string& expected);

std::string slurp(const std::filesystem::path& p);

/// One thread's events in the notation of the independent recorder
/// (test/e2e/oracle_hooks.c): "E <object file name>+<hex offset>", "X".
using OracleLines = std::vector<std::string>;

/// Runs `argv` untraced under the oracle recorder (with `options`) and
/// returns every thread's events, sorted (thread order is not defined).
std::vector<OracleLines> oracle_threads(const std::vector<std::string>& argv,
                                        RunOptions options = {});

/// Every thread's events of every process in trace directory `dir`, in the
/// oracle's notation, sorted.
std::vector<OracleLines> parlot_threads_as_oracle(const std::filesystem::path& dir);

}  // namespace parlot::hardening
