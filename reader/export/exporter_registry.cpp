#include <utility>

#include "exporters.h"

namespace parlot::exporter {
namespace {

using Factory = std::unique_ptr<Exporter> (*)(const std::string&, const ExportOptions&);

const std::vector<std::pair<std::string, Factory>>& factories() {
  static const std::vector<std::pair<std::string, Factory>> all = {
      {"folded", make_folded_exporter},
      {"chrome", make_chrome_exporter},
      {"speedscope", make_speedscope_exporter},
      {"callgrind", make_callgrind_exporter},
      {"dot", make_dot_exporter},
      {"hatchet", make_hatchet_exporter},
#ifdef PARLOT_HAVE_PROTOZERO
      {"perfetto", make_perfetto_exporter},
#endif
#ifdef PARLOT_HAVE_OTF2
      {"otf2", make_otf2_exporter},
#endif
  };
  return all;
}

}  // namespace

std::unique_ptr<Exporter> make_exporter(const std::string& format, const std::string& output,
                                        const ExportOptions& options) {
  for (const auto& [name, factory] : factories()) {
    if (name == format) return factory(output, options);
  }
  return nullptr;
}

const std::vector<std::string>& export_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, factory] : factories()) n.push_back(name);
    return n;
  }();
  return names;
}

}  // namespace parlot::exporter
