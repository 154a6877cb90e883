#include "run.h"

#include <fmt/format.h>

#include <charconv>
#include <map>

#include "tool/visible_text.h"

namespace parlot::python {

Run::Run(const std::filesystem::path& dir) {
  std::vector<ProcessListing> listing = list_trace_directory(dir);
  for (const auto& p : listing) ranked_ = ranked_ || !p.metadata.rank.empty();
  // Sized once: FunctionNames keeps a reference to its ProcessTrace.
  processes_.resize(listing.size());
  std::map<std::uint64_t, std::uint64_t> seen_of_rank;
  for (std::size_t i = 0; i < listing.size(); ++i) {
    RunProcess& p = processes_[i];
    // As parlot-read's views number them (TraceInput::rank_of, fork_of).
    p.rank = i;
    if (ranked_) {
      const std::string& r = listing[i].metadata.rank;
      if (std::from_chars(r.data(), r.data() + r.size(), p.rank).ec != std::errc()) p.rank = i;
    }
    p.fork = seen_of_rank[p.rank]++;
    p.trace = open_process_directory(std::move(listing[i]), true);
    for (const auto& w : p.trace.warnings) messages_.push_back(w);
    for (const auto& e : p.trace.errors) messages_.push_back(e);
    p.names = std::make_unique<tool::FunctionNames>(p.trace);
    p.keys.assign(p.trace.function_addresses.size() + 1, 0);
    for (std::uint32_t id = 1; id < p.keys.size(); ++id) {
      const std::string& name = p.names->lookup(id).function;
      p.keys[id] = analysis::function_key(name);
      names_.add(p.keys[id], tool::visible_text(name));
    }
    for (const auto& file : p.trace.thread_files) {
      try {
        ThreadEventReader reader(file);
        const auto& s = reader.summary();
        RunThread t;
        t.process = i;
        t.file = file;
        t.id = {p.rank, s.thread_index, p.fork};
        t.pid = s.pid;
        t.tid = s.tid;
        t.events = s.trailer ? s.trailer->events : s.final_events.value_or(0);
        t.program_events = ~std::uint64_t{0};
        if (s.trailer && s.trailer->closed_at_end <= s.trailer->events) {
          t.program_events = s.trailer->events - s.trailer->closed_at_end;
        }
        threads_.push_back(std::move(t));
      } catch (const FormatError& e) {
        // Its header or block structure is damaged: none of it can be read.
        messages_.push_back(e.what());
      }
    }
  }
}

std::string Run::label(const analysis::ThreadId& id) const {
  return fmt::format("{} {}{} thread {}", ranked_ ? "rank" : "process", id.rank,
                     id.fork == 0 ? "" : fmt::format(" fork {}", id.fork), id.thread);
}

}  // namespace parlot::python
