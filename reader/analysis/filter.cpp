#include "filter.h"

namespace parlot::analysis {

FunctionMatcher::FunctionMatcher(const FunctionFilter& filter) {
  for (const auto& p : filter.include) include_.emplace_back(p);
  for (const auto& p : filter.exclude) exclude_.emplace_back(p);
  if (!filter.module.empty()) module_.emplace(filter.module);
}

bool FunctionMatcher::keeps(const std::string& name, const std::string& dso) const {
  if (module_ && !std::regex_search(dso, *module_)) return false;
  if (!include_.empty()) {
    bool any = false;
    for (const auto& r : include_) any = any || std::regex_search(name, r);
    if (!any) return false;
  }
  for (const auto& r : exclude_) {
    if (std::regex_search(name, r)) return false;
  }
  return true;
}

}  // namespace parlot::analysis
