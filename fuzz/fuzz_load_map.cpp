// libFuzzer target: read_load_map on an arbitrary "loadmap" file.
// Only parlot::FormatError may escape. A map that parses holds non-empty
// ranges, no "-" build ID, and no two entries equal in every field (the
// reader keeps one entry per distinct line).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>

#include "fuzz_support.h"
#include "parlot/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = parlot::fuzz::input_file().write(data, size);
  try {
    const parlot::LoadMap map = parlot::read_load_map(path);
    std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::string, std::string>>
        seen;
    for (const auto& o : map) {
      PARLOT_FUZZ_CHECK(o.start < o.end);
      PARLOT_FUZZ_CHECK(o.build_id != "-");
      PARLOT_FUZZ_CHECK(o.path.size() < size);
      PARLOT_FUZZ_CHECK(seen.emplace(o.start, o.end, o.load_bias, o.build_id, o.path).second);
    }
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
