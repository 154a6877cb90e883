// GOT patching for library-call tracing (libcall_patcher.h).
#include "libcall_patcher.h"

#include <dlfcn.h>
#include <elf.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "call_as_object.h"
#include "errno_keeper.h"
#include "next_symbol.h"
#include "parlot/format.h"
#include "process_trace.h"
#include "raw_io.h"

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
// namespace, dlsym's RTLD_DEFAULT and RTLD_NEXT), the C library's start,
// the TLS resolver, the hooks themselves.
struct NeverPatched {
  const char* name;
  LibcallLeft reason;
};
constexpr NeverPatched kNeverPatched[] = {
    {"setjmp", LibcallLeft::kReturnsTwice},
    {"_setjmp", LibcallLeft::kReturnsTwice},
    {"sigsetjmp", LibcallLeft::kReturnsTwice},
    {"__sigsetjmp", LibcallLeft::kReturnsTwice},
    {"savectx", LibcallLeft::kReturnsTwice},
    {"vfork", LibcallLeft::kReturnsTwice},
    {"getcontext", LibcallLeft::kReturnsTwice},
    {"setcontext", LibcallLeft::kReturnsTwice},
    {"swapcontext", LibcallLeft::kReturnsTwice},
    {"makecontext", LibcallLeft::kReturnsTwice},
    {"dlopen", LibcallLeft::kReadsCaller},
    {"dlmopen", LibcallLeft::kReadsCaller},
    {"dlsym", LibcallLeft::kReadsCaller},
    {"dlvsym", LibcallLeft::kReadsCaller},
    {"__libc_dlopen_mode", LibcallLeft::kReadsCaller},
    {"__libc_dlsym", LibcallLeft::kReadsCaller},
    {"__libc_start_main", LibcallLeft::kNeverOther},
    {"__tls_get_addr", LibcallLeft::kNeverOther},
    {"__cyg_profile_func_enter", LibcallLeft::kNeverOther},
    {"__cyg_profile_func_exit", LibcallLeft::kNeverOther},
};

// Why `name` is never patched, or LibcallLeft::kCount when it may be.
LibcallLeft never_patched(const char* name) {
  if (std::strncmp(name, "_ZGV", 4) == 0) return LibcallLeft::kNeverOther;  // vector ABI
  for (const NeverPatched& n : kNeverPatched)
    if (std::strcmp(n.name, name) == 0) return n.reason;
  return LibcallLeft::kCount;
}

bool is_hook(const char* name) {
  return std::strncmp(name, "__cyg_profile_func_", 19) == 0;
}

void count_left(LibcallLeft reason) {
  ++g_libcall_counts.left[static_cast<unsigned>(reason)];
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
  bool parlot = false;         // the runtime or the MPI wrappers (libparlotrt, libparlotmpi)
  bool audit = false;          // names an audit module (DT_AUDIT, DT_DEPAUDIT)
  bool main = false;           // the program itself (listed first): never unloaded
  std::uintptr_t dynamic = 0;  // its PT_DYNAMIC (link_map::l_ld)
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

// Names of stubs: symbol, version and library strings, copied (an object
// may be unloaded while its stubs are still named).
char g_name_pool[1 << 20];
std::size_t g_name_pool_used = 0;

const char* pooled(const char* s) {
  for (std::size_t i = 0; i < g_libcall_counts.functions; ++i) {
    const LibcallStub& stub = g_libcall_stubs[i];
    for (const char* known : {stub.name, stub.version, stub.library})
      if (std::strcmp(known, s) == 0) return known;
  }
  const std::size_t n = std::strlen(s) + 1;
  if (n > sizeof g_name_pool - g_name_pool_used) return nullptr;
  char* copy = g_name_pool + g_name_pool_used;
  std::memcpy(copy, s, n);
  g_name_pool_used += n;
  return copy;
}

std::uintptr_t stub_address(std::size_t i) {
  return reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs) + i * kStubBytes;
}

