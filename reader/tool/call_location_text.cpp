#include "call_location_text.h"

#include <fmt/format.h>

namespace parlot::tool {

std::string call_location_text(const analysis::MpiCallSite& call,
                               const analysis::NameTable& names) {
  if (call.place.path.empty()) return "(call path unknown)";
  std::string out = analysis::path_text(call.place, names);
  if (!call.site.empty()) out += " at " + call.site;
  const std::string iteration = analysis::iteration_text(call.place, names);
  if (!iteration.empty()) out += ", " + iteration;
  return out;
}

std::string call_brief_text(const analysis::MpiCallSite& call, const analysis::NameTable& names) {
  std::string out = call.thread == 0 ? fmt::format("rank {}: {}", call.rank, call.function)
                                     : fmt::format("rank {} thread {}: {}", call.rank, call.thread,
                                                   call.function);
  if (!call.site.empty()) out += " at " + call.site;
  const std::string iteration = analysis::iteration_text(call.place, names);
  if (!iteration.empty()) out += ", " + iteration;
  return out;
}

}  // namespace parlot::tool
