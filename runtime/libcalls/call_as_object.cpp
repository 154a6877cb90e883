// Finding a `ret` in a loaded object's code for parlot_call_as_object
// (call_as_object.h).
#include "libcalls/call_as_object.h"

#include <link.h>

#include <cstddef>

namespace parlot::runtime {
namespace {

struct RetSearch {
  std::uintptr_t address;    // a code address of the object
  std::uintptr_t found = 0;  // a byte 0xc3 in its executable segments
};

bool holds(const dl_phdr_info* info, std::uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const std::uintptr_t start = info->dlpi_addr + p.p_vaddr;
    if (p.p_type == PT_LOAD && address >= start && address - start < p.p_memsz) return true;
  }
  return false;
}

int find_ret(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<RetSearch*>(data);
  if (!holds(info, search->address)) return 0;
  for (int i = 0; i < info->dlpi_phnum && search->found == 0; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD || (p.p_flags & PF_X) == 0 || (p.p_flags & PF_R) == 0) continue;
    const auto* code = reinterpret_cast<const unsigned char*>(info->dlpi_addr + p.p_vaddr);
    for (std::size_t k = 0; k < p.p_filesz; ++k) {
      if (code[k] == 0xc3) {
        search->found = reinterpret_cast<std::uintptr_t>(code + k);
        break;
      }
    }
  }
  return 1;
}

}  // namespace

std::uintptr_t ret_instruction_in(std::uintptr_t address) {
  RetSearch search{address};
  dl_iterate_phdr(find_ret, &search);
  return search.found;
}

}  // namespace parlot::runtime