// The stub of symbol `name` (`version`, "" for none) bound to `target`: the
// same for every GOT entry with that symbol and target, or -1 when all are
// taken.
long stub_for(std::uintptr_t target, const char* name, const char* version, const char* library) {
  for (std::size_t i = 0; i < g_libcall_counts.functions; ++i) {
    const LibcallStub& s = g_libcall_stubs[i];
    if (s.target == target && std::strcmp(s.name, name) == 0 &&
        std::strcmp(s.version, version) == 0)
      return static_cast<long>(i);
  }
  if (g_libcall_counts.functions == kLibcallStubs) return -1;
  const char* n = pooled(name);
  const char* v = pooled(version);
  const char* l = pooled(library);
  if (n == nullptr || v == nullptr || l == nullptr) return -1;
  const std::size_t i = g_libcall_counts.functions;
  g_libcall_stubs[i] = LibcallStub{target, stub_address(i), n, v, l};
  // Published before any GOT entry leads to the stub (release store there).
  __atomic_store_n(&g_libcall_counts.functions, i + 1, __ATOMIC_RELEASE);
  return static_cast<long>(i);
}

// The loader's lookups for the unbound GOT entries of the objects being
// patched, done as each object would do them (docs/DESIGN.md "Library
// calls"). The loader may neither be called while its list of objects is
// held (dlsym takes its main lock: lock order) nor let an object be read
// outside such a hold (another thread's dlclose may unmap it), so a pass
// notes the lookups inside a hold (want_lookups_of), runs them outside it
// with the object pinned (run_lookups), and uses the answers inside the
// next hold, only if no object was loaded or unloaded in between
// (patch_unpatched_objects).

// An object to patch in this pass, and the lookups its unbound entries
// need. Its strings are read only while it is pinned (run_lookups) or held.
struct Caller {
  std::uintptr_t lo = 0;             // Object::lo
  std::uintptr_t bias = 0;           // Object::bias, link_map::l_addr
  std::uintptr_t dynamic = 0;        // Object::dynamic, link_map::l_ld
  std::uintptr_t ret = 0;            // a `ret` byte in its code (call_as_object.h), or 0
  const char* path = nullptr;        // a copy of its name (g_paths), for the pin
  bool main = false;                 // never unloaded: no pin needed
  bool fits = true;                  // its lookups fit in g_lookups
  bool answered = false;             // every lookup run (none needed, or pinned and run)
  std::size_t first = 0, count = 0;  // its lookups in g_lookups, by relocation index
};

// One unbound JUMP_SLOT entry's lookup: relocation `reloc` of a Caller.
struct Lookup {
  std::size_t reloc;
  const char* name;        // in the caller's string table
  const char* version;     // the version the reference asks for, or nullptr
  std::uintptr_t address;  // the loader's answer, 0 when none
};

constexpr std::size_t kMaxLookups = 8192;
Caller g_callers[kMaxObjects];
std::size_t g_caller_count = 0;
Lookup g_lookups[kMaxLookups];
std::size_t g_lookup_count = 0;
char g_paths[256 * 1024];
std::size_t g_paths_used = 0;

void forget_lookups() {
  g_caller_count = 0;
  g_lookup_count = 0;
  g_paths_used = 0;
}

// A copy of `text` in g_paths, or nullptr when it is full.
const char* keep_path(const char* text) {
  const std::size_t n = std::strlen(text) + 1;
  if (n > sizeof g_paths - g_paths_used) return nullptr;
  char* at = g_paths + g_paths_used;
  std::memcpy(at, text, n);
  g_paths_used += n;
  return at;
}

// True when the GOT value `got` of `o` is the loader's binding: an entry
// already bound (a -z now object, or a lazy one called before), not the
// object's own PLT (lazy binding still to come).
bool bound(const Object& o, std::uintptr_t got) {
  return got != 0 && (got < o.lo || got >= o.hi);
}

bool in_parlot_stubs(std::uintptr_t value);

// Notes `o` as to be patched in this pass (the object held), with the
// lookups its unbound entries need; entries patched already and the hooks
// need none. When they do not fit, `o` is left for a later pass.
void want_lookups_of(const Object& o) {
  if (g_caller_count == kMaxObjects) return;
  Caller c;
  c.lo = o.lo;
  c.bias = o.bias;
  c.dynamic = o.dynamic;
  c.main = o.main;
  c.first = g_lookup_count;
  for (std::size_t r = 0; r < o.jmprel_count && c.fits; ++r) {
    const ElfW(Rela)& rel = o.jmprel[r];
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT || sym == 0) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    if (is_hook(name)) continue;
    const auto got = *reinterpret_cast<const std::uintptr_t*>(o.bias + rel.r_offset);
    if (bound(o, got) || in_parlot_stubs(got)) continue;
    if (g_lookup_count == kMaxLookups) {
      c.fits = false;
      break;
    }
    g_lookups[g_lookup_count++] = Lookup{r, name, required_version(o, sym), 0};
  }
  c.count = g_lookup_count - c.first;
  if (c.fits && c.count != 0) {
    c.path = keep_path(o.name);
    c.fits = c.path != nullptr;
    c.ret = ret_instruction_in(o.lo);
  }
  if (!c.fits) {
    g_lookup_count = c.first;
    c.count = 0;
  }
  g_callers[g_caller_count++] = c;
}

