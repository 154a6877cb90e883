#include "trace_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "function_names.h"
#include "parallel.h"
#include "progress.h"
#include "visible_text.h"

namespace parlot::tool {

void add_filter_options(CLI::App* cmd, analysis::FunctionFilter& filter) {
  // One pattern per --include/--exclude (repeat the option for more), so
  // `--exclude f DIR` does not take DIR for a second pattern.
  cmd->add_option("--include", filter.include,
                  "Keep only functions whose name matches one of these regexes (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", filter.exclude,
                  "Drop functions whose name matches a regex (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--module", filter.module,
                  "Keep only functions of DSOs whose path matches this regex");
  cmd->add_option("--max-depth", filter.max_depth,
                  "Keep only calls at (filtered) depth below N (0: all)");
}

void add_sites_option(CLI::App* cmd, bool& sites) {
  cmd->add_flag("--no-sites{false}", sites,
                "Hide call sites (the file:line each frame was called from; shown when recorded)");
}

void add_view_options(CLI::App* cmd, ViewOptions& o) {
  cmd->add_option("--pid", o.selection.pid, "Only this process");
  cmd->add_option("--tid", o.selection.tid, "Only this thread");
  cmd->add_option("--rank", o.selection.rank, "Only the processes of this MPI rank");
  add_filter_options(cmd, o.filter);
  cmd->add_flag("--mpi", o.filter.mpi,
                "Keep only MPI calls (MPI_*, mpi_*) and the calls on their call paths");
  cmd->add_option("--jobs,-j", o.jobs, "Decoding threads (0: one per hardware thread)");
  add_sites_option(cmd, o.sites);
}

analysis::FunctionKey ProcessFunctions::unknown_key(std::uint32_t id) {
  return analysis::function_key(fmt::format("#{}", id));
}

std::vector<bool> keep_vector(const ProcessTrace& process, FunctionNames& names,
                              const analysis::FunctionMatcher& matcher,
                              const Selection* mpi_paths_of) {
  std::vector<bool> keep(process.function_addresses.size() + 1, true);
  for (std::uint32_t id = 1; id < keep.size(); ++id) {
    const SourceLocation& loc = names.lookup(id);
    keep[id] = matcher.keeps(loc.function, loc.dso);
  }
  if (mpi_paths_of != nullptr) {
    const std::vector<bool> on_path = mpi_call_paths(process, names, *mpi_paths_of);
    for (std::uint32_t id = 1; id < keep.size(); ++id) keep[id] = keep[id] && on_path[id];
  }
  return keep;
}

bool is_mpi_function(const std::string& name) {
  std::size_t at = 0;
  if (!name.empty() && (name[0] == 'P' || name[0] == 'p')) at = 1;
  if (name.size() < at + 4) return false;
  for (std::size_t i = 0; i < 3; ++i) {
    if (std::tolower(static_cast<unsigned char>(name[at + i])) != "mpi"[i]) return false;
  }
  return name[at + 3] == '_';
}

std::vector<bool> mpi_call_paths(const ProcessTrace& process, FunctionNames& names,
                                 const Selection& selection) {
  const std::size_t n = process.function_addresses.size() + 1;
  std::vector<bool> mpi(n, false), on_path(n, false);
  for (std::uint32_t id = 1; id < n; ++id) mpi[id] = is_mpi_function(names.lookup(id).function);
  struct Frame {
    std::uint32_t id;
    bool marked;  // on_path holds it and every frame below it
  };
  std::vector<Frame> stack;
  for (const auto& file : process.thread_files) {
    stack.clear();
    try {
      ThreadEventReader reader(file);
      if (!selection.selects(reader.summary())) continue;
      for (auto batch = reader.next_batch(); !batch.empty(); batch = reader.next_batch()) {
        for (const std::uint32_t id : batch) {
          if (id == 0) {
            if (!stack.empty()) stack.pop_back();
            continue;
          }
          stack.push_back({id, false});
          if (id >= n || !mpi[id]) continue;
          for (auto f = stack.rbegin(); f != stack.rend() && !f->marked; ++f) {
            f->marked = true;
            if (f->id < n) on_path[f->id] = true;
          }
        }
      }
    } catch (const FormatError&) {
      // Counted up to the damage, which the view itself reports.
    }
  }
  return on_path;
}

ThreadStream::ThreadStream(const std::filesystem::path& file, std::uint64_t function_count,
                           const ProcessFunctions& functions, std::uint32_t max_depth,
                           bool filtering, bool sites)
    : reader_(file),
      tracker_(function_count, file),
      filter_(functions.keep, max_depth),
      functions_(functions),
      filtering_(filtering) {
  const auto& trailer = reader_.summary().trailer;
  if (trailer && trailer->closed_at_end <= trailer->events) {
    program_events_ = trailer->events - trailer->closed_at_end;
  }
  for (const Mark& m : reader_.summary().marks) {
    shown_marks_.push_back({m.event_index, quoted_visible_text(m.label)});
  }
  if (sites && !reader_.summary().call_sites.empty()) sites_.emplace(reader_.summary().call_sites);
}

std::span<const CallEvent> ThreadStream::next_calls() {
  if (calls_.empty()) calls_.resize(kCallBatch);
  CallEvent* const out = calls_.data();
  std::size_t n = 0;
  while (n == 0) {
    const std::span<const std::uint32_t> in = raw_ahead(kCallBatch);  // at most what fits
    if (in.empty()) break;
    tracker_.push_all(in.data(), in.size(), out);
    if (!filtering_) {
      n = in.size();
    } else {
      // In place: out[n] is at or before out[i].
      for (std::size_t i = 0; i < in.size(); ++i) n += filter_.push(out[i], out[n]);
    }
    consume_raw(in.size());
  }
  return {out, n};
}

TraceInput::TraceInput(const ViewOptions& o, const Owns& owns) : options_(o) {
  // The listing reads only the process files; each process this input owns
  // is opened (load map, function table, threads) by load().
  for (auto& listed : list_run(o.dir)) {
    ProcessTrace process;
    process.directory = std::move(listed.directory);
    process.metadata = std::move(listed.metadata);
    if (!o.selection.selects(process)) continue;
    processes_.push_back(std::move(process));
  }
  for (const auto& p : processes_) ranked_ = ranked_ || !p.metadata.rank.empty();
  // The listing is sorted by rank, then start time: a rank's own process
  // comes before the children it forked.
  std::map<std::uint64_t, std::uint64_t> seen_of_rank;
  for (std::size_t i = 0; i < processes_.size(); ++i)
    fork_of_.push_back(seen_of_rank[rank_of(i)]++);
  // Per process, in parallel: open it, name and key every function, apply
  // the filter, list the selected threads. Symbolizers are per process.
  functions_.resize(processes_.size());
  loaded_.assign(processes_.size(), false);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < processes_.size(); ++i) {
    if (!owns || owns(i, rank_of(i))) mine.push_back(i);
  }
  std::vector<analysis::NameTable> names(mine.size());
  std::vector<std::vector<Thread>> threads(mine.size());
  parallel_for(mine.size(), o.jobs, [&](std::size_t k) { load(mine[k], names[k], threads[k]); });
  for (std::size_t k = 0; k < mine.size(); ++k) {
    loaded_[mine[k]] = true;
    status_ |= report_warnings(processes_[mine[k]]);
    names_.merge(names[k]);
    threads_.insert(threads_.end(), threads[k].begin(), threads[k].end());
  }
}

