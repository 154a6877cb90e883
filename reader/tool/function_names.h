// Function ID -> name, file and line for one process, through the
// symbolizer and the process's load map; cached per ID.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "id_cache.h"
#include "parlot/symbolizer.h"
#include "parlot/trace_reader.h"

namespace parlot::tool {

class FunctionNames {
 public:
  explicit FunctionNames(const ProcessTrace& process);

  /// Location of function `id` (1-based). Functions without a table entry
  /// are named "#<id>".
  const SourceLocation& lookup(std::uint32_t id);

  /// Location of a code address of this process (e.g. a crash frame).
  const SourceLocation& resolve_address(std::uint64_t address) {
    return symbolizer_.resolve(address);
  }

  /// The process's symbolizer (call sites' lines: call_site_text()).
  Symbolizer& symbolizer() { return symbolizer_; }

  /// Name as shown in traces: the function name, with "()" added for plain
  /// names (C, Fortran) so every line reads as a call, passed through
  /// visible_text() (control bytes and invalid UTF-8 escaped).
  const std::string& display_name(std::uint32_t id);

 private:
  const ProcessTrace& process_;
  Symbolizer symbolizer_;
  IdCache<const SourceLocation*> by_id_;
  IdCache<std::string> display_;
  std::deque<SourceLocation> unknown_;  // stable addresses
};

}  // namespace parlot::tool
