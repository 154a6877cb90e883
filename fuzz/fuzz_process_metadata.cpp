// libFuzzer target: read_process_metadata on an arbitrary "process" file.
// Only parlot::FormatError may escape.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "parlot/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = parlot::fuzz::input_file().write(data, size);
  try {
    const parlot::ProcessMetadata m = parlot::read_process_metadata(path);
    // Every value came out of the file; unescaping only shrinks.
    PARLOT_FUZZ_CHECK(m.host.size() < size && m.executable.size() < size && m.rank.size() < size);
    PARLOT_FUZZ_CHECK(m.arguments.size() < size);
    for (const auto& a : m.arguments) PARLOT_FUZZ_CHECK(a.size() < size);
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