// The real dlmopen and dlclose (not the runtime's interposer, which would
// start a pass of its own).
using Dlmopen = void* (*)(Lmid_t, const char*, int);
using Dlclose = int (*)(void*);
Dlmopen g_real_dlmopen = nullptr;
Dlclose g_real_dlclose = nullptr;

// A handle that keeps caller `c` loaded (its reference count raised), or
// nullptr when it is no longer loaded. The loader is asked for the object
// by its name in each link-map namespace (RTLD_NOLOAD: never loads), and
// the answer kept only when it is `c` itself (same load address and
// dynamic section). If the program's dlclose of the object comes while the
// handle is held, the object is unloaded at unpin() instead, on this thread.
void* pin(const Caller& c) {
  next_symbol(g_real_dlmopen, "dlmopen");
  if (g_real_dlmopen == nullptr || c.path[0] == 0) return nullptr;
  constexpr Lmid_t kNamespaces = 16;  // glibc's DL_NNS
  for (Lmid_t ns = 0; ns < kNamespaces; ++ns) {
    void* handle = g_real_dlmopen(ns, c.path, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) {
      dlerror();  // the program's dlerror() stays as it was
      continue;
    }
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_addr == c.bias &&
        reinterpret_cast<std::uintptr_t>(map->l_ld) == c.dynamic) {
      return handle;
    }
    dlerror();
    next_symbol(g_real_dlclose, "dlclose")(handle);
  }
  return nullptr;
}

void unpin(void* handle) {
  if (handle != nullptr) next_symbol(g_real_dlclose, "dlclose")(handle);
}

// dlsym(RTLD_DEFAULT, name), or dlvsym with `version`, as caller `c` would
// call it (its return address a `ret` in c's code): the loader then
// searches c's own lookup scope, as it does to bind c's PLT entries (an
// RTLD_DEEPBIND object's own scope first, an RTLD_LOCAL group,
// DT_SYMBOLIC, another link-map namespace). 0 when not found; a failed
// lookup's error is cleared. `c` must be pinned.
std::uintptr_t lookup_as(const Caller& c, const char* name, const char* version) {
  const auto handle = reinterpret_cast<std::uintptr_t>(RTLD_DEFAULT);
  const auto n = reinterpret_cast<std::uintptr_t>(name);
  std::uintptr_t found;
  if (c.ret == 0) {
    found = reinterpret_cast<std::uintptr_t>(
        version == nullptr ? dlsym(RTLD_DEFAULT, name) : dlvsym(RTLD_DEFAULT, name, version));
  } else if (version == nullptr) {
    found = parlot_call_as_object(reinterpret_cast<const void*>(&dlsym), c.ret, handle, n, 0);
  } else {
    found = parlot_call_as_object(reinterpret_cast<const void*>(&dlvsym), c.ret, handle, n,
                                  reinterpret_cast<std::uintptr_t>(version));
  }
  if (found == 0) dlerror();
  return found;
}

// Runs the noted lookups (no object held; g_objects' copied fields only,
// the callers' strings while each is pinned): the first definition in the
// caller's lookup scope, and the version the reference asks for where the
// defining object has versions (one without versions satisfies any).
void run_lookups() {
  for (std::size_t k = 0; k < g_caller_count; ++k) {
    Caller& c = g_callers[k];
    if (!c.fits) continue;
    if (c.count == 0) {
      c.answered = true;
      continue;
    }
    void* handle = c.main ? nullptr : pin(c);
    if (!c.main && handle == nullptr) continue;  // unloaded (or not found): left
    for (std::size_t i = c.first; i < c.first + c.count; ++i) {
      Lookup& l = g_lookups[i];
      l.address = lookup_as(c, l.name, nullptr);
      if (l.address == 0 || l.version == nullptr) continue;
      const Object* defining = object_at(l.address);
      if (defining != nullptr && defining->versioned) l.address = lookup_as(c, l.name, l.version);
    }
    c.answered = true;
    unpin(handle);
  }
}

