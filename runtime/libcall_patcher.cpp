// GOT patching for library-call tracing (libcall_patcher.h).
#include "libcall_patcher.h"

#include <dlfcn.h>
#include <elf.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "process_trace.h"

extern "C" char parlot_libcall_stubs[];  // libcall_trampolines.S: 16 bytes per stub

namespace parlot::runtime {

LibcallStub g_libcall_stubs[kLibcallStubs];
bool g_libcalls_on = false;
LibcallPatchCounts g_libcall_counts;

namespace {

constexpr std::size_t kStubBytes = 16;

// Never recorded: functions that return twice or switch stacks (a replaced
// return address would be saved and reused), that read their caller's
// return address to find the calling object (dlopen's search path and
// namespace, dlsym's RTLD_NEXT), the C library's start, the TLS resolver,
// the hooks themselves.
constexpr const char* kNeverPatched[] = {
    "setjmp",
    "_setjmp",
    "sigsetjmp",
    "__sigsetjmp",
    "savectx",
    "vfork",
    "getcontext",
    "setcontext",
    "swapcontext",
    "makecontext",
    "dlopen",
    "dlmopen",
    "dlsym",
    "dlvsym",
    "__libc_start_main",
    "__tls_get_addr",
    "__cyg_profile_func_enter",
    "__cyg_profile_func_exit",
    "__libc_dlopen_mode",
    "__libc_dlsym",
};

bool never_patched(const char* name) {
  if (std::strncmp(name, "_ZGV", 4) == 0) return true;  // vector ABI (ymm/zmm arguments)
  for (const char* n : kNeverPatched)
    if (std::strcmp(n, name) == 0) return true;
  return false;
}

// A loaded object and the parts of its dynamic section the patcher reads.
struct Object {
  std::uintptr_t bias = 0;
  const char* name = "";
  std::uintptr_t lo = 0, hi = 0;              // extent of its PT_LOAD segments
  std::uintptr_t relro_lo = 0, relro_hi = 0;  // PT_GNU_RELRO, page-aligned
  const ElfW(Sym) * symtab = nullptr;
  const char* strtab = nullptr;
  const ElfW(Rela) * jmprel = nullptr;
  std::size_t jmprel_count = 0;
  const ElfW(Rela) * rela = nullptr;
  std::size_t rela_count = 0;
  const ElfW(Half) * versym = nullptr;
  const ElfW(Verneed) * verneed = nullptr;
  std::size_t verneed_count = 0;
  const std::uint32_t* gnu_hash = nullptr;
  bool versioned = false;  // defines symbol versions (DT_VERDEF)
  bool bind_now = false;   // DF_BIND_NOW / DF_1_NOW: its GOT holds the loader's bindings
  bool instrumented = false;
  bool parlot = false;  // the runtime or the MPI wrappers (libparlotrt, libparlotmpi)
};

constexpr std::size_t kMaxObjects = 1024;
Object g_objects[kMaxObjects];
std::size_t g_object_count = 0;

const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash == nullptr ? path : slash + 1;
}

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

int collect_object(dl_phdr_info* info, std::size_t, void*) {
  if (g_object_count == kMaxObjects) return 1;
  Object o;
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

// The address of `name`'s dynamic symbol in `o` (GNU hash lookup): the
// resolved address itself, or for an IFUNC its resolver, which carries the
// name. 0 when not found.
std::uintptr_t symbol_address(const Object& o, const char* name, std::uintptr_t resolved) {
  if (o.gnu_hash == nullptr) return 0;
  const std::uint32_t nbuckets = o.gnu_hash[0], symoffset = o.gnu_hash[1];
  const std::uint32_t bloom_words = o.gnu_hash[2];
  if (nbuckets == 0) return 0;
  const auto* buckets = o.gnu_hash + 4 + bloom_words * (sizeof(ElfW(Addr)) / 4);
  const auto* chain = buckets + nbuckets;
  std::uint32_t hash = 5381;
  for (const char* c = name; *c != 0; ++c) hash = hash * 33 + static_cast<unsigned char>(*c);
  std::uint32_t i = buckets[hash % nbuckets];
  if (i < symoffset) return 0;
  std::uintptr_t ifunc = 0;
  for (;; ++i) {
    const std::uint32_t h = chain[i - symoffset];
    const ElfW(Sym)& s = o.symtab[i];
    if ((h | 1) == (hash | 1) && s.st_shndx != SHN_UNDEF &&
        std::strcmp(o.strtab + s.st_name, name) == 0) {
      const std::uintptr_t at = o.bias + s.st_value;
      if (at == resolved) return at;
      if (ELF64_ST_TYPE(s.st_info) == STT_GNU_IFUNC && ifunc == 0) ifunc = at;
    }
    if ((h & 1) != 0) break;
  }
  return ifunc;
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

// The stub for `target` (the same for every GOT entry leading there), or -1.
long stub_for(std::uintptr_t target, std::uintptr_t function) {
  for (std::size_t i = 0; i < g_libcall_counts.functions; ++i)
    if (g_libcall_stubs[i].target == target) return static_cast<long>(i);
  if (g_libcall_counts.functions == kLibcallStubs) return -1;
  g_libcall_stubs[g_libcall_counts.functions] = LibcallStub{target, function};
  return static_cast<long>(g_libcall_counts.functions++);
}

// The loader's answer for a name an unbound GOT entry asks for (dlsym and
// dlvsym, which take the loader's lock: asked between two looks at the
// objects, never inside one; see patch_unpatched_objects).
struct Resolved {
  const char* name;     // in g_names
  const char* version;  // in g_names, or nullptr
  std::uintptr_t address;
};
constexpr std::size_t kMaxResolved = 8192;
Resolved g_resolved[kMaxResolved];
std::size_t g_resolved_count = 0;
char g_names[256 * 1024];
std::size_t g_names_used = 0;
bool g_resolved_full = false;  // a name did not fit: patch again next round

bool same_text(const char* a, const char* b) {
  return a == b || (a != nullptr && b != nullptr && std::strcmp(a, b) == 0);
}

Resolved* find_resolved(const char* name, const char* version) {
  for (std::size_t i = 0; i < g_resolved_count; ++i)
    if (std::strcmp(g_resolved[i].name, name) == 0 && same_text(g_resolved[i].version, version))
      return &g_resolved[i];
  return nullptr;
}

// A copy of `text` in g_names, or nullptr when it is full.
const char* keep_text(const char* text) {
  const std::size_t n = std::strlen(text) + 1;
  if (g_names_used + n > sizeof g_names) return nullptr;
  char* at = g_names + g_names_used;
  std::memcpy(at, text, n);
  g_names_used += n;
  return at;
}

// Notes that `name` (with `version`) is to be resolved.
void want_resolved(const char* name, const char* version) {
  if (find_resolved(name, version) != nullptr) return;
  const char* n = keep_text(name);
  const char* v = version == nullptr ? nullptr : keep_text(version);
  if (g_resolved_count == kMaxResolved || n == nullptr || (version != nullptr && v == nullptr)) {
    g_resolved_full = true;
    return;
  }
  g_resolved[g_resolved_count++] = Resolved{n, v, 0};
}

// The loader's lookup for an unbound entry: the first object in the global
// scope defining the name (dlsym), and there the version the reference asks
// for (an object without symbol versions satisfies any). Uses only copies
// (g_resolved, g_objects' fields), not the objects' memory.
void resolve_wanted() {
  for (std::size_t i = 0; i < g_resolved_count; ++i) {
    Resolved& r = g_resolved[i];
    const auto first = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, r.name));
    const Object* defining = first == 0 ? nullptr : object_at(first);
    r.address = first;
    if (first != 0 && r.version != nullptr && defining != nullptr && defining->versioned)
      r.address = reinterpret_cast<std::uintptr_t>(dlvsym(RTLD_DEFAULT, r.name, r.version));
  }
}

// True when `value` is one of the entry stubs (an entry patched already).
bool is_stub(std::uintptr_t value) {
  const auto stubs = reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs);
  return value - stubs < kLibcallStubs * kStubBytes;
}

