// libFuzzer target: read_function_table on an arbitrary "functions" file.
// Only parlot::FormatError may escape. A table that parses must be exactly
// the file's address words (docs/FORMAT.md): with a header count > 0 the
// file holds exactly `count` of them; with count 0 (process still running)
// the entries run to the end of the file, a last one cut short left out.
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
    const auto table = parlot::read_function_table(path, max_count);
    PARLOT_FUZZ_CHECK(size >= 24);
    std::uint64_t count;
    std::memcpy(&count, data + 16, sizeof count);
    PARLOT_FUZZ_CHECK(table.size() <= max_count);
    if (count != 0) {
      PARLOT_FUZZ_CHECK(table.size() == count);
      PARLOT_FUZZ_CHECK(24 + 8 * table.size() == size);
    } else {
      PARLOT_FUZZ_CHECK(table.size() == (size - 24) / 8);
    }
    PARLOT_FUZZ_CHECK(table.empty() || std::memcmp(table.data(), data + 24, 8 * table.size()) == 0);
  } catch (const parlot::FormatError& e) {
    PARLOT_FUZZ_CHECK(e.what()[0] != '\0');
  }
  return 0;
}