// The pass's record of the object at `lo` when it is to be patched now:
// noted in this pass's first hold, every lookup answered; else nullptr.
const Caller* ready(std::uintptr_t lo) {
  for (std::size_t k = 0; k < g_caller_count; ++k)
    if (g_callers[k].lo == lo) return g_callers[k].answered ? &g_callers[k] : nullptr;
  return nullptr;
}

// Where relocation `r` of `o` (GOT value `got`) leads: the bound GOT value,
// else the answer run_lookups() found for it in `c`, o's record. 0 when
// there is no definition (an undefined weak function).
std::uintptr_t bound_target(const Object& o, const Caller& c, std::size_t r, std::uintptr_t got) {
  if (bound(o, got)) return got;
  std::size_t lo = c.first, hi = c.first + c.count;  // by relocation index
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (g_lookups[mid].reloc < r) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < c.first + c.count && g_lookups[lo].reloc == r ? g_lookups[lo].address : 0;
}

bool in_parlot_stubs(std::uintptr_t value) {
  const auto base = reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs);
  return value - base < kLibcallStubs * kStubBytes;
}

// True when `target` lies in an object whose calls are recorded: an
// uninstrumented one other than `o` and Parlot's, matching the spec.
bool recorded_library(const Object& o, const Object* library, const char* spec) {
  return library != nullptr && library != &o && !library->instrumented && !library->parlot &&
         matches(spec, library->name[0] != 0 ? library->name : "");
}

// Counts o's GLOB_DAT relocations of functions in recorded libraries:
// function pointers and -fno-plt calls, which cannot be patched (`&f`
// must keep its value).
void count_function_pointers(const Object& o, const char* spec) {
  for (std::size_t r = 0; r < o.rela_count; ++r) {
    const ElfW(Rela)& rel = o.rela[r];
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_GLOB_DAT || sym == 0) continue;
    const unsigned type = ELF64_ST_TYPE(o.symtab[sym].st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    const auto value = *reinterpret_cast<const std::uintptr_t*>(o.bias + rel.r_offset);
    if (value != 0 && recorded_library(o, library_of(value, name), spec))
      count_left(LibcallLeft::kGlobDat);
  }
}

// Counts o's JUMP_SLOT entries into recorded libraries as left for `reason`
// (an audit module is active). `c`: o's record in this pass.
void count_all_left(const Object& o, const Caller& c, const char* spec, LibcallLeft reason) {
  for (std::size_t r = 0; r < o.jmprel_count; ++r) {
    const ElfW(Rela)& rel = o.jmprel[r];
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT || sym == 0) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    if (is_hook(name)) continue;
    const auto got = *reinterpret_cast<const std::uintptr_t*>(o.bias + rel.r_offset);
    const std::uintptr_t target = bound_target(o, c, r, got);
    if (target != 0 && recorded_library(o, library_of(target, name), spec)) count_left(reason);
  }
  count_function_pointers(o, spec);
}

