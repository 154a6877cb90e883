#include "call_location_text.h"

namespace parlot::tool {

std::string call_location_text(const analysis::MpiCallSite& call,
                               const analysis::NameTable& names) {
  if (call.place.path.empty()) return "(call path unknown)";
  std::string out = analysis::path_text(call.place, names);
  const std::string iteration = analysis::iteration_text(call.place, names);
  if (!iteration.empty()) out += ", " + iteration;
  return out;
}

}  // namespace parlot::tool
