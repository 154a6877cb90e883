#include "io/object_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>

#include <cstring>

#include "io/build_id.h"
#include "io/proc_maps.h"
#include "io/raw_io.h"

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

void ObjectTable::note_code_address(std::uintptr_t address) {
  if (entries_ == nullptr) return;
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0) return;
  const auto link_map = reinterpret_cast<std::uintptr_t>(found.dlfo_link_map);
  const auto start = reinterpret_cast<std::uintptr_t>(found.dlfo_map_start);
  const std::size_t n = published();
  for (std::size_t i = 0; i < n; ++i) {
    const Entry& e = entries_[i];
    if (e.ready.load(std::memory_order_acquire) && e.link_map == link_map && e.start == start) {
      return;
    }
  }
  const std::size_t slot = count_.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= capacity_) return;
  Entry& e = entries_[slot];
  e.link_map = link_map;
  e.start = start;
  e.end = reinterpret_cast<std::uintptr_t>(found.dlfo_map_end);
  e.bias = found.dlfo_link_map->l_addr;
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

int ObjectTable::append_new(int fd) {
  const std::size_t n = published();
  while (written_ < n) {
    const Entry& e = entries_[written_];
    if (!e.ready.load(std::memory_order_acquire)) break;  // still being filled
    if (e.path[0] == '/') {
      char buf[1400];
      TextBuilder line(buf, sizeof buf);
      line.hex(e.start).ch(' ').hex(e.end).ch(' ').hex(e.bias).ch(' ').str(e.build_id).ch(' ');
      line.escaped(e.path, std::strlen(e.path)).ch('\n');
      const int err = write_all(fd, line.data(), line.size());
      if (err != 0) return err;
    }
    ++written_;
  }
  return 0;
}

}  // namespace parlot::runtime
