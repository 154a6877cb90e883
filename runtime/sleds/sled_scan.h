// Finding the sleds of the loaded objects (docs/DESIGN.md "Sleds"): code
// compiled with -fpatchable-function-entry=5 starts every function with 5
// bytes of NOPs and lists their addresses in the section
// __patchable_function_entries, which the linker places in the object's
// loaded (relocated) data. The section headers, which say where that is,
// are read from the object's file.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

/// Most __patchable_function_entries sections of one object that are
/// read (the linker makes one per output section holding functions:
/// .text, .text.startup, ...).
inline constexpr std::size_t kMaxSledSections = 16;

/// One loaded object's sleds, as scan_sled_table() finds them.
struct SledTable {
  std::uintptr_t text_lo = 0;  ///< first byte of its executable segments (page-aligned)
  std::uintptr_t text_hi = 0;  ///< end of its executable segments (page-aligned)
  /// The sled addresses, in the object's loaded memory (relocated by the
  /// loader): section i holds `count[i]` of them from `entries[i]`. Entries
  /// outside [text_lo, text_hi) (a function the linker dropped) are to be
  /// skipped.
  const std::uintptr_t* entries[kMaxSledSections] = {};
  std::size_t count[kMaxSledSections] = {};
  std::size_t sections = 0;
  /// Sleds in all sections.
  std::size_t total() const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < sections; ++i) n += count[i];
    return n;
  }
};

/// Reads the section headers of `path` (an object loaded at `base`, with
/// `phdr`/`phnum` its program headers as dl_iterate_phdr gives them) and
/// fills `table` with its __patchable_function_entries sections that lie
/// inside a loaded segment. Returns false when it has none or the file cannot be
/// read (no error is reported: such an object has no sleds to patch).
/// Cold: open, pread, close; no allocation.
bool scan_sled_table(const char* path, std::uintptr_t base, const void* phdr, std::size_t phnum,
                     SledTable& table);

}  // namespace parlot::runtime
