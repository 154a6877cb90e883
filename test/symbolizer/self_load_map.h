// Test helper: the load map of the calling process, built the way the Parlot
// runtime records it (dl_iterate_phdr: PT_LOAD extent, dlpi_addr as load
// bias, GNU build ID from the PT_NOTE segments).
#pragma once

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "parlot/load_map.h"

namespace parlot::test {

/// GNU build ID (lowercase hex) found in the PT_NOTE segments of a loaded
/// object, empty when there is none.
inline std::string loaded_build_id(const dl_phdr_info& info) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const std::uint64_t align = ph.p_align == 8 ? 8 : 4;
    const auto* p = reinterpret_cast<const unsigned char*>(info.dlpi_addr + ph.p_vaddr);
    const unsigned char* const end = p + ph.p_memsz;
    auto round_up = [align](std::uint64_t n) { return (n + align - 1) & ~(align - 1); };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const unsigned char* name = p + sizeof note;
      const unsigned char* desc = name + round_up(note.n_namesz);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (std::uint32_t b = 0; b < note.n_descsz; ++b) {
          hex.push_back(kDigits[desc[b] >> 4]);
          hex.push_back(kDigits[desc[b] & 0xf]);
        }
        return hex;
      }
      p = desc + round_up(note.n_descsz);
    }
  }
  return {};
}

/// Path of the running executable (dl_iterate_phdr reports it as "").
inline std::string self_exe_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

/// The load map of the calling process, in dl_iterate_phdr order.
inline LoadMap self_load_map() {
  LoadMap map;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        LoadedObject object;
        std::uint64_t low = std::numeric_limits<std::uint64_t>::max();
        std::uint64_t high = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          low = std::min<std::uint64_t>(low, info->dlpi_addr + ph.p_vaddr);
          high = std::max<std::uint64_t>(high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (high == 0) return 0;
        object.start = low;
        object.end = high;
        object.load_bias = info->dlpi_addr;
        object.build_id = loaded_build_id(*info);
        object.path = info->dlpi_name[0] != '\0' ? std::string(info->dlpi_name) : self_exe_path();
        static_cast<LoadMap*>(data)->push_back(std::move(object));
        return 0;
      },
      &map);
  return map;
}

}  // namespace parlot::test