// Patches o's JUMP_SLOT entries into recorded libraries (o held; `c`: its
// record in this pass). Entries already holding a stub are left as they
// are. Returns the number of entries patched.
std::size_t patch_object(const Object& o, const Caller& c, const char* spec) {
  bool relro_writable = false, relro_failed = false;
  std::size_t patched = 0;
  for (std::size_t r = 0; r < o.jmprel_count; ++r) {
    const ElfW(Rela)& rel = o.jmprel[r];
    if (ELF64_R_TYPE(rel.r_info) != R_X86_64_JUMP_SLOT) continue;
    const std::size_t sym = ELF64_R_SYM(rel.r_info);
    if (sym == 0) continue;
    const char* name = o.strtab + o.symtab[sym].st_name;
    if (is_hook(name)) continue;
    auto* entry = reinterpret_cast<std::uintptr_t*>(o.bias + rel.r_offset);
    if (in_parlot_stubs(*entry)) continue;  // patched already
    const std::uintptr_t target = bound_target(o, c, r, *entry);
    if (target == 0) continue;  // no definition (an undefined weak function)
    const Object* defining = object_at(target);
    const LibcallLeft never = never_patched(name);
    if (defining != nullptr && defining->parlot && defining != &o) {
      // Interposed by Parlot (sigaction, exit, dlopen, ...): not a call the
      // program makes into a library, unless it is one that is never patched.
      count_left(never != LibcallLeft::kCount ? never : LibcallLeft::kInterposed);
      continue;
    }
    const Object* library = library_of(target, name);
    if (!recorded_library(o, library, spec)) continue;
    if (never != LibcallLeft::kCount) {
      count_left(never);
      continue;
    }
    const char* version = required_version(o, sym);
    const long stub = stub_for(target, name, version != nullptr ? version : "",
                               library->name[0] != 0 ? library->name : "");
    if (stub < 0) {
      count_left(LibcallLeft::kNoStub);
      continue;
    }
    const auto at = reinterpret_cast<std::uintptr_t>(entry);
    const bool in_relro = at >= o.relro_lo && at < o.relro_hi;
    if (in_relro && !relro_writable) {
      if (relro_failed || mprotect(reinterpret_cast<void*>(o.relro_lo), o.relro_hi - o.relro_lo,
                                   PROT_READ | PROT_WRITE) != 0) {
        relro_failed = true;
        count_left(LibcallLeft::kNotWritable);
        continue;
      }
      relro_writable = true;
    }
    __atomic_store_n(entry, stub_address(static_cast<std::size_t>(stub)), __ATOMIC_RELEASE);
    ++patched;
  }
  if (relro_writable)
    mprotect(reinterpret_cast<void*>(o.relro_lo), o.relro_hi - o.relro_lo, PROT_READ);
  count_function_pointers(o, spec);
  g_libcall_counts.entries += patched;
  if (patched != 0) ++g_libcall_counts.objects;
  return patched;
}

// Objects patched, by the lowest address of their segments and their name's
// hash, with the number of entries patched. A record whose object is no
// longer loaded is dropped at the next pass; an object loaded again where
// a patched one was (dlclose, then dlopen) has a fresh GOT: when none of
// its entries leads to a stub it is patched again.
struct Patched {
  std::uintptr_t lo;
  std::uint64_t name_hash;
  std::size_t entries;
};
Patched g_patched[kMaxObjects];
std::size_t g_patched_count = 0;
char g_spec[256];
bool g_audit = false;  // an audit module is active: nothing is patched
unsigned long long g_adds_seen = 0;
pthread_mutex_t g_patch_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> g_record_wanted{false};

std::uint64_t name_hash(const char* s) {
  std::uint64_t h = 14695981039346656037ull;
  for (; *s != 0; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}

bool leads_to_a_stub(const Object& o) {
  for (std::size_t r = 0; r < o.jmprel_count; ++r) {
    if (ELF64_R_TYPE(o.jmprel[r].r_info) != R_X86_64_JUMP_SLOT) continue;
    if (in_parlot_stubs(*reinterpret_cast<const std::uintptr_t*>(o.bias + o.jmprel[r].r_offset)))
      return true;
  }
  return false;
}

// The record of `o` when it was patched before and still is, else nullptr.
Patched* patched_record(const Object& o, std::uint64_t hash) {
  for (std::size_t i = 0; i < g_patched_count; ++i) {
    Patched& p = g_patched[i];
    if (p.lo == o.lo && p.name_hash == hash)
      return p.entries == 0 || leads_to_a_stub(o) ? &p : nullptr;
  }
  return nullptr;
}

// Drops the records of objects no longer loaded.
void forget_unloaded_objects() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < g_patched_count; ++i) {
    bool loaded = false;
    for (std::size_t k = 0; k < g_object_count && !loaded; ++k)
      loaded = g_objects[k].lo == g_patched[i].lo &&
               name_hash(g_objects[k].name) == g_patched[i].name_hash;
    if (loaded) g_patched[kept++] = g_patched[i];
  }
  g_patched_count = kept;
}

int read_adds(dl_phdr_info* info, std::size_t size, void* out) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
    *static_cast<unsigned long long*>(out) = info->dlpi_adds;
  return 1;  // the first object is enough
}

bool audit_active() {
  const char* audit = std::getenv("LD_AUDIT");
  if (audit != nullptr && audit[0] != 0) return true;
  for (std::size_t i = 0; i < g_object_count; ++i)
    if (g_objects[i].audit) return true;
  return false;
}

