// One factory per export format (each defined in <format>_exporter.cpp);
// make_exporter() in exporter_registry.cpp picks one by name.
#pragma once

#include <memory>
#include <string>

#include "exporter.h"

namespace parlot::exporter {

std::unique_ptr<Exporter> make_folded_exporter(const std::string& output,
                                               const ExportOptions& options);
std::unique_ptr<Exporter> make_chrome_exporter(const std::string& output,
                                               const ExportOptions& options);
std::unique_ptr<Exporter> make_speedscope_exporter(const std::string& output,
                                                   const ExportOptions& options);
std::unique_ptr<Exporter> make_callgrind_exporter(const std::string& output,
                                                  const ExportOptions& options);
std::unique_ptr<Exporter> make_dot_exporter(const std::string& output,
                                            const ExportOptions& options);
/// Defined only when the OTF2 library was found (PARLOT_HAVE_OTF2).
std::unique_ptr<Exporter> make_otf2_exporter(const std::string& output,
                                             const ExportOptions& options);
/// Defined only when protozero was found (PARLOT_HAVE_PROTOZERO).
std::unique_ptr<Exporter> make_perfetto_exporter(const std::string& output,
                                                 const ExportOptions& options);
std::unique_ptr<Exporter> make_hatchet_exporter(const std::string& output,
                                                const ExportOptions& options);

}  // namespace parlot::exporter
