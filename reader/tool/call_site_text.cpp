#include "call_site_text.h"

#include <fmt/format.h>

#include "visible_text.h"

namespace parlot::tool {

const SourceLine* call_site_line(Symbolizer& symbolizer, std::uint64_t site) {
  if (site == 0) return nullptr;
  // A call made by Parlot's runtime (main called through its start-up
  // interposer, a thread's start routine through its creation wrapper) or
  // by the C library (a thread's start routine from start_thread, a qsort
  // comparator) is not the program's: no site.
  const std::string& dso = symbolizer.resolve(site - 1).dso;
  const std::string_view file = std::string_view(dso).substr(dso.rfind('/') + 1);
  if (file.starts_with("libparlotrt.so") || file.starts_with("libc.so")) return nullptr;
  const SourceLine& line = symbolizer.source_line(site - 1);
  if (line.line <= 0 || line.file.empty()) return nullptr;
  return &line;
}

std::string call_site_text(Symbolizer& symbolizer, std::uint64_t site) {
  const SourceLine* line = call_site_line(symbolizer, site);
  if (line == nullptr) return {};
  const std::size_t slash = line->file.rfind('/');
  const std::string_view base = slash == std::string::npos
                                    ? std::string_view(line->file)
                                    : std::string_view(line->file).substr(slash + 1);
  return visible_text(fmt::format("{}:{}", base, line->line));
}

std::string frame_with_site(std::string_view frame, std::string_view site) {
  if (site.empty()) return std::string(frame);
  return fmt::format("{} at {}", frame, site);
}

}  // namespace parlot::tool
