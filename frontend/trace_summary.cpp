#include "trace_summary.h"

#include <fmt/core.h>

#include <map>
#include <system_error>

#include "parlot/trace_reader.h"

namespace parlot::frontend {

double TraceSummary::ratio() const {
  return trace_bytes == 0 ? 0.0 : static_cast<double>(raw_bytes) / static_cast<double>(trace_bytes);
}

std::set<std::string> process_dir_names(const std::filesystem::path& trace_dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(trace_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      names.insert(name);
    } else if (name.starts_with("node-") && name.ends_with(".parlot")) {
      // The node layout: the processes of a node file, "node-<n>.parlot/<process>".
      try {
        std::vector<UnreadableProcess> unreadable;
        for (const auto& p : list_trace_directory(it->path(), &unreadable)) {
          names.insert(name + "/" + p.directory.filename().string());
        }
      } catch (const std::exception&) {
        // Being written by another job: not this recording's.
      }
    }
  }
  return names;
}

TraceSummary summarize_recording(const std::filesystem::path& trace_dir,
                                 const std::set<std::string>& before, std::uint64_t root_pid) {
  // New directories, with their process metadata.
  std::map<std::filesystem::path, ProcessMetadata> fresh;
  for (const auto& name : process_dir_names(trace_dir)) {
    if (before.count(name) != 0) continue;
    const auto dir = trace_dir / name;
    try {
      fresh.emplace(dir, read_process_metadata(dir / "process"));
    } catch (const std::exception&) {
      // Not a process directory, or one being written by someone else.
    }
  }
  // The recorded process's tree: grow the pid set until nothing is added.
  std::set<std::uint64_t> pids{root_pid};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [dir, m] : fresh) {
      if (pids.count(m.pid) == 0 && pids.count(m.ppid) != 0) grew = pids.insert(m.pid).second;
    }
  }
  TraceSummary s;
  for (const auto& [dir, m] : fresh) {
    if (pids.count(m.pid) == 0) continue;
    s.process_dirs.push_back(dir);
    try {
      for (const auto& process : open_trace_directory(dir)) {
        for (const auto& file : process.thread_files) {
          ThreadEventReader reader(file);
          const auto& t = reader.summary();
          ++s.threads;
          s.trace_bytes += t.file_bytes;
          if (t.trailer) {
            s.events += t.trailer->events;
            s.raw_bytes += t.trailer->raw_bytes;
          } else {
            ++s.incomplete_threads;
          }
        }
      }
    } catch (const std::exception&) {
      // Damaged: `parlot info` says what and where.
    }
  }
  return s;
}

std::string describe(const TraceSummary& s) {
  auto count = [](std::uint64_t n, const char* one, const char* many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
  };
  std::string line = fmt::format("{}, {}, {} events, {} raw bytes, {} trace bytes, ratio {:.1f}",
                                 count(s.process_dirs.size(), "process", "processes"),
                                 count(s.threads, "thread", "threads"), s.events, s.raw_bytes,
                                 s.trace_bytes, s.ratio());
  if (s.incomplete_threads != 0) {
    line += fmt::format(" ({} thread files incomplete)", s.incomplete_threads);
  }
  return line;
}

}  // namespace parlot::frontend