// Where the GOT entry `got` of `o` for symbol `sym` leads. An entry already
// bound (a -z now object, or a lazy one called before) holds the loader's
// own answer. Otherwise the answer resolve_wanted() found (0: not asked yet).
std::uintptr_t bound_target(const Object& o, std::size_t sym, const char* name,
                            std::uintptr_t got) {
  if (got != 0 && (got < o.lo || got >= o.hi)) return got;  // not the object's own PLT
  const Resolved* r = find_resolved(name, required_version(o, sym));
  return r == nullptr ? 0 : r->address;
}

// Phase 1 of patching `o`: the names of its unbound entries to resolve.
void want_names_of(const Object& o) {
  for (std::size_t r = 0; r < o.jmprel_count; ++r) {
    const ElfW(Rela)& rel = o.jmprel[r];
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT) continue;
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (sym == 0) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    if (never_patched(name)) continue;
    const std::uintptr_t got = *reinterpret_cast<std::uintptr_t*>(o.bias + rel.r_offset);
    if (got == 0 || (got >= o.lo && got < o.hi)) want_resolved(name, required_version(o, sym));
  }
}

void patch_object(const Object& o, const char* spec) {
  bool relro_writable = false;
  for (std::size_t r = 0; r < o.jmprel_count; ++r) {
    const ElfW(Rela)& rel = o.jmprel[r];
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT) continue;
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (sym == 0) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    if (never_patched(name)) continue;
    auto* entry = reinterpret_cast<std::uintptr_t*>(o.bias + rel.r_offset);
    if (is_stub(*entry)) continue;  // patched on an earlier round
    const std::uintptr_t target = bound_target(o, sym, name, *entry);
    if (target == 0) continue;
    const Object* defining = object_at(target);
    if (defining == nullptr || defining == &o || defining->instrumented || defining->parlot ||
        !matches(spec, defining->name[0] != 0 ? defining->name : "")) {
      continue;
    }
    std::uintptr_t function = symbol_address(*defining, name, target);
    if (function == 0) function = target;
    const long stub = stub_for(target, function);
    if (stub < 0) {
      ++g_libcall_counts.no_stub;
      continue;
    }
    const auto at = reinterpret_cast<std::uintptr_t>(entry);
    const bool in_relro = at >= o.relro_lo && at < o.relro_hi;
    if (in_relro && !relro_writable) {
      if (mprotect(reinterpret_cast<void*>(o.relro_lo), o.relro_hi - o.relro_lo,
                   PROT_READ | PROT_WRITE) != 0) {
        continue;
      }
      relro_writable = true;
    }
    __atomic_store_n(entry,
                     reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs) +
                         static_cast<std::uintptr_t>(stub) * kStubBytes,
                     __ATOMIC_RELEASE);
    ++g_libcall_counts.entries;
  }
  if (relro_writable)
    mprotect(reinterpret_cast<void*>(o.relro_lo), o.relro_hi - o.relro_lo, PROT_READ);
}

