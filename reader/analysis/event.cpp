#include "event.h"

#include <fmt/format.h>

namespace parlot::analysis {

FunctionKey function_key(std::string_view name) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

std::string NameTable::name(FunctionKey key) const {
  const auto it = names_.find(key);
  return it == names_.end() ? fmt::format("#{:x}", key) : it->second;
}

bool EventSource::next_events(std::vector<Event>& out) {
  constexpr std::size_t kBatch = 4096;
  out.resize(kBatch);
  std::size_t n = 0;
  while (n < kBatch && next(out[n])) ++n;
  out.resize(n);
  return n != 0;
}

}  // namespace parlot::analysis
