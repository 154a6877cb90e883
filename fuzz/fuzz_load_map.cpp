// libFuzzer target: read_load_map on an arbitrary "loadmap" file, with the
// load biases of objects 0 to 2. Only parlot::FormatError may escape. A map
// that parses holds non-empty ranges and no "-" build ID; a version-1 map
// no two entries equal in every field (the reader keeps one entry per
// distinct line), a version-2 map at most one entry per bias, each with
// its object's bias.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>

#include "fuzz_support.h"
#include "parlot/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = parlot::fuzz::input_file().write(data, size);
  try {
    const parlot::LoadBiases biases{{0, 0}, {1, 0x7f0000000000}, {2, 0x1000}};
    const parlot::LoadMap map = parlot::read_load_map(path, biases);
    const bool v2 = size >= 16 && std::memcmp(data, "parlot-loadmap 2", 16) == 0;
    PARLOT_FUZZ_CHECK(!v2 || map.size() <= biases.size());
    std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, std::string, std::string>>
        seen;
    for (std::size_t i = 0; i < map.size(); ++i) {
      const auto& o = map[i];
      PARLOT_FUZZ_CHECK(o.start < o.end);
      PARLOT_FUZZ_CHECK(o.build_id != "-");
      PARLOT_FUZZ_CHECK(o.path.size() < size);
      if (v2) {
        PARLOT_FUZZ_CHECK(o.load_bias == biases.at(static_cast<std::uint32_t>(i)));
      } else {
        PARLOT_FUZZ_CHECK(seen.emplace(o.start, o.end, o.load_bias, o.build_id, o.path).second);
      }
    }
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
