#include <algorithm>
#include <set>
#include <system_error>

#include "input_files.h"
#include "parlot/trace_reader.h"

namespace parlot {

namespace fs = std::filesystem;

ProcessTrace open_process_directory(ProcessListing listed, bool keep_going) {
  ProcessTrace p;
  p.directory = std::move(listed.directory);
  p.metadata = std::move(listed.metadata);
  const fs::path& dir = p.directory;
  // A malformed metadata file: thrown, or with keep_going an error of the
  // process, which is then read as if the file were missing.
  auto read_or_note = [&](auto&& read) {
    if (!keep_going) return read();
    try {
      return read();
    } catch (const FormatError& e) {
      p.errors.push_back(e.what());
      return decltype(read()){};
    }
  };
  if (detail::input_exists(dir / "loadmap")) {
    p.load_map =
        read_or_note([&] { return read_load_map(dir / "loadmap", p.metadata.load_biases); });
  } else {
    p.warnings.push_back((dir / "loadmap").string() +
                         ": offset 0: missing (addresses stay unnamed)");
  }
  if (detail::input_exists(dir / "functions")) {
    p.function_addresses = read_or_note(
        [&] { return read_function_table(dir / "functions", p.metadata.load_biases); });
  } else {
    p.warnings.push_back((dir / "functions").string() +
                         ": offset 0: missing (the process did not finish its trace: "
                         "functions show as IDs)");
  }
  if (detail::input_exists(dir / "crash")) {
    p.crash = read_or_note([&] { return std::optional(read_crash_record(dir / "crash")); });
  }
  if (detail::input_exists(dir / "libcalls")) {
    // Damage here only costs library calls their names: the events still read.
    try {
      p.library_calls = read_library_calls(dir / "libcalls");
    } catch (const FormatError& e) {
      p.errors.push_back(std::string(e.what()) + "; library calls stay unnamed");
    }
  }
  // thread-<index>-<tid>.trace
  auto index_of = [](const fs::path& f) {
    const std::string n = f.filename().string();
    return std::strtoull(n.c_str() + 7, nullptr, 10);
  };
  std::set<std::uint64_t> present;  // thread indices with a file of any kind
  std::error_code ec;
  auto thread_file = [&](const fs::path& f, bool regular) {
    const std::string name = f.filename().string();
    if (!name.starts_with("thread-") || !name.ends_with(".trace")) return;
    present.insert(index_of(f));
    if (regular) {
      p.thread_files.push_back(f);
    } else {
      p.errors.push_back(f.string() +
                         ": offset 0: thread file is not a regular file; its events are lost");
    }
  };
  bool is_virtual = false;
  for (const auto& f : detail::list_virtual_directory(dir, is_virtual)) thread_file(f, true);
  if (!is_virtual) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      std::error_code type_ec;
      thread_file(e.path(), e.is_regular_file(type_ec));
    }
  }
  if (ec) p.errors.push_back(dir.string() + ": offset 0: cannot list directory: " + ec.message());
  std::sort(p.thread_files.begin(), p.thread_files.end(),
            [&](const fs::path& a, const fs::path& b) { return index_of(a) < index_of(b); });
  // The "threads" line counts the thread traces the process started, each
  // of which left a file. Indices are not dense (a thread that made no event
  // has none, docs/FORMAT.md), so only the count tells that files are gone;
  // which ones cannot be told.
  const std::uint64_t files = present.size();
  if (p.metadata.threads > files) {
    const std::uint64_t missing = p.metadata.threads - files;
    p.errors.push_back((dir / "thread-*.trace").string() +
                       ": offset 0: missing: the process file counts " +
                       std::to_string(p.metadata.threads) + " threads, " + std::to_string(files) +
                       (files == 1 ? " has a file; " : " have a file; ") + std::to_string(missing) +
                       (missing == 1 ? " thread's" : " threads'") + " events are lost");
  }
  return p;
}

