#include "sites_at.h"

#include "call_site_text.h"

namespace parlot::tool {

SitesAt sites_at(const TraceInput& input, const TraceInput::Thread& t, std::uint64_t index) {
  SitesAt out;
  auto stream = input.open(t, true);
  CallEvent c;
  for (std::uint64_t n = 0; stream->next_call(c); ++n) {
    const bool enter = c.kind == CallEvent::Kind::kEnter;
    if (n == index) {
      if (enter) out.at = stream->last_site();
      break;
    }
    if (enter) {
      out.open.push_back(stream->last_site());
    } else if (!out.open.empty()) {
      out.open.pop_back();
    }
  }
  return out;
}

std::string SiteNamer::text(std::size_t process, std::uint64_t site) {
  if (site == 0) return {};
  auto& s = symbolizers_[process];
  if (!s) {
    s = std::make_unique<Symbolizer>(input_.processes()[process].load_map,
                                     [](const std::string&) {});  // warned when named
  }
  return call_site_text(*s, site);
}

std::vector<std::string> site_texts(const TraceInput& input, std::size_t process,
                                    const std::vector<std::uint64_t>& sites) {
  SiteNamer namer(input);
  std::vector<std::string> out;
  out.reserve(sites.size());
  for (const std::uint64_t s : sites) out.push_back(namer.text(process, s));
  return out;
}

}  // namespace parlot::tool
