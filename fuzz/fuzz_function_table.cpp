// libFuzzer target: read_function_table on an arbitrary "functions" file,
// with the load biases of objects 0 and 1. Only parlot::FormatError may
// escape. A table that parses must be exactly the file's entries
// (docs/FORMAT.md): with a header count > 0 the file holds exactly `count`
// of them; with count 0 (process still running) the entries run to the end
// of the file, a last one cut short left out. Entries are address words in
// versions 1 to 5, (object, offset) pairs resolved with the biases in 6.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "fuzz_support.h"
#include "parlot/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto& path = parlot::fuzz::input_file().write(data, size);
  // Odd-sized inputs with a small limit, to reach the max_count check too.
  const std::uint64_t max_count = size % 2 == 0 ? (1ull << 30) : 16;
  try {
    const parlot::LoadBiases biases{{0, 0x1000}, {1, 0}};
    const auto table = parlot::read_function_table(path, biases, max_count);
    PARLOT_FUZZ_CHECK(size >= 24);
    std::uint16_t version;
    std::memcpy(&version, data + 8, sizeof version);
    const bool relative = version > parlot::format::kFunctionsAddressVersion;
    const std::size_t entry = relative ? sizeof(parlot::format::FunctionEntry) : 8;
    std::uint64_t count;
    std::memcpy(&count, data + 16, sizeof count);
    PARLOT_FUZZ_CHECK(table.size() <= max_count);
    if (count != 0) {
      PARLOT_FUZZ_CHECK(table.size() == count);
      PARLOT_FUZZ_CHECK(24 + entry * table.size() == size);
    } else {
      PARLOT_FUZZ_CHECK(table.size() == (size - 24) / entry);
    }
    for (std::size_t i = 0; i < table.size(); ++i) {
      if (!relative) {
        PARLOT_FUZZ_CHECK(std::memcmp(&table[i], data + 24 + 8 * i, 8) == 0);
        continue;
      }
      parlot::format::FunctionEntry e;
      std::memcpy(&e, data + 24 + entry * i, sizeof e);
      const std::uint64_t bias = e.object == parlot::format::kNoObject ? 0 : biases.at(e.object);
      PARLOT_FUZZ_CHECK(table[i] == bias + e.offset);
    }
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
