#include "process/function_filter.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "io/own_fd.h"
#include "io/proc_maps.h"
#include "io/raw_io.h"

namespace parlot::runtime {
namespace {

// One `[...]` set at `p` (just after '['): sets `matched` for `c`, returns
// the character after ']' (or nullptr for an unterminated set: no match).
const char* match_set(const char* p, char c, bool& matched) {
  const bool negate = *p == '!' || *p == '^';
  if (negate) ++p;
  bool found = false;
  bool first = true;
  for (; *p != '\0' && (first || *p != ']'); ++p, first = false) {
    if (p[1] == '-' && p[2] != ']' && p[2] != '\0') {
      if (c >= p[0] && c <= p[2]) found = true;
      p += 2;
    } else if (*p == c) {
      found = true;
    }
  }
  if (*p != ']') return nullptr;
  matched = found != negate;
  return p + 1;
}

// <length><identifier> at `s`: appends the identifier to `out` at `n`.
// Returns the position after it, or nullptr.
const char* source_name(const char* s, char* out, std::size_t& n, std::size_t size,
                        const char** last, std::size_t* last_len) {
  std::size_t len = 0;
  while (*s >= '0' && *s <= '9') {
    len = len * 10 + static_cast<std::size_t>(*s++ - '0');
    if (len > 4096) return nullptr;
  }
  if (len == 0 || strnlen(s, len) < len || n + len + 1 >= size) return nullptr;
  std::memcpy(out + n, s, len);
  *last = out + n;
  *last_len = len;
  n += len;
  out[n] = '\0';
  return s + len;
}

bool append(char* out, std::size_t& n, std::size_t size, const char* text, std::size_t len) {
  if (n + len + 1 >= size) return false;
  std::memcpy(out + n, text, len);
  n += len;
  out[n] = '\0';
  return true;
}

}  // namespace

bool glob_match(const char* pattern, const char* text) {
  const char* star = nullptr;    // pattern position after the last '*'
  const char* resume = nullptr;  // text position that '*' will absorb next
  while (*text != '\0') {
    if (*pattern == '*') {
      star = ++pattern;
      resume = text;
      continue;
    }
    bool ok = false;
    const char* next = pattern + 1;
    if (*pattern == '?') {
      ok = true;
    } else if (*pattern == '[') {
      next = match_set(pattern + 1, *text, ok);
      if (next == nullptr) ok = false;
    } else {
      ok = *pattern == *text && *pattern != '\0';
    }
    if (ok) {
      pattern = next;
      ++text;
    } else if (star != nullptr) {
      pattern = star;
      text = ++resume;
    } else {
      return false;
    }
  }
  while (*pattern == '*') ++pattern;
  return *pattern == '\0';
}

bool qualified_name_of(const char* s, char* out, std::size_t size) {
  std::size_t n = 0;
  if (size == 0) return false;
  out[0] = '\0';
  // gfortran module procedure: __<module>_MOD_<procedure>.
  if (s[0] == '_' && s[1] == '_') {
    const char* mod = std::strstr(s + 2, "_MOD_");
    if (mod == nullptr || mod == s + 2) return false;
    return append(out, n, size, s + 2, static_cast<std::size_t>(mod - (s + 2))) &&
           append(out, n, size, "::", 2) && append(out, n, size, mod + 5, std::strlen(mod + 5));
  }
  if (s[0] != '_' || s[1] != 'Z') return false;
  s += 2;
  if (*s == 'L') ++s;  // internal linkage
  const char* last = nullptr;
  std::size_t last_len = 0;
  if (*s != 'N') {
    if (s[0] == 'S' && s[1] == 't') {
      if (!append(out, n, size, "std::", 5)) return false;
      s += 2;
    }
    return source_name(s, out, n, size, &last, &last_len) != nullptr;
  }
  ++s;
  while (*s == 'r' || *s == 'V' || *s == 'K' || *s == 'R' || *s == 'O') ++s;  // cv, ref
  bool first = true;
  while (*s != 'E') {
    if (!first && !append(out, n, size, "::", 2)) return false;
    if (first && s[0] == 'S' && s[1] == 't') {
      if (!append(out, n, size, "std", 3)) return false;
      s += 2;
    } else if (*s >= '1' && *s <= '9') {
      s = source_name(s, out, n, size, &last, &last_len);
      if (s == nullptr) return false;
    } else if ((s[0] == 'C' || s[0] == 'D') && last != nullptr) {
      // Constructor C1/C2/C3 (CI1/CI2 inheriting), destructor D0/D1/D2:
      // the class's name (the previous component), with '~' for a destructor.
      const bool dtor = s[0] == 'D';
      s += s[1] == 'I' ? 2 : 1;
      if (*s < '0' || *s > '5') return false;
      ++s;
      char cls[512];
      if (last_len >= sizeof cls) return false;
      std::memcpy(cls, last, last_len);
      if ((dtor && !append(out, n, size, "~", 1)) || !append(out, n, size, cls, last_len)) {
        return false;
      }
    } else {
      return false;  // template arguments, substitutions, operators, ...
    }
    first = false;
  }
  return n != 0;
}

bool FunctionFilter::init(const char* include, const char* exclude) {
  include_count_ = exclude_count_ = 0;
  needs_names_ = false;
  std::size_t used = 0;
  bool ok = true;
  auto parse = [&](const char* list, Pattern* out, std::size_t& count) {
    const std::size_t len = list == nullptr ? 0 : std::strlen(list);
    if (used + len + 1 > sizeof storage_) return;
    char* copy = storage_ + used;
    std::memcpy(copy, list, len);
    copy[len] = '\0';
    used += len + 1;
    for (char* p = copy; *p != '\0';) {
      char* end = std::strchr(p, ';');
      if (end != nullptr) *end = '\0';
      if (*p != '\0') {
        if (count == kMaxPatterns) {
          ok = false;
          break;
        }
        const bool on_path = std::strncmp(p, "dso:", 4) == 0;
        out[count++] = Pattern{on_path ? p + 4 : p, on_path};
        needs_names_ = needs_names_ || !on_path;
      }
      if (end == nullptr) break;
      p = end + 1;
    }
  };
  parse(include, include_, include_count_);
  parse(exclude, exclude_, exclude_count_);
  if (!ok) {
    log_line("PARLOT_INCLUDE/PARLOT_EXCLUDE: more than 64 patterns; recording every function");
    include_count_ = exclude_count_ = 0;
    return false;
  }
  const ssize_t n = readlink("/proc/self/exe", executable_, sizeof executable_ - 1);
  executable_[n > 0 ? n : 0] = '\0';
  return true;
}

bool FunctionFilter::any_matches(const Pattern* patterns, std::size_t n, const char* path,
                                 const char* name, const char* qualified) {
  for (std::size_t i = 0; i < n; ++i) {
    const Pattern& p = patterns[i];
    if (p.on_path) {
      if (glob_match(p.glob, path)) return true;
    } else if ((name[0] != '\0' && glob_match(p.glob, name)) ||
               (qualified[0] != '\0' && glob_match(p.glob, qualified))) {
      return true;
    }
  }
  return false;
}

void FunctionFilter::map_symbols(ObjectSymbols& o, const char* path) {
  o.file = nullptr;
  const int fd = open_own(path, O_RDONLY);
  if (fd < 0) return;
  struct stat st;
  void* m = MAP_FAILED;
  if (fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    m = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);
  if (m == MAP_FAILED) return;
  const auto* file = static_cast<const unsigned char*>(m);
  const auto bytes = static_cast<std::size_t>(st.st_size);
  Elf64_Ehdr eh;
  std::memcpy(&eh, file, sizeof eh);
  const bool elf64 = std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
                     eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr);
  if (!elf64 || eh.e_shoff > bytes || eh.e_shnum > (bytes - eh.e_shoff) / sizeof(Elf64_Shdr)) {
    munmap(m, bytes);
    return;
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(file + eh.e_shoff);
  const Elf64_Shdr* table = nullptr;
  for (unsigned want : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (unsigned i = 0; i < eh.e_shnum && table == nullptr; ++i) {
      if (sections[i].sh_type == want) table = &sections[i];
    }
    if (table != nullptr) break;
  }
  if (table == nullptr || table->sh_link >= eh.e_shnum || table->sh_offset > bytes ||
      table->sh_size > bytes - table->sh_offset) {
    munmap(m, bytes);
    return;
  }
  const Elf64_Shdr& strings = sections[table->sh_link];
  if (strings.sh_offset > bytes || strings.sh_size > bytes - strings.sh_offset ||
      strings.sh_size == 0) {
    munmap(m, bytes);
    return;
  }
  o.symbols = file + table->sh_offset;
  o.symbol_count = table->sh_size / sizeof(Elf64_Sym);
  o.strings = reinterpret_cast<const char*>(file + strings.sh_offset);
  o.string_bytes = strings.sh_size;
  o.file_bytes = bytes;
  o.file = file;
  index_functions(o);
}

namespace {

struct FunctionSymbol {
  std::uint64_t address;  ///< st_value
  std::uint32_t symbol;   ///< index in the symbol table
};

bool is_function(const Elf64_Sym& s) {
  const unsigned type = ELF64_ST_TYPE(s.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && s.st_shndx != SHN_UNDEF;
}

// In-place heap sort by address (no allocation, O(n log n) worst case).
void sift_down(FunctionSymbol* a, std::size_t i, std::size_t n) {
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) return;
    if (child + 1 < n && a[child + 1].address > a[child].address) ++child;
    if (a[child].address <= a[i].address) return;
    const FunctionSymbol t = a[i];
    a[i] = a[child];
    a[child] = t;
    i = child;
  }
}

void heap_sort(FunctionSymbol* a, std::size_t n) {
  for (std::size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
  for (std::size_t end = n; end-- > 1;) {
    const FunctionSymbol t = a[0];
    a[0] = a[end];
    a[end] = t;
    sift_down(a, 0, end);
  }
}

}  // namespace

void FunctionFilter::index_functions(ObjectSymbols& o) {
  o.by_address = nullptr;
  o.function_count = 0;
  const auto* syms = static_cast<const Elf64_Sym*>(o.symbols);
  std::size_t n = 0;
  for (std::size_t i = 0; i < o.symbol_count; ++i) n += is_function(syms[i]) ? 1 : 0;
  if (n == 0 || o.symbol_count > 0xffffffffu) return;
  void* m = mmap(nullptr, n * sizeof(FunctionSymbol), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;
  auto* index = static_cast<FunctionSymbol*>(m);
  std::size_t k = 0;
  for (std::size_t i = 0; i < o.symbol_count; ++i) {
    if (is_function(syms[i])) index[k++] = {syms[i].st_value, static_cast<std::uint32_t>(i)};
  }
  heap_sort(index, n);
  o.by_address = index;
  o.function_count = n;
}

const FunctionFilter::ObjectSymbols* FunctionFilter::symbols_of(const void* link_map,
                                                                const char* path,
                                                                std::uintptr_t mapped_at) {
  for (std::size_t i = 0; i < object_count_; ++i) {
    if (objects_[i].link_map == link_map) return &objects_[i];
  }
  if (object_count_ == kMaxObjects) return nullptr;
  ObjectSymbols& o = objects_[object_count_];
  o.link_map = link_map;
  // A relative name (LD_LIBRARY_PATH=lib, dlopen("./x.so")) is relative to
  // where the program was when it loaded the object, not where it is now.
  char absolute[1024];
  if (path[0] != '/' && absolute_object_path(path, mapped_at, absolute, sizeof absolute)) {
    path = absolute;
  }
  map_symbols(o, path);
  ++object_count_;
  return &o;
}

const char* FunctionFilter::name_at(const ObjectSymbols& o, std::uintptr_t offset) {
  const auto* syms = static_cast<const Elf64_Sym*>(o.symbols);
  const auto* index = static_cast<const FunctionSymbol*>(o.by_address);
  // First entry at `offset` (binary search), then every symbol there.
  std::size_t lo = 0, hi = o.function_count;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (index[mid].address < offset) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (; lo < o.function_count && index[lo].address == offset; ++lo) {
    const Elf64_Sym& s = syms[index[lo].symbol];
    if (s.st_name >= o.string_bytes) continue;
    const char* name = o.strings + s.st_name;
    if (strnlen(name, o.string_bytes - s.st_name) < o.string_bytes - s.st_name) return name;
  }
  return nullptr;
}

bool FunctionFilter::records(std::uintptr_t address) {
  if (!active()) return true;
  dl_find_object found;
  const char* path = "";
  const link_map* map = nullptr;
  if (_dl_find_object(reinterpret_cast<void*>(address), &found) == 0) {
    map = found.dlfo_link_map;
    path = map->l_name != nullptr && map->l_name[0] != '\0' ? map->l_name : executable_;
  }
  char name[512] = "";
  char qualified[512] = "";
  const char* stub_name = nullptr;
  const char* stub_library = nullptr;
  if (names_stub != nullptr && names_stub(address, &stub_name, &stub_library)) {
    // A library call (libcall_patcher.h): its symbol and defining library.
    path = stub_library;
    std::strncpy(name, stub_name, sizeof name - 1);
    if (!qualified_name_of(name, qualified, sizeof qualified)) qualified[0] = '\0';
  } else if (needs_names_ && map != nullptr) {
    while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();
    const ObjectSymbols* o =
        symbols_of(map, path, reinterpret_cast<std::uintptr_t>(found.dlfo_map_start));
    const char* symbol =
        o != nullptr && o->file != nullptr ? name_at(*o, address - map->l_addr) : nullptr;
    if (symbol != nullptr) {
      std::size_t len = std::strcspn(symbol, ".");
      if (len == 0) len = std::strlen(symbol);
      if (len >= sizeof name) len = sizeof name - 1;
      std::memcpy(name, symbol, len);
      name[len] = '\0';
    }
    lock_.clear(std::memory_order_release);
    if (!qualified_name_of(name, qualified, sizeof qualified)) qualified[0] = '\0';
  }
  if (include_count_ != 0 && !any_matches(include_, include_count_, path, name, qualified)) {
    return false;
  }
  return !any_matches(exclude_, exclude_count_, path, name, qualified);
}

}  // namespace parlot::runtime
