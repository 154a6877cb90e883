// The loaded objects as the library-call patcher sees them
// (libcall_objects.h).
#include "libcalls/libcall_objects.h"

#include <fnmatch.h>
#include <unistd.h>

#include <cstring>

namespace parlot::runtime::libcall {

Object g_objects[kMaxObjects];
std::size_t g_object_count = 0;

namespace {

// The dynamic loader relocates the pointers of a writable dynamic section in
// place; a read-only one (the vDSO's) holds link-time addresses.
template <class T>
const T* dynamic_pointer(const Object& o, ElfW(Addr) value) {
  return reinterpret_cast<const T*>(value < o.bias ? value + o.bias : value);
}

bool calls_hook(const Object& o, const ElfW(Rela) * relocs, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t sym = ELF64_R_SYM(relocs[i].r_info);
    if (sym != 0 && std::strcmp(o.strtab + o.symtab[sym].st_name, "__cyg_profile_func_enter") == 0)
      return true;
  }
  return false;
}

}  // namespace

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

bool is_hook(const char* name) {
  return std::strncmp(name, "__cyg_profile_func_", 19) == 0;
}

int collect_object(dl_phdr_info* info, std::size_t, void*) {
  if (g_object_count == kMaxObjects) return 1;
  Object o;
  o.main = g_object_count == 0;
  o.bias = info->dlpi_addr;
  o.name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const ElfW(Dyn)* dynamic = nullptr;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const std::uintptr_t start = o.bias + p.p_vaddr;
    if (p.p_type == PT_LOAD) {
      if (o.lo == 0 || start < o.lo) o.lo = start;
      if (start + p.p_memsz > o.hi) o.hi = start + p.p_memsz;
    } else if (p.p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(start);
    } else if (p.p_type == PT_GNU_RELRO) {
      o.relro_lo = start & ~(page - 1);
      o.relro_hi = (start + p.p_memsz) & ~(page - 1);  // the loader protects whole pages only
    }
  }
  if (dynamic == nullptr) return 0;
  o.dynamic = reinterpret_cast<std::uintptr_t>(dynamic);
  std::size_t jmprel_bytes = 0, rela_bytes = 0;
  ElfW(Addr) symtab = 0, strtab = 0, jmprel = 0, rela = 0, versym = 0, verneed = 0, gnu_hash = 0;
  bool pltrel_is_rela = true;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB:
        symtab = d->d_un.d_ptr;
        break;
      case DT_STRTAB:
        strtab = d->d_un.d_ptr;
        break;
      case DT_JMPREL:
        jmprel = d->d_un.d_ptr;
        break;
      case DT_PLTRELSZ:
        jmprel_bytes = d->d_un.d_val;
        break;
      case DT_PLTREL:
        pltrel_is_rela = d->d_un.d_val == DT_RELA;
        break;
      case DT_RELA:
        rela = d->d_un.d_ptr;
        break;
      case DT_RELASZ:
        rela_bytes = d->d_un.d_val;
        break;
      case DT_VERSYM:
        versym = d->d_un.d_ptr;
        break;
      case DT_VERNEED:
        verneed = d->d_un.d_ptr;
        break;
      case DT_VERNEEDNUM:
        o.verneed_count = d->d_un.d_val;
        break;
      case DT_GNU_HASH:
        gnu_hash = d->d_un.d_ptr;
        break;
      case DT_VERDEF:
        o.versioned = true;
        break;
      case DT_BIND_NOW:
        o.bind_now = true;
        break;
      case DT_FLAGS:
        o.bind_now |= (d->d_un.d_val & DF_BIND_NOW) != 0;
        break;
      case DT_FLAGS_1:
        o.bind_now |= (d->d_un.d_val & DF_1_NOW) != 0;
        break;
      case DT_AUDIT:
      case DT_DEPAUDIT:
        o.audit = true;
        break;
      default:
        break;
    }
  }
  if (symtab == 0 || strtab == 0 || !pltrel_is_rela) return 0;
  o.symtab = dynamic_pointer<ElfW(Sym)>(o, symtab);
  o.strtab = dynamic_pointer<char>(o, strtab);
  if (jmprel != 0) {
    o.jmprel = dynamic_pointer<ElfW(Rela)>(o, jmprel);
    o.jmprel_count = jmprel_bytes / sizeof(ElfW(Rela));
  }
  if (rela != 0) {
    o.rela = dynamic_pointer<ElfW(Rela)>(o, rela);
    o.rela_count = rela_bytes / sizeof(ElfW(Rela));
  }
  if (versym != 0) o.versym = dynamic_pointer<ElfW(Half)>(o, versym);
  if (verneed != 0) o.verneed = dynamic_pointer<ElfW(Verneed)>(o, verneed);
  if (gnu_hash != 0) o.gnu_hash = dynamic_pointer<std::uint32_t>(o, gnu_hash);
  const char* base = base_name(o.name);
  o.parlot =
      std::strncmp(base, "libparlotrt.", 12) == 0 || std::strncmp(base, "libparlotmpi.", 13) == 0;
  o.instrumented =
      !o.parlot && (calls_hook(o, o.jmprel, o.jmprel_count) || calls_hook(o, o.rela, o.rela_count));
  g_objects[g_object_count++] = o;
  return 0;
}