// The `libcalls` file (docs/FORMAT.md). Called with g_patch_lock held.
void write_record_locked() {
  if (g_spec[0] == 0) return;
  static char buf[2 << 20];
  TextBuilder t(buf, sizeof buf);
  t.str(format::kLibcallsMagicLine).ch('\n');
  t.str("patched ").u64(g_libcall_counts.entries).ch(' ').u64(g_libcall_counts.objects).ch('\n');
  for (unsigned r = 0; r < static_cast<unsigned>(LibcallLeft::kCount); ++r) {
    if (g_libcall_counts.left[r] == 0) continue;
    t.str("left ").str(libcall_left_key(static_cast<LibcallLeft>(r))).ch(' ');
    t.u64(g_libcall_counts.left[r]).ch('\n');
  }
  const std::size_t n = __atomic_load_n(&g_libcall_counts.functions, __ATOMIC_ACQUIRE);
  for (std::size_t i = 0; i < n; ++i) {
    const LibcallStub& s = g_libcall_stubs[i];
    const std::size_t len = std::strlen(s.name) + std::strlen(s.version) + std::strlen(s.library);
    if (t.size() + 4 * len + 64 > sizeof buf) break;  // never a line cut short
    t.str("stub ").hex(s.function).ch(' ').hex(s.target).ch(' ');
    t.escaped(s.name, std::strlen(s.name)).ch(' ');
    if (s.version[0] != 0) {
      t.escaped(s.version, std::strlen(s.version));
    } else {
      t.ch('-');
    }
    t.ch(' ').escaped(s.library, std::strlen(s.library)).ch('\n');
  }
  write_process_file("libcalls", t.data(), t.size());
}

// Writes the record when asked (write_libcall_record) and no pass runs.
void write_record_if_wanted() {
  while (g_record_wanted.load() && pthread_mutex_trylock(&g_patch_lock) == 0) {
    g_record_wanted.store(false);
    write_record_locked();
    pthread_mutex_unlock(&g_patch_lock);
  }
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
void with_objects_held(F& f) {
  dl_iterate_phdr(
      [](dl_phdr_info*, std::size_t, void* p) {
        (*static_cast<F*>(p))();
        return 1;
      },
      &f);
}

// Lists the loaded objects in g_objects and drops the records of those
// unloaded (the objects held).
void collect_objects() {
  g_object_count = 0;
  dl_iterate_phdr(collect_object, nullptr);
  forget_unloaded_objects();
}

// Patches the instrumented objects loaded since the last pass (and those
// loaded again), then rewrites the record if anything changed: only while
// they are mapped and relocated, never calling the loader while its list is
// held. Hold 1: the objects to patch and the lookups they need. Then the
// lookups, each object's as that object (run_lookups). Hold 2, only when
// nothing was loaded or unloaded since hold 1 (so the answers are about the
// same objects): patch. Returns false when an object was left for a later
// pass (the list kept changing, an object not relocated yet, too many
// lookups, an object that could not be pinned). Called with g_patch_lock held.
bool patch_unpatched_objects() {
  for (int attempt = 0; attempt < 3; ++attempt) {
    LoadCounts before, after;
    forget_lookups();
    auto want = [&] {
      dl_iterate_phdr(read_counts, &before);
      collect_objects();
      for (std::size_t i = 0; i < g_object_count; ++i) {
        const Object& o = g_objects[i];
        if (o.instrumented && patched_record(o, name_hash(o.name)) == nullptr && relocated(o))
          want_lookups_of(o);
      }
    };
    with_objects_held(want);
    run_lookups();
    bool complete = true, changed = false;
    auto patch = [&] {
      dl_iterate_phdr(read_counts, &after);
      if (!(after == before)) return;
      collect_objects();
      for (std::size_t i = 0; i < g_object_count; ++i) {
        const Object& o = g_objects[i];
        if (!o.instrumented) continue;
        const std::uint64_t hash = name_hash(o.name);
        if (patched_record(o, hash) != nullptr) continue;
        const Caller* c = ready(o.lo);
        if (c == nullptr) {
          complete = false;
          continue;
        }
        changed = true;
        std::size_t entries = 0;
        if (g_audit) {
          count_all_left(o, *c, g_spec, LibcallLeft::kAudit);
        } else {
          entries = patch_object(o, *c, g_spec);
        }
        // A record to update (the object was loaded again), else a new one.
        Patched* p = nullptr;
        for (std::size_t k = 0; k < g_patched_count && p == nullptr; ++k)
          if (g_patched[k].lo == o.lo && g_patched[k].name_hash == hash) p = &g_patched[k];
        if (p == nullptr && g_patched_count < kMaxObjects) p = &g_patched[g_patched_count++];
        if (p != nullptr) *p = Patched{o.lo, hash, entries};
      }
    };
    with_objects_held(patch);
    if (changed) write_record_locked();
    if (after == before) return complete;
  }
  return false;
}

}  // namespace

