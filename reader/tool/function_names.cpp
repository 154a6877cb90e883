#include "function_names.h"

#include <fmt/core.h>

namespace parlot::tool {

FunctionNames::FunctionNames(const ProcessTrace& process)
    : process_(process),
      symbolizer_(process.load_map, [](const std::string& warning) {
        fmt::print(stderr, "parlot-read: warning: {}\n", warning);
      }) {}

const SourceLocation& FunctionNames::lookup(std::uint32_t id) {
  if (id >= by_id_.size()) by_id_.resize(id + 1, nullptr);
  if (by_id_[id] == nullptr) {
    if (id != 0 && id <= process_.function_addresses.size()) {
      by_id_[id] = &symbolizer_.resolve(process_.function_addresses[id - 1]);
    } else {
      SourceLocation& loc = unknown_.emplace_back();
      loc.function = fmt::format("#{}", id);
      by_id_[id] = &unknown_.back();
    }
  }
  return *by_id_[id];
}

const std::string& FunctionNames::display_name(std::uint32_t id) {
  if (id >= display_.size()) display_.resize(id + 1);
  if (display_[id].empty()) {
    const std::string& name = lookup(id).function;
    display_[id] = name.find('(') == std::string::npos ? name + "()" : name;
  }
  return display_[id];
}

}  // namespace parlot::tool