Object* object_at(std::uintptr_t address) {
  for (std::size_t i = 0; i < g_object_count; ++i)
    if (address >= g_objects[i].lo && address < g_objects[i].hi) return &g_objects[i];
  return nullptr;
}

// The version a symbol reference asks for (DT_VERNEED), or nullptr.
const char* required_version(const Object& o, std::size_t sym) {
  if (o.versym == nullptr || o.verneed == nullptr) return nullptr;
  const unsigned index = o.versym[sym] & 0x7fff;
  if (index < 2) return nullptr;  // local or global: no version
  const auto* need = o.verneed;
  for (std::size_t n = 0; n < o.verneed_count; ++n) {
    const auto* aux =
        reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(need) + need->vn_aux);
    for (unsigned k = 0; k < need->vn_cnt; ++k) {
      if (aux->vna_other == index) return o.strtab + aux->vna_name;
      aux = reinterpret_cast<const ElfW(Vernaux)*>(reinterpret_cast<const char*>(aux) +
                                                   aux->vna_next);
    }
    if (need->vn_next == 0) break;
    need =
        reinterpret_cast<const ElfW(Verneed)*>(reinterpret_cast<const char*>(need) + need->vn_next);
  }
  return nullptr;
}

// True when `o` defines a dynamic symbol `name` (GNU hash lookup).
bool defines(const Object& o, const char* name) {
  if (o.gnu_hash == nullptr) return false;
  const std::uint32_t nbuckets = o.gnu_hash[0], symoffset = o.gnu_hash[1];
  const std::uint32_t bloom_words = o.gnu_hash[2];
  if (nbuckets == 0) return false;
  const auto* buckets = o.gnu_hash + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
  const auto* chain = buckets + nbuckets;
  std::uint32_t hash = 5381;
  for (const char* c = name; *c != 0; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  std::uint32_t i = buckets[hash % nbuckets];
  if (i < symoffset) return false;
  for (;; ++i) {
    const std::uint32_t h = chain[i - symoffset];
    const ElfW(Sym)& s = o.symtab[i];
    if ((h | 1) == (hash | 1) && s.st_shndx != SHN_UNDEF &&
        std::strcmp(o.strtab + s.st_name, name) == 0) {
      return true;
    }
    if ((h & 1) != 0) break;
  }
  return false;
}

// The object a call to `name` that lands at `target` is a call into: the
// object holding the target, but for the vDSO (what the C library's
// gettimeofday, time, clock_gettime resolve to) the first other object
// defining the name.
const Object* library_of(std::uintptr_t target, const char* name) {
  const Object* at = object_at(target);
  if (at == nullptr || std::strncmp(base_name(at->name), "linux-vdso", 10) != 0) return at;
  for (std::size_t i = 0; i < g_object_count; ++i)
    if (&g_objects[i] != at && defines(g_objects[i], name)) return &g_objects[i];
  return at;
}

bool matches(const char* spec, const char* path) {
  if (std::strcmp(spec, "1") == 0) return true;
  const char* name = base_name(path);
  char pattern[256];
  for (const char* p = spec; *p != 0;) {
    const char* end = std::strchr(p, ':');
    const std::size_t n = end == nullptr ? std::strlen(p) : static_cast<std::size_t>(end - p);
    if (n != 0 && n < sizeof pattern) {
      std::memcpy(pattern, p, n);
      pattern[n] = 0;
      if (fnmatch(pattern, name, 0) == 0) return true;
    }
    if (end == nullptr) break;
    p = end + 1;
  }
  return false;
}

// True when the GOT value `got` of `o` is the loader's binding: an entry
// already bound (a -z now object, or a lazy one called before), not the
// object's own PLT (lazy binding still to come).
bool bound(const Object& o, std::uintptr_t got) {
  return got != 0 && (got < o.lo || got >= o.hi);
}

int read_counts(dl_phdr_info* info, std::size_t size, void* out) {
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<LoadCounts*>(out) = LoadCounts{info->dlpi_adds, info->dlpi_subs};
  return 1;
}

int read_adds(dl_phdr_info* info, std::size_t size, void* out) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
  return 1;  // the first object is enough
}

// True when the loader has relocated the object (glibc's _dl_find_object
// finds an object only from then on): a dlopen running on another thread
// may have mapped an object it has not relocated yet, whose GOT and RELRO
// the loader still writes.
bool relocated(const Object& o) {
#ifdef DLFO_STRUCT_HAS_EH_DBASE
  dl_find_object found;
  return _dl_find_object(reinterpret_cast<void*>(o.lo), &found) == 0;
#else
  (void)o;
  return true;
#endif
}

}  // namespace parlot::runtime::libcall
