#include "thread_walk.h"

#include <fmt/core.h>

namespace parlot::tool {

int report_damage(const ThreadTraceSummary& s) {
  if (s.trailer) return 0;
  fmt::print(stderr, "parlot-read: error: {}: offset {}: {}; events up to there were read\n",
             s.path.string(), s.damage_offset, s.damage);
  return 1;
}

void report_warnings(const ProcessTrace& process) {
  for (const auto& w : process.warnings) fmt::print(stderr, "parlot-read: warning: {}\n", w);
}

}  // namespace parlot::tool
