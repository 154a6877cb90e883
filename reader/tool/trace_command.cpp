// parlot-read trace: each thread's linear call trace, indented by depth like
// `uftrace replay` (text), or one JSON object per event (jsonl). Under
// mpirun the ranks split the processes and rank 0 prints them in order.
#include <cstdio>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/indent.h"
#include "call_site_text.h"
#include "commands.h"
#include "export_trace.h"
#include "function_names.h"
#include "id_cache.h"
#include "mpi_arguments_text.h"
#include "ordered_output.h"
#include "progress.h"
#include "reader_team.h"
#include "thread_walk.h"
#include "trace_input.h"
#include "visible_text.h"

namespace parlot::tool {
namespace {

struct TraceOptions {
  ViewOptions view;
  std::string format = "text";
};

// One item's text in pieces of about 64 KiB into the item's ItemWriter
// (stdout on the leader). flush() explicitly: a destructor must not wait
// for the leader.
class Output {
 public:
  explicit Output(ItemWriter& sink) : sink_(sink) {}
  fmt::memory_buffer& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() > (1 << 16)) flush();
  }
  void flush() {
    sink_.write(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }

 private:
  ItemWriter& sink_;
  fmt::memory_buffer buf_;
};

// Text: "name() {" ... "} /* name */", and "name();" for a call with no
// callee; a mark is a line `@ mark "label"` at the depth where it was made.
// With `sites`, an entry whose call site is known reads "name() at a.c:12
// {" (the line its caller called it from).
void print_text_thread(ThreadEventReader& reader, std::uint64_t function_count,
                       FunctionNames& names, Output& out, analysis::FilterStage* filter,
                       bool sites) {
  const auto& s = reader.summary();
  fmt::format_to(std::back_inserter(out.buf()), "# thread {} (pid {}, thread #{})\n", s.tid, s.pid,
                 s.thread_index);
  if (s.flight_window) {
    fmt::format_to(std::back_inserter(out.buf()),
                   "# flight window: history before the window dropped ({} events); it starts "
                   "inside {} open frames\n",
                   s.flight_window->dropped_events, s.flight_window->open_frames.size());
  }
  bool has_pending = false;  // an entry not yet known to be a leaf
  CallEvent pending{};
  const MpiCallArguments* pending_mpi = nullptr;  // the pending entry's MPI arguments
  std::uint64_t pending_site = 0;                 // the pending entry's call site
  std::optional<CallSites> site_of;
  if (sites && !s.call_sites.empty()) site_of.emplace(s.call_sites);
  std::unordered_map<std::uint64_t, std::string> site_texts;  // by site
  // "name()", or "MPI_Send(dest=1, tag=7, ...)" for an entry with MPI
  // arguments, then its call site when known.
  auto call_text = [&](std::uint32_t id, const MpiCallArguments* mpi) {
    std::string text =
        mpi == nullptr ? names.display_name(id) : mpi_call_text(names.display_name(id), *mpi);
    if (pending_site == 0) return text;
    auto [it, added] = site_texts.try_emplace(pending_site);
    if (added) it->second = call_site_text(names.symbolizer(), pending_site);
    return frame_with_site(text, it->second);
  };
  // As `stacks` indents (analysis/indent.h): linear text however deep.
  auto indent = [&](std::uint32_t depth) { analysis::append_indent(out.buf(), depth); };
  walk_thread_indexed(
      reader, function_count,
      [&](const CallEvent& e, std::uint64_t index) {
        auto& b = out.buf();
        if (e.kind == CallEvent::Kind::kExit && has_pending) {
          indent(e.depth);
          fmt::format_to(std::back_inserter(b), "{};\n", call_text(e.function_id, pending_mpi));
          has_pending = false;
          out.maybe_flush();
          return;
        }
        if (has_pending) {
          indent(pending.depth);
          fmt::format_to(std::back_inserter(b), "{} {{\n",
                         call_text(pending.function_id, pending_mpi));
          has_pending = false;
        }
        if (e.kind == CallEvent::Kind::kEnter) {
          pending = e;
          pending_mpi = s.mpi_calls.empty() && s.mpi_calls_begun.empty()
                            ? nullptr
                            : s.mpi_call_or_begun_at(index);
          pending_site = site_of ? site_of->last() : 0;
          has_pending = true;
        } else {
          indent(e.depth);
          fmt::format_to(std::back_inserter(b), "}} /* {} */\n", names.display_name(e.function_id));
        }
        out.maybe_flush();
      },
      filter,
      [&](const Mark& m, std::uint32_t depth) {
        auto& b = out.buf();
        if (has_pending) {  // a call with a mark inside is not a leaf
          indent(pending.depth);
          fmt::format_to(std::back_inserter(b), "{} {{\n", call_text(pending.function_id, nullptr));
          has_pending = false;
        }
        indent(depth);
        fmt::format_to(std::back_inserter(b), "@ mark {}\n", quoted_visible_text(m.label));
        out.maybe_flush();
      },
      site_of ? &*site_of : nullptr);
  if (has_pending) {
    indent(pending.depth);
    fmt::format_to(std::back_inserter(out.buf()), "{} {{\n",
                   call_text(pending.function_id, pending_mpi));
  }
}

// With `sites`, an entry whose call site is known also has "call_file" and
// "call_line" (the line its caller called it from).
void print_jsonl_thread(ThreadEventReader& reader, std::uint64_t function_count,
                        FunctionNames& names, Output& out, analysis::FilterStage* filter,
                        bool sites) {
  const auto& s = reader.summary();
  std::optional<CallSites> site_of;
  if (sites && !s.call_sites.empty()) site_of.emplace(s.call_sites);
  // Per function, the JSON fields after "kind" are fixed: build them once.
  IdCache<std::string> tail(function_count);
  auto tail_of = [&](std::uint32_t id) -> const std::string& {
    if (const std::string* cached = tail.find(id)) return *cached;
    const SourceLocation& loc = names.lookup(id);
    return tail.put(id, fmt::format(",\"function\":{},\"file\":{},\"line\":{}}}\n",
                                    json_string(loc.function), json_string(loc.file), loc.line));
  };
  const std::string head = fmt::format("{{\"pid\":{},\"tid\":{},\"depth\":", s.pid, s.tid);
  walk_thread_indexed(
      reader, function_count,
      [&](const CallEvent& e, std::uint64_t index) {
        auto& b = out.buf();
        b.append(head);
        fmt::format_to(std::back_inserter(b), "{},\"kind\":\"{}\"", e.depth,
                       e.kind == CallEvent::Kind::kEnter ? "enter" : "exit");
        if (e.kind == CallEvent::Kind::kEnter &&
            !(s.mpi_calls.empty() && s.mpi_calls_begun.empty())) {
          if (const MpiCallArguments* mpi = s.mpi_call_or_begun_at(index)) {
            b.append(std::string_view(",\"mpi\":"));
            b.append(mpi_arguments_json(*mpi));
          }
        }
        if (e.kind == CallEvent::Kind::kEnter && site_of && site_of->last() != 0) {
          if (const SourceLine* line = call_site_line(names.symbolizer(), site_of->last())) {
            fmt::format_to(std::back_inserter(b), ",\"call_file\":{},\"call_line\":{}",
                           json_string(line->file), line->line);
          }
        }
        b.append(tail_of(e.function_id));
        out.maybe_flush();
      },
      filter,
      [&](const Mark& m, std::uint32_t depth) {
        auto& b = out.buf();
        b.append(head);
        fmt::format_to(std::back_inserter(b), "{},\"kind\":\"mark\",\"index\":{},\"label\":{}}}\n",
                       depth, m.event_index, json_string(m.label));
        out.maybe_flush();
      },
      site_of ? &*site_of : nullptr);
}

// One process's text (its header, then each selected thread's trace and
// damage); returns its damage status.
int print_process(const ProcessTrace& process, const TraceOptions& o,
                  const analysis::FunctionMatcher& matcher, ItemWriter& sink) {
  Output out(sink);
  try {
    int status = report_warnings(process);
    FunctionNames names(process);
    std::optional<analysis::FilterStage> filter_template;
    if (!o.view.filter.keeps_everything()) {
      filter_template.emplace(
          keep_vector(process, names, matcher, o.view.filter.mpi ? &o.view.selection : nullptr),
          o.view.filter.max_depth);
    }
    if (o.format == "text") {
      const auto& m = process.metadata;
      fmt::format_to(std::back_inserter(out.buf()), "# process {}{} {}\n", m.pid,
                     m.rank.empty() ? "" : " rank " + visible_text(m.rank),
                     visible_text(m.executable));
    }
    for (const auto& file : process.thread_files) {
      // A damaged thread prints up to its damage; the others go on.
      try {
        ThreadEventReader reader(file);
        if (!o.view.selection.selects(reader.summary())) continue;
        std::optional<analysis::FilterStage> filter = filter_template;
        analysis::FilterStage* f = filter ? &*filter : nullptr;
        if (o.format == "text") {
          print_text_thread(reader, process.function_addresses.size(), names, out, f, o.view.sites);
          if (process.crash && process.crash->tid == reader.summary().tid) {
            out.buf().append(describe_crash(*process.crash, names, "# "));
          }
        } else {
          print_jsonl_thread(reader, process.function_addresses.size(), names, out, f,
                             o.view.sites);
        }
        status |= report_damage(reader.summary());
      } catch (const FormatError& e) {
        report_error(e);
        status = 1;
      }
      out.flush();
    }
    out.flush();
    return status;
  } catch (const ItemWriter::Stopped&) {
    throw;
  } catch (...) {
    out.flush();  // the text before the damage, as the serial run prints it
    throw;
  }
}

// Under mpirun each rank opens the processes it owns (round robin over the
// selected processes) and formats their text; the leader prints every
// process's text in order (print_in_order).
int run_trace(const TraceOptions& o) {
  ReaderTeam& team = ReaderTeam::get();
  std::optional<analysis::FunctionMatcher> matcher;
  std::vector<unsigned> owner;
  std::vector<ProcessTrace> processes;
  if (!all_succeed(team, [&] {
        matcher.emplace(o.view.filter);
        std::vector<ProcessListing> listing;
        for (auto& listed : list_run(o.view.dir)) {
          ProcessTrace p;
          p.metadata = listed.metadata;
          if (o.view.selection.selects(p)) listing.push_back(std::move(listed));
        }
        // Only this member's processes are opened; the others stay empty
        // (no thread files, so promised_events passes over them).
        owner.resize(listing.size());
        processes.resize(listing.size());
        for (std::size_t i = 0; i < listing.size(); ++i) {
          owner[i] = i % team.size();
          if (team.owns(i)) {
            processes[i] = open_process_directory(std::move(listing[i]), true);
          }
        }
        add_promised_events(
            promised_events(processes, Selection{{}, o.view.selection.tid, {}}, {}));
      })) {
    return 0;
  }
  print_in_order(team, owner, [&](std::size_t i, ItemWriter& out) {
    return print_process(processes[i], o, *matcher, out);
  });
  return 0;
}

}  // namespace

void add_trace_command(CLI::App& app, int& exit_status) {
  auto options = std::make_shared<TraceOptions>();
  CLI::App* cmd = app.add_subcommand("trace", "Print each thread's named, nested call trace");
  cmd->add_option("dir", options->view.dir, "Trace directory (PARLOT_DIR of the run)")->required();
  add_view_options(cmd, options->view);
  cmd->add_option("--format", options->format, "text (indented, like uftrace replay) or jsonl")
      ->check(CLI::IsMember({"text", "jsonl"}));
  cmd->callback([options, &exit_status] { exit_status = run_trace(*options); });
}

}  // namespace parlot::tool
