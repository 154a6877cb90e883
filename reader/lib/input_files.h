// The reader's access to a trace's files, real or inside a node file
// (docs/FORMAT.md, "Node files"): a process of the node layout has a
// virtual directory "<dir>/node-<name>.parlot/<process>" whose files are
// put together from the node file's records when it is scanned
// (scan_node_file); every other path is the file system's. The functions
// here answer for both, so the per-process readers read either layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace parlot::detail {

/// What scanning a node file found.
struct NodeScan {
  /// The virtual directories of its published processes, in the order of
  /// their first record.
  std::vector<std::filesystem::path> processes;
  /// Damage as (node file offset, what): a record that fails its checks,
  /// skipped up to the next good one; an incomplete record at the end, a
  /// kill's doing.
  std::vector<std::pair<std::uint64_t, std::string>> damage;
  /// Bytes at the file's end that are no complete record (0: none).
  std::uint64_t incomplete_tail = 0;
};

/// Scans node file `file`: checks every record (magic, version, length,
/// CRC32C), applies each to its logical file in file order (append, write
/// at an offset, replace, reference), and registers the virtual
/// directories of the processes it holds, replacing what an earlier scan
/// of the same file registered. Throws FormatError (file, offset) when
/// the file cannot be opened or read.
NodeScan scan_node_file(const std::filesystem::path& file);

/// True when `name` is a node file's name ("node-*.parlot").
bool is_node_file_name(const std::string& name);

/// True when `path` is a file: a regular file, or a file of a scanned node
/// file's process.
bool input_is_file(const std::filesystem::path& path);

/// True when `path` exists (a file or directory, real or virtual).
bool input_exists(const std::filesystem::path& path);

/// The size of file `path` in bytes; sets `ec` on failure.
std::uint64_t input_file_size(const std::filesystem::path& path, std::error_code& ec);

/// Opens file `path` for reading, real or virtual: a stream that may have
/// failed (test it with operator!). Never null.
std::unique_ptr<std::istream> open_input(const std::filesystem::path& path);

/// A path that std::ifstream can open for file `path`: `path` itself for a
/// real file; for a file inside a node file, "/proc/self/fd/<n>" of a
/// memory file (memfd_create) that holds its bytes, open as long as this
/// object lives (the stream, once open, keeps its own reference).
class OpenablePath {
 public:
  /// Throws FormatError when a node file's bytes cannot be copied.
  explicit OpenablePath(const std::filesystem::path& path);
  ~OpenablePath();
  OpenablePath(const OpenablePath&) = delete;
  OpenablePath& operator=(const OpenablePath&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  int fd_ = -1;
  std::filesystem::path path_;
};

/// The files of virtual process directory `dir` (full virtual paths), or
/// nullopt-like empty `found` = false when `dir` is not one.
std::vector<std::filesystem::path> list_virtual_directory(const std::filesystem::path& dir,
                                                          bool& found);

/// Where byte `offset` of virtual file `path` lies in its node file, as
/// "<node file>: offset N" for error messages; "" for a real file.
std::string node_file_location(const std::filesystem::path& path, std::uint64_t offset);

}  // namespace parlot::detail
