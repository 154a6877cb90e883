#include "function_names.h"

#include <fmt/core.h>

#include "visible_text.h"

namespace parlot::tool {

FunctionNames::FunctionNames(const ProcessTrace& process)
    : process_(process),
      symbolizer_(process.load_map,
                  [](const std::string& warning) {
                    fmt::print(stderr, "parlot-read: warning: {}\n", visible_text(warning));
                  }),
      by_id_(process.function_addresses.size()),
      display_(process.function_addresses.size()) {}

const SourceLocation& FunctionNames::lookup(std::uint32_t id) {
  if (const SourceLocation** cached = by_id_.find(id)) return **cached;
  const SourceLocation* loc;
  const LibraryCalls::Function* call =
      id != 0 && id <= process_.function_addresses.size() && process_.library_calls
          ? process_.library_calls->find(process_.function_addresses[id - 1])
          : nullptr;
  if (call != nullptr) {
    // A library call: named by the symbol the program called it through.
    SourceLocation& named = unknown_.emplace_back();
    named.function = demangle_symbol(call->name, SymbolLanguage::kUnknown);
    if (call->display != call->name) named.function += call->display.substr(call->name.size());
    named.dso = call->library;
    loc = &named;
  } else if (id != 0 && id <= process_.function_addresses.size()) {
    loc = &symbolizer_.resolve(process_.function_addresses[id - 1]);
  } else {
    SourceLocation& unknown = unknown_.emplace_back();
    unknown.function = fmt::format("#{}", id);
    loc = &unknown;
  }
  return *by_id_.put(id, loc);
}

const std::string& FunctionNames::display_name(std::uint32_t id) {
  if (const std::string* cached = display_.find(id)) return *cached;
  const std::string& name = lookup(id).function;
  return display_.put(id, visible_text(name.find('(') == std::string::npos ? name + "()" : name));
}

}  // namespace parlot::tool