// The spec, and the loader's count of objects added when last looked at.
char g_spec[256];
unsigned long long g_adds_seen = 0;
pthread_mutex_t g_patch_lock = PTHREAD_MUTEX_INITIALIZER;

int read_adds(dl_phdr_info* info, std::size_t size, void* out) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
  return 1;  // the first object is enough
}

// The loader's counts of objects added and removed.
struct LoadCounts {
  unsigned long long adds = 0, subs = 0;
  bool operator==(const LoadCounts&) const = default;
};

int read_counts(dl_phdr_info* info, std::size_t size, void* out) {
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<LoadCounts*>(out) = LoadCounts{info->dlpi_adds, info->dlpi_subs};
  return 1;
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

// Runs `f()` while the loader can neither add nor remove an object: inside
// a dl_iterate_phdr callback (glibc holds the lock of its list of objects
// there, and unmaps an object only with it held). `f` must not call into
// the loader (dlsym takes the loader's main lock: lock order).
template <class F>
void with_objects_pinned(F& f) {
  dl_iterate_phdr(
      [](dl_phdr_info*, std::size_t, void* p) {
        (*static_cast<F*>(p))();
        return 1;
      },
      &f);
}

// Patches the instrumented objects loaded since the last call: only while
// they are mapped and relocated, without calling the loader while its list
// is held. Phase 1 (list held): the names their unbound entries need.
// Phase 2: dlsym them. Phase 3 (list held, nothing loaded or unloaded since
// phase 1, so the addresses found lie in the same objects): patch. Returns
// false when an object was left for a later call (the list changed, an
// object not relocated yet, too many names). Called with g_patch_lock held.
bool patch_unpatched_objects() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    LoadCounts before, after;
    g_resolved_count = 0;
    g_names_used = 0;
    g_resolved_full = false;
    auto want = [&] {
      dl_iterate_phdr(read_counts, &before);
      g_object_count = 0;
      dl_iterate_phdr(collect_object, nullptr);
      for (std::size_t i = 0; i < g_object_count; ++i)
        if (g_objects[i].instrumented && relocated(g_objects[i])) want_names_of(g_objects[i]);
    };
    with_objects_pinned(want);
    resolve_wanted();
    bool complete = !g_resolved_full;
    auto patch = [&] {
      dl_iterate_phdr(read_counts, &after);
      if (!(after == before)) return;
      g_object_count = 0;
      dl_iterate_phdr(collect_object, nullptr);
      for (std::size_t i = 0; i < g_object_count; ++i) {
        const Object& o = g_objects[i];
        if (!o.instrumented) continue;
        if (!relocated(o)) {
          complete = false;
          continue;
        }
        patch_object(o, g_spec);
      }
    };
    with_objects_pinned(patch);
    if (after == before) return complete;
  }
  return false;
}

}  // namespace

