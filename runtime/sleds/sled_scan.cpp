// Finding the sleds of a loaded object (sled_scan.h).
#include "sleds/sled_scan.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

namespace parlot::runtime {
namespace {

constexpr char kSection[] = "__patchable_function_entries";

// Reads exactly `bytes` at `offset`; false on a short read or an error.
bool read_at(int fd, void* to, std::size_t bytes, off_t offset) {
  auto* p = static_cast<char*>(to);
  while (bytes != 0) {
    const ssize_t n = pread(fd, p, bytes, offset);
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += n;
  }
  return true;
}

// Calls `found(link-time address, size)` for each of the file's sections
// named kSection; false when the headers cannot be read.
template <class Found>
bool find_sections(int fd, Found found) {
  ElfW(Ehdr) eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
      eh.e_shstrndx == SHN_UNDEF || eh.e_shstrndx >= eh.e_shnum) {
    return false;
  }
  ElfW(Shdr) names;
  if (!read_at(fd, &names, sizeof names,
               static_cast<off_t>(eh.e_shoff + eh.e_shstrndx * sizeof(ElfW(Shdr))))) {
    return false;
  }
  for (unsigned i = 1; i < eh.e_shnum; ++i) {
    ElfW(Shdr) sh;
    if (!read_at(fd, &sh, sizeof sh, static_cast<off_t>(eh.e_shoff + i * sizeof(ElfW(Shdr))))) {
      return false;
    }
    if (sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_ALLOC) == 0 || sh.sh_addr == 0 ||
        sh.sh_name >= names.sh_size) {
      continue;
    }
    char name[sizeof kSection];
    const std::size_t want = sizeof kSection;  // with the terminating zero
    if (sh.sh_name + want > names.sh_size ||
        !read_at(fd, name, want, static_cast<off_t>(names.sh_offset + sh.sh_name))) {
      continue;
    }
    if (std::memcmp(name, kSection, want) == 0) found(sh.sh_addr, sh.sh_size);
  }
  return true;
}

}  // namespace

bool scan_sled_table(const char* path, std::uintptr_t base, const void* phdr, std::size_t phnum,
                     SledTable& table) {
  table = SledTable{};
  const auto* ph = static_cast<const ElfW(Phdr)*>(phdr);
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  for (std::size_t i = 0; i < phnum; ++i) {
    if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_X) == 0) continue;
    const std::uintptr_t lo = (base + ph[i].p_vaddr) & ~(page - 1);
    const std::uintptr_t hi = (base + ph[i].p_vaddr + ph[i].p_memsz + page - 1) & ~(page - 1);
    if (table.text_hi == 0 || lo < table.text_lo) table.text_lo = lo;
    if (hi > table.text_hi) table.text_hi = hi;
  }
  if (table.text_hi == 0) return false;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  find_sections(fd, [&](ElfW(Addr) addr, ElfW(Xword) size) {
    // Only a section inside a loaded segment: its words are in memory,
    // relocated.
    bool loaded = false;
    for (std::size_t i = 0; i < phnum && !loaded; ++i) {
      loaded = ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr &&
               addr + size <= ph[i].p_vaddr + ph[i].p_memsz;
    }
    if (!loaded || addr % alignof(std::uintptr_t) != 0 || size < sizeof(std::uintptr_t) ||
        table.sections == kMaxSledSections) {
      return;
    }
    table.entries[table.sections] = reinterpret_cast<const std::uintptr_t*>(base + addr);
    table.count[table.sections] = size / sizeof(std::uintptr_t);
    ++table.sections;
  });
  close(fd);
  return table.sections != 0;
}

}  // namespace parlot::runtime