const char* libcall_left_key(LibcallLeft reason) {
  switch (reason) {
    case LibcallLeft::kGlobDat:
      return "glob_dat";
    case LibcallLeft::kReturnsTwice:
      return "returns_twice";
    case LibcallLeft::kReadsCaller:
      return "reads_caller";
    case LibcallLeft::kNeverOther:
      return "never_patched";
    case LibcallLeft::kInterposed:
      return "interposed";
    case LibcallLeft::kNoStub:
      return "no_stub";
    case LibcallLeft::kNotWritable:
      return "not_writable";
    case LibcallLeft::kAudit:
      return "audit";
    case LibcallLeft::kCount:
      break;
  }
  return "other";
}

bool libcall_stub_names(std::uintptr_t address, const char** name, const char** library) {
  if (!in_parlot_stubs(address)) return false;
  const std::size_t i = (address - stub_address(0)) / kStubBytes;
  if (i >= __atomic_load_n(&g_libcall_counts.functions, __ATOMIC_ACQUIRE)) return false;
  *name = g_libcall_stubs[i].name;
  *library = g_libcall_stubs[i].library;
  return true;
}

void write_libcall_record() {
  if (g_spec[0] == 0) return;
  g_record_wanted.store(true);
  write_record_if_wanted();
}

void patch_library_calls(const char* spec) {
  if (spec == nullptr || spec[0] == 0 || std::strcmp(spec, "0") == 0) return;
  if (std::strlen(spec) >= sizeof g_spec) return;
  const ErrnoKeeper keep_errno;
  IgnoreHooksOnThisThread quiet;  // dlsym may call an instrumented malloc
  pthread_mutex_lock(&g_patch_lock);
  if (g_spec[0] == 0) {
    // A fork child's patching must not wait for a pass of a thread the
    // child does not have (the idle flusher's).
    pthread_atfork(nullptr, nullptr, [] { pthread_mutex_init(&g_patch_lock, nullptr); });
    std::strcpy(g_spec, spec);
    g_object_count = 0;
    dl_iterate_phdr(collect_object, nullptr);
    g_audit = audit_active();
  }
  unsigned long long adds = 0;
  dl_iterate_phdr(read_adds, &adds);
  // Seen only once every object was patched (else again at the flusher's
  // next round).
  if (patch_unpatched_objects()) __atomic_store_n(&g_adds_seen, adds, __ATOMIC_RELAXED);
  g_libcalls_on = !g_audit;
  pthread_mutex_unlock(&g_patch_lock);
  write_record_if_wanted();
}

void patch_library_calls_at_first_event() {
  patch_library_calls(std::getenv("PARLOT_LIBCALLS"));
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

bool patch_library_calls_of_new_objects() {
  if (g_spec[0] == 0) return true;
  unsigned long long adds = 0;
  dl_iterate_phdr(read_adds, &adds);
  if (adds == __atomic_load_n(&g_adds_seen, __ATOMIC_RELAXED)) return true;
  const ErrnoKeeper keep_errno;
  IgnoreHooksOnThisThread quiet;
  if (pthread_mutex_trylock(&g_patch_lock) != 0) return false;
  if (patch_unpatched_objects()) __atomic_store_n(&g_adds_seen, adds, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&g_patch_lock);
  write_record_if_wanted();
  return true;
}

namespace {
// Before main and before the program's own constructors (the runtime is
// initialised before the objects that depend on it); when instrumented code
// runs earlier, its first event patches (patch_library_calls_at_first_event).
[[gnu::constructor(102)]] void patch_library_calls_at_start() {
  patch_library_calls(std::getenv("PARLOT_LIBCALLS"));
}
}  // namespace

}  // namespace parlot::runtime