void patch_library_calls(const char* spec) {
  if (spec == nullptr || spec[0] == 0 || std::strcmp(spec, "0") == 0) return;
  if (std::strlen(spec) >= sizeof g_spec) return;
  IgnoreHooksOnThisThread quiet;  // dlsym may call an instrumented malloc
  pthread_mutex_lock(&g_patch_lock);
  std::strcpy(g_spec, spec);
  dl_iterate_phdr(read_adds, &g_adds_seen);
  patch_unpatched_objects();
  g_libcalls_on = true;
  pthread_mutex_unlock(&g_patch_lock);
}

bool instrumented_object_loaded() {
  pthread_mutex_lock(&g_patch_lock);
  g_object_count = 0;
  dl_iterate_phdr(collect_object, nullptr);
  bool found = false;
  for (std::size_t i = 0; i < g_object_count && !found; ++i) found = g_objects[i].instrumented;
  pthread_mutex_unlock(&g_patch_lock);
  return found;
}

void patch_library_calls_of_new_objects() {
  if (!g_libcalls_on) return;
  unsigned long long adds = 0;
  dl_iterate_phdr(read_adds, &adds);
  if (adds == __atomic_load_n(&g_adds_seen, __ATOMIC_RELAXED)) return;
  pthread_mutex_lock(&g_patch_lock);
  // Seen only once every object was patched (else again next round).
  if (patch_unpatched_objects()) __atomic_store_n(&g_adds_seen, adds, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_patch_lock);
}

namespace {
// Before main and before the program's own constructors (the runtime is
// initialised before the objects that depend on it).
[[gnu::constructor(102)]] void patch_library_calls_at_start() {
  patch_library_calls(std::getenv("PARLOT_LIBCALLS"));
}
}  // namespace

}  // namespace parlot::runtime
