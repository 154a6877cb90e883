#include "simplified_names.h"

#include "export/simplify_name.h"

namespace parlot::tool {

analysis::NameTable simplified_names(const analysis::NameTable& names, bool simplify) {
  if (!simplify) return names;
  analysis::NameTable out;
  for (const auto& [key, name] : names.all()) out.add(key, exporter::simplify_name(name));
  return out;
}

}  // namespace parlot::tool