std::uint64_t TraceInput::rank_of(std::size_t process) const {
  std::uint64_t rank = process;
  if (ranked_) {
    const std::string& r = processes_[process].metadata.rank;
    if (std::from_chars(r.data(), r.data() + r.size(), rank).ec != std::errc()) rank = process;
  }
  return rank;
}

namespace {

/// FNV-1a over a process's load map and function table: what naming its
/// functions depends on.
std::uint64_t tables_fingerprint(const ProcessTrace& p) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  auto mix_text = [&](const std::string& s) {
    mix(s.size());
    for (const char c : s) mix(static_cast<unsigned char>(c));
  };
  for (const auto& o : p.load_map) {
    mix(o.start);
    mix(o.end);
    mix(o.load_bias);
    mix_text(o.build_id);
    mix_text(o.path);
  }
  mix(p.function_addresses.size());
  for (const auto a : p.function_addresses) mix(a);
  return h;
}

bool same_tables(const ProcessTrace& a, const ProcessTrace& b) {
  auto same = [](const LoadedObject& x, const LoadedObject& y) {
    return x.start == y.start && x.end == y.end && x.load_bias == y.load_bias &&
           x.build_id == y.build_id && x.path == y.path;
  };
  return a.function_addresses == b.function_addresses &&
         std::equal(a.load_map.begin(), a.load_map.end(), b.load_map.begin(), b.load_map.end(),
                    same);
}

}  // namespace

