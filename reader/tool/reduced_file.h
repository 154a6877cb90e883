// The `reduced` file of a process directory that `parlot-read reduce`
// wrote (docs/FORMAT.md "reduced"): for each kept segment of a thread, the
// events it holds in the reduced stream and the original iterations it
// stands for. Readers that do not know it ignore it; `iterations` uses it
// to show every original iteration.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parlot::tool {

/// A segment kept in the reduced stream.
struct ReducedSegment {
  std::uint64_t first = 0;  ///< index of its first event in the reduced thread's stream
  std::uint64_t end = 0;    ///< index just after its last event
  /// The original iterations it stands for (numbers from 0 in the original
  /// thread, increasing), itself included.
  std::vector<std::uint64_t> members;
};

/// The whole file.
struct ReducedProcess {
  std::string metric;
  double threshold = 0;
  /// Kept segments by thread index, in stream order.
  std::map<std::uint64_t, std::vector<ReducedSegment>> threads;
};

/// The file name in a process directory.
inline constexpr const char* kReducedFileName = "reduced";

/// Reads `<directory>/reduced`; nullopt when there is none. Throws
/// FormatError (file and byte offset) when it is malformed: a bad magic
/// line or number, a segment whose end is before its first event or that
/// overlaps the one before, iteration ranges that are not increasing, or
/// an iteration number of 2^26 or more.
std::optional<ReducedProcess> read_reduced(const std::filesystem::path& directory);

/// Writes `r` as `<directory>/reduced`. Throws std::runtime_error when it
/// cannot be written.
void write_reduced(const std::filesystem::path& directory, const ReducedProcess& r);

}  // namespace parlot::tool
