// Load map: where each DSO (executable or shared library) sat in a traced
// process's address space. Written by the runtime (runtime/io/object_table.cpp)
// into the `loadmap` file of the process directory (docs/FORMAT.md), read back
// by the reader, consumed by the symbolizer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parlot {

/// One loaded object (DSO) of a traced process.
struct LoadedObject {
  /// First mapped byte of the object's executable/loadable segments
  /// (run-time virtual address, bytes).
  std::uint64_t start = 0;
  /// One past the last mapped byte (run-time virtual address, bytes).
  std::uint64_t end = 0;
  /// Load bias: run-time address minus the link-time (ELF p_vaddr) address.
  /// 0 for a non-PIE executable.
  std::uint64_t load_bias = 0;
  /// GNU build ID as lowercase hex, empty when the object has none.
  std::string build_id;
  /// Absolute path of the file as the dynamic loader saw it.
  std::string path;

  /// True when `address` (run-time virtual address) lies in [start, end).
  bool contains(std::uint64_t address) const { return address >= start && address < end; }
};

/// All objects of one process, in the order they were recorded.
using LoadMap = std::vector<LoadedObject>;

}  // namespace parlot
