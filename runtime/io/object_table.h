// The DSOs that hold traced functions, recorded when a function is first
// seen (so objects later dlclose'd are known) and appended to the `loadmap`
// file from the flush path. Recording is lock-free and async-signal-safe
// (_dl_find_object, glibc >= 2.35; the build ID is read from the object's
// ELF notes in memory). Storage is mmap'd once at initialisation.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace parlot::runtime {

class ObjectTable {
 public:
  /// Maps room for `capacity` objects. Returns false when mmap fails.
  bool init(std::size_t capacity);

  /// Records the object holding code address `address` unless it is known.
  /// Lock-free, async-signal-safe; a race may record an object twice (the
  /// reader keeps one). Objects beyond the capacity are dropped.
  void note_code_address(std::uintptr_t address);

  /// Appends the objects recorded since the last call as load-map lines to
  /// the open file `fd`. Callers serialise. Returns 0 or an errno.
  int append_new(int fd);

  /// True when append_new() has objects to write.
  bool has_new() const { return written_ < published(); }

  /// Makes the next append_new() write every object recorded so far (a
  /// fork child starts a load map of its own).
  void mark_none_written() { written_ = 0; }

 private:
  struct Entry {
    std::atomic<int> ready;  // 0 = being filled, 1 = complete
    std::uintptr_t link_map;
    std::uintptr_t start, end, bias;
    char build_id[48];  // hex, NUL-terminated, "-" when none
    char path[1024];
  };
  std::size_t published() const;

  Entry* entries_ = nullptr;
  std::size_t capacity_ = 0;
  std::atomic<std::size_t> count_{0};
  std::size_t written_ = 0;
};

}  // namespace parlot::runtime
