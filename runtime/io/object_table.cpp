#include "io/object_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <cstring>

#include "io/build_id.h"
#include "io/proc_maps.h"
#include "io/raw_io.h"
#include "parlot/format.h"

namespace parlot::runtime {
namespace {

// Reads the GNU build ID from the ELF image mapped at `base` (the object's
// first PT_LOAD, which holds the ELF and program headers) into `out` as hex.
void read_build_id(std::uintptr_t base, std::uintptr_t bias, char* out, std::size_t cap) {
  std::strcpy(out, "-");
  const auto* eh = reinterpret_cast<const ElfW(Ehdr)*>(base);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr))) {
    return;
  }
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(base + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_NOTE) continue;
    const auto* notes = reinterpret_cast<const unsigned char*>(bias + ph[i].p_vaddr);
    if (find_gnu_build_id(notes, ph[i].p_memsz, out, cap)) return;
  }
}

}  // namespace

bool ObjectTable::init(std::size_t capacity) {
  void* p = mmap(nullptr, capacity * sizeof(Entry), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  entries_ = static_cast<Entry*>(p);
  capacity_ = capacity;
  return true;
}

std::size_t ObjectTable::published() const {
  const std::size_t n = count_.load(std::memory_order_acquire);
  return n < capacity_ ? n : capacity_;
}

const ObjectTable::Entry* ObjectTable::find(std::uintptr_t link_map, std::uintptr_t start) const {
  const std::size_t n = published();
  for (std::size_t i = 0; i < n; ++i) {
    const Entry& e = entries_[i];
    if (e.ready.load(std::memory_order_acquire) && e.link_map == link_map && e.start == start) {
      return &e;
    }
  }
  return nullptr;
}

void ObjectTable::note_code_address(std::uintptr_t address) {
  if (entries_ == nullptr) return;
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0) return;
  const auto link_map = reinterpret_cast<std::uintptr_t>(found.dlfo_link_map);
  const auto start = reinterpret_cast<std::uintptr_t>(found.dlfo_map_start);
  if (find(link_map, start) != nullptr) return;
  const std::size_t slot = count_.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= capacity_) return;
  Entry& e = entries_[slot];
  e.link_map = link_map;
  e.start = start;
  e.end = reinterpret_cast<std::uintptr_t>(found.dlfo_map_end);
  e.bias = found.dlfo_link_map->l_addr;
  e.index = format::kNoObject;
  const char* name = found.dlfo_link_map->l_name;
  if (name == nullptr || name[0] == '\0') {
    // The executable: its link map has no name.
    const ssize_t len = readlink("/proc/self/exe", e.path, sizeof e.path - 1);
    e.path[len > 0 ? len : 0] = '\0';
  } else {
    // A name relative to the directory the object was loaded from
    // (LD_LIBRARY_PATH=lib, dlopen("./x.so")) is made absolute now: the
    // symbolizer runs elsewhere, and the program may have moved since.
    absolute_object_path(name, start, e.path, sizeof e.path);
  }
  read_build_id(start, e.bias, e.build_id, sizeof e.build_id);
  e.ready.store(1, std::memory_order_release);
}

void ObjectTable::note_loaded_objects() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* self) {
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
          // Any address of the object: _dl_find_object names it as a
          // function's address would.
          static_cast<ObjectTable*>(self)->note_code_address(info->dlpi_addr +
                                                             info->dlpi_phdr[i].p_vaddr);
          break;
        }
        return 0;
      },
      this);
}

ObjectRef ObjectTable::object_of(std::uintptr_t address) {
  dl_find_object found;
  if (entries_ == nullptr || _dl_find_object(reinterpret_cast<void*>(address), &found) != 0) {
    return {true, format::kNoObject, 0};
  }
  const auto link_map = reinterpret_cast<std::uintptr_t>(found.dlfo_link_map);
  const auto start = reinterpret_cast<std::uintptr_t>(found.dlfo_map_start);
  const Entry* e = find(link_map, start);
  if (e == nullptr) {
    // The thread that saw the function first has not recorded its object
    // yet (or the table is full, or it lost a race): record it here.
    note_code_address(address);
    e = find(link_map, start);
    if (e == nullptr && count_.load(std::memory_order_acquire) >= capacity_) {
      return {true, format::kNoObject, 0};  // no room: the run-time address
    }
    return {};
  }
  if (e->path[0] != '/') return {true, format::kNoObject, 0};  // no file (the vdso)
  if (e->index == format::kNoObject) return {};                // not in the map yet
  return {true, e->index, e->bias};
}

int ObjectTable::append_new(int map_fd, int process_fd) {
  const std::size_t n = published();
  while (written_ < n) {
    Entry& e = entries_[written_];
    if (!e.ready.load(std::memory_order_acquire)) break;  // still being filled
    if (e.path[0] == '/') {
      char buf[1400];
      TextBuilder bias(buf, sizeof buf);
      bias.str("load_bias ").u64(next_index_).ch(' ').hex(e.bias).ch('\n');
      int err = write_all(process_fd, bias.data(), bias.size());
      if (err != 0) return err;
      TextBuilder line(buf, sizeof buf);
      line.u64(next_index_).ch(' ').hex(e.start - e.bias).ch(' ').hex(e.end - e.bias).ch(' ');
      line.str(e.build_id).ch(' ').escaped(e.path, std::strlen(e.path)).ch('\n');
      err = write_all(map_fd, line.data(), line.size());
      if (err != 0) return err;
      e.index = next_index_++;
    }
    ++written_;
  }
  return 0;
}

void ObjectTable::mark_none_written() {
  const std::size_t n = published();
  for (std::size_t i = 0; i < n; ++i) entries_[i].index = format::kNoObject;
  written_ = 0;
  next_index_ = 0;
}

void ObjectTable::append_load_biases(TextBuilder& text) const {
  for (std::size_t i = 0; i < written_; ++i) {
    const Entry& e = entries_[i];
    if (e.index != format::kNoObject) {
      text.str("load_bias ").u64(e.index).ch(' ').hex(e.bias).ch('\n');
    }
  }
}

}  // namespace parlot::runtime
