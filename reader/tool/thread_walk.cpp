#include "thread_walk.h"

#include <fmt/core.h>

#include "damage_log.h"
#include "function_names.h"
#include "visible_text.h"

namespace parlot::tool {

std::optional<std::uint64_t> parsed_rank(const ProcessMetadata& m) {
  if (m.rank.empty() || m.rank.size() > 18) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : m.rank) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

int report_damage(const ThreadTraceSummary& s) {
  return DamageLog::get().thread_read(s);
}

void report_error(const FormatError& e) {
  DamageLog::get().damaged(e.what());
}

std::vector<ProcessListing> list_run(const std::string& dir) {
  std::vector<UnreadableProcess> unreadable;
  auto listing = list_trace_directory(dir, &unreadable);
  DamageLog& log = DamageLog::get();
  for (const auto& u : unreadable) log.unreadable_process(u);
  for (const auto& p : listing) log.listed(p.directory, p.metadata);
  return listing;
}

ProcessTrace open_process(ProcessListing listed) {
  ProcessTrace p = open_process_directory(std::move(listed), true);
  report_warnings(p);
  return p;
}

std::vector<ProcessTrace> open_run(const std::string& dir, const Selection& selection) {
  std::vector<ProcessTrace> processes;
  for (auto& listed : list_run(dir)) {
    ProcessTrace p;
    p.metadata = listed.metadata;
    if (selection.selects(p)) processes.push_back(open_process(std::move(listed)));
  }
  return processes;
}

std::string describe_crash(const CrashRecord& crash, FunctionNames& names,
                           const std::string& prefix) {
  std::string out =
      fmt::format("{}crashed: {} (signal {}, code {}) at address {:#x} in thread {}{}\n", prefix,
                  visible_text(crash.name), crash.signal, crash.code, crash.address, crash.tid,
                  crash.in_tracer ? ", inside the tracer" : "");
  for (std::size_t i = 0; i < crash.frames.size(); ++i) {
    // Outer frames hold return addresses: look up the call instruction.
    const std::uint64_t pc = crash.frames[i];
    const SourceLocation& loc = names.resolve_address(i == 0 ? pc : pc - 1);
    out += fmt::format("{}  #{:<2} {:#x} {}", prefix, i, pc, visible_text(loc.function));
    if (!loc.file.empty()) out += fmt::format(" ({}:{})", visible_text(loc.file), loc.line);
    out += "\n";
  }
  return out;
}

int report_warnings(const ProcessTrace& process) {
  DamageLog::get().opened(process);
  return process.errors.empty() ? 0 : 1;
}

}  // namespace parlot::tool