std::vector<ProcessListing> list_trace_directory(const fs::path& dir,
                                                 std::vector<UnreadableProcess>* unreadable) {
  std::error_code ec;
  const bool node_file =
      detail::is_node_file_name(dir.filename().string()) && fs::is_regular_file(dir, ec);
  // A process of a node file is a directory only to the reader: named on
  // its own ("<dir>/node-<n>.parlot/<process>"), its node file is scanned.
  if (!node_file && !fs::exists(dir, ec) && dir.has_parent_path() &&
      detail::is_node_file_name(dir.parent_path().filename().string()) &&
      fs::is_regular_file(dir.parent_path(), ec) && !detail::input_exists(dir / "process")) {
    (void)detail::scan_node_file(dir.parent_path());
  }
  const bool virtual_process =
      !node_file && detail::input_exists(dir / "process") && !fs::exists(dir, ec);
  if (!node_file && !virtual_process && !fs::is_directory(dir, ec)) {
    throw FormatError(dir, 0, "not a directory");
  }
  std::vector<ProcessListing> processes;
  // One process's "process" file: listed, or (with `unreadable`) noted.
  auto list = [&](const fs::path& process_dir) {
    if (unreadable == nullptr) {
      processes.push_back({process_dir, read_process_metadata(process_dir / "process")});
      return;
    }
    try {
      processes.push_back({process_dir, read_process_metadata(process_dir / "process")});
    } catch (const FormatError& e) {
      unreadable->push_back({process_dir, e.what()});
    }
  };
  if (detail::input_exists(dir / "process")) {
    list(dir);
    return processes;
  }
  // A node file holds the processes of a node (docs/FORMAT.md, "Node
  // files"); its damage is the node's, noted like an unreadable process.
  auto list_node_file = [&](const fs::path& file) {
    detail::NodeScan scan = detail::scan_node_file(file);
    for (const auto& [offset, what] : scan.damage) {
      FormatError e(file, offset, what);
      if (unreadable == nullptr) throw e;
      unreadable->push_back({file, e.what()});
    }
    for (const auto& process_dir : scan.processes) list(process_dir);
  };
  if (node_file) list_node_file(dir);
  for (const auto& e : node_file ? fs::directory_iterator() : fs::directory_iterator(dir, ec)) {
    std::error_code node_ec;
    if (detail::is_node_file_name(e.path().filename().string()) && e.is_regular_file(node_ec)) {
      list_node_file(e.path());
      continue;
    }
    // A name starting with '.' is a process directory still being made
    // (the runtime renames it when its first files are whole), or a
    // temporary file: not a process.
    if (e.path().filename().string().starts_with('.')) continue;
    std::error_code type_ec;
    if (!e.is_directory(type_ec)) continue;
    if (fs::exists(e.path() / "process")) {
      list(e.path());
      continue;
    }
    // A process directory (as the runtime names them) without its process
    // file: its process cannot be placed or read.
    const std::string name = e.path().filename().string();
    if (unreadable != nullptr && (name.starts_with("pid-") || name.starts_with("rank-"))) {
      unreadable->push_back({e.path(), (e.path() / "process").string() + ": offset 0: missing"});
    }
  }
  if (ec) throw FormatError(dir, 0, "cannot list directory: " + ec.message());
  if (processes.empty() && (unreadable == nullptr || unreadable->empty())) {
    throw FormatError(dir, 0, "no Parlot process directory here (nothing was traced?)");
  }
  auto rank_of = [](const ProcessListing& p) {
    return p.metadata.rank.empty() ? -1 : std::strtoll(p.metadata.rank.c_str(), nullptr, 10);
  };
  std::sort(processes.begin(), processes.end(),
            [&](const ProcessListing& a, const ProcessListing& b) {
              if (rank_of(a) != rank_of(b)) return rank_of(a) < rank_of(b);
              if (a.metadata.start_ns != b.metadata.start_ns)
                return a.metadata.start_ns < b.metadata.start_ns;
              return a.metadata.pid < b.metadata.pid;
            });
  return processes;
}

std::vector<ProcessTrace> open_trace_directory(const fs::path& dir) {
  std::vector<ProcessTrace> processes;
  for (auto& listed : list_trace_directory(dir)) {
    processes.push_back(open_process_directory(std::move(listed)));
  }
  return processes;
}

}  // namespace parlot