void TraceInput::load(std::size_t i, analysis::NameTable& names, std::vector<Thread>& threads) {
  processes_[i] = open_process_directory({processes_[i].directory, processes_[i].metadata}, true);
  const ProcessTrace& p = processes_[i];
  ProcessFunctions& f = functions_[i];
  const std::uint64_t fingerprint = tables_fingerprint(p);
  bool named = false;
  {
    const std::lock_guard<std::mutex> guard(named_lock_);
    // Under --mpi the keep-vector follows this process's own call paths.
    for (const std::size_t earlier : named_by_tables_[fingerprint]) {
      if (!options_.filter.mpi && same_tables(processes_[earlier], p)) {
        f = functions_[earlier];  // complete: listed only once named
        named = true;
        break;
      }
    }
  }
  if (!named) {
    // Names of the functions go into `names`; an identical process later
    // relies on them being merged (TraceInput merges every load's names).
    const analysis::FunctionMatcher matcher(options_.filter);
    FunctionNames process_names(p);
    f.keep =
        keep_vector(p, process_names, matcher, options_.filter.mpi ? &options_.selection : nullptr);
    f.key.assign(p.function_addresses.size() + 1, 0);
    for (std::uint32_t id = 1; id < f.key.size(); ++id) {
      const std::string& name = process_names.lookup(id).function;
      f.key[id] = analysis::function_key(name);
      names.add(f.key[id], visible_text(name));
    }
    const std::lock_guard<std::mutex> guard(named_lock_);
    named_by_tables_[fingerprint].push_back(i);
  }
  const std::uint64_t rank = rank_of(i);
  for (const auto& file : p.thread_files) {
    try {
      ThreadEventReader reader(file);
      const auto& s = reader.summary();
      if (!options_.selection.selects(s)) continue;
      add_promised_events(s.trailer ? s.trailer->events : s.final_events.value_or(0));
      threads.push_back({{rank, reader.summary().thread_index, fork_of(i)}, i, file});
    } catch (const FormatError& e) {
      // Its header or block structure is damaged: none of it can be read.
      report_error(e);
      const std::lock_guard<std::mutex> guard(lock_);
      status_ = 1;
    }
  }
}

const TraceInput::Thread* TraceInput::find(analysis::ThreadId id) const {
  for (const auto& t : threads_) {
    if (t.id == id) return &t;
  }
  for (const auto& t : borrowed_) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const TraceInput::Thread* TraceInput::find_or_load(analysis::ThreadId id) {
  if (const Thread* t = find(id)) return t;
  for (std::size_t i = 0; i < processes_.size(); ++i) {
    if (loaded_[i] || rank_of(i) != id.rank) continue;
    std::vector<Thread> threads;
    analysis::NameTable names;
    load(i, names, threads);
    loaded_[i] = true;
    names_.merge(names);
    borrowed_.insert(borrowed_.end(), threads.begin(), threads.end());
  }
  return find(id);
}

std::unique_ptr<ThreadStream> TraceInput::open(const Thread& t, bool sites) const {
  const ProcessTrace& p = processes_[t.process];
  return std::make_unique<ThreadStream>(t.file, p.function_addresses.size(), functions_[t.process],
                                        options_.filter.max_depth,
                                        !options_.filter.keeps_everything(), sites);
}

std::string TraceInput::label(analysis::ThreadId id) const {
  return fmt::format("{} {}{} thread {}", ranked_ ? "rank" : "process", id.rank,
                     id.fork == 0 ? "" : fmt::format(" fork {}", id.fork), id.thread);
}

}  // namespace parlot::tool
