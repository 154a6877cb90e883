// The loaded objects (DSOs): every object loaded when the trace starts and
// at its end, and the one holding each traced function, recorded when the
// function is first seen (so objects later dlopen'd, and dlclose'd since,
// are known), numbered in that order and appended to the `loadmap` file from
// the flush path. Recording is lock-free and async-signal-safe
// (_dl_find_object, glibc >= 2.35; the build ID is read from the object's
// ELF notes in memory). Storage is mmap'd once at initialisation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "io/raw_io.h"

namespace parlot::runtime {

/// Where a function address lies, for the function table (object_of()).
struct ObjectRef {
  /// False while the object is being recorded or not yet in the load map:
  /// ask again after append_new().
  bool ready = false;
  /// Index of the object in the load map, or format::kNoObject when the
  /// address lies in no object with a file (an entry stub): the function
  /// table then holds the run-time address itself.
  std::uint32_t index = 0;
  /// The object's load bias (run-time minus link-time address), 0 with kNoObject.
  std::uintptr_t bias = 0;
};

class ObjectTable {
 public:
  /// Maps room for `capacity` objects. Returns false when mmap fails.
  bool init(std::size_t capacity);

  /// Records the object holding code address `address` unless it is known.
  /// Lock-free, async-signal-safe; a race may record an object twice (the
  /// reader keeps one). Objects beyond the capacity are dropped.
  void note_code_address(std::uintptr_t address);

  /// Records every object loaded now, in the loader's order (the
  /// executable, then the libraries as they were loaded): so that
  /// processes running the same program number the same objects alike.
  /// Takes the loader's lock (dl_iterate_phdr): not from a signal handler.
  void note_loaded_objects();

  /// The object holding `address` (a function of the function table) and
  /// its index in the load map. Records the object when it was not known
  /// (then not `ready` until the next append_new()). Callers serialise
  /// with append_new(). Async-signal-safe (_dl_find_object).
  ObjectRef object_of(std::uintptr_t address);

  /// Appends the objects recorded since the last call, each with the next
  /// index: a load-map line (docs/FORMAT.md, `loadmap` version 2, link-time
  /// addresses) to the open file `map_fd` after a `load_bias` line to the
  /// open process file `process_fd` (first, so no object of the map lacks
  /// its bias). Objects without a file (the vdso) take no index. Callers
  /// serialise. Returns 0 or an errno.
  int append_new(int map_fd, int process_fd);

  /// Appends a `load_bias <index> <bias>` line for every object written
  /// so far to `text` (the process file, rewritten whole).
  void append_load_biases(TextBuilder& text) const;

  /// True when append_new() has objects to write.
  bool has_new() const { return written_ < published(); }

  /// Makes the next append_new() write every object recorded so far, from
  /// index 0 (a fork child starts a load map of its own).
  void mark_none_written();

 private:
  struct Entry {
    std::atomic<int> ready;  // 0 = being filled, 1 = complete
    std::uintptr_t link_map;
    std::uintptr_t start, end, bias;
    std::uint32_t index;  // in the load map, once written; format::kNoObject before
    char build_id[48];    // hex, NUL-terminated, "-" when none
    char path[1024];
  };
  std::size_t published() const;
  // The entry of the object that _dl_find_object says holds `address`, or
  // nullptr (also while it is being filled).
  const Entry* find(std::uintptr_t link_map, std::uintptr_t start) const;

  Entry* entries_ = nullptr;
  std::size_t capacity_ = 0;
  std::atomic<std::size_t> count_{0};
  std::size_t written_ = 0;
  std::uint32_t next_index_ = 0;
};

}  // namespace parlot::runtime
