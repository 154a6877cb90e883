#include "thread_walk.h"

#include <fmt/core.h>

#include "function_names.h"

namespace parlot::tool {

int report_damage(const ThreadTraceSummary& s) {
  if (s.trailer) return 0;
  fmt::print(stderr, "parlot-read: error: {}: offset {}: {}; events up to there were read\n",
             s.path.string(), s.damage_offset, s.damage);
  return 1;
}

std::string describe_crash(const CrashRecord& crash, FunctionNames& names,
                           const std::string& prefix) {
  std::string out =
      fmt::format("{}crashed: {} (signal {}, code {}) at address {:#x} in thread {}{}\n", prefix,
                  crash.name, crash.signal, crash.code, crash.address, crash.tid,
                  crash.in_tracer ? ", inside the tracer" : "");
  for (std::size_t i = 0; i < crash.frames.size(); ++i) {
    // Outer frames hold return addresses: look up the call instruction.
    const std::uint64_t pc = crash.frames[i];
    const SourceLocation& loc = names.resolve_address(i == 0 ? pc : pc - 1);
    out += fmt::format("{}  #{:<2} {:#x} {}", prefix, i, pc, loc.function);
    if (!loc.file.empty()) out += fmt::format(" ({}:{})", loc.file, loc.line);
    out += "\n";
  }
  return out;
}

void report_warnings(const ProcessTrace& process) {
  for (const auto& w : process.warnings) fmt::print(stderr, "parlot-read: warning: {}\n", w);
}

}  // namespace parlot::tool
