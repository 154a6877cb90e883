#include "thread_walk.h"

#include <fmt/core.h>

#include "function_names.h"
#include "visible_text.h"

namespace parlot::tool {

int report_damage(const ThreadTraceSummary& s) {
  if (s.trailer) return 0;
  fmt::print(stderr, "parlot-read: error: {}: offset {}: {}; events up to there were read\n",
             visible_text(s.path.string()), s.damage_offset, s.damage);
  return 1;
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
  for (const auto& w : process.warnings) {
    fmt::print(stderr, "parlot-read: warning: {}\n", visible_text(w));
  }
  for (const auto& e : process.errors) {
    fmt::print(stderr, "parlot-read: error: {}\n", visible_text(e));
  }
  return process.errors.empty() ? 0 : 1;
}

}  // namespace parlot::tool
