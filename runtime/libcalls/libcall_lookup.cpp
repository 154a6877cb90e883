// The loader's lookups for unbound GOT entries, as the calling object
// (libcall_lookup.h).
#include "libcalls/libcall_lookup.h"

#include <dlfcn.h>

#include <cstring>

#include "libcalls/call_as_object.h"
#include "libcalls/libcall_stubs.h"
#include "next_symbol.h"

namespace parlot::runtime::libcall {
namespace {

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

// A copy of `text` in g_paths, or nullptr when it is full.
const char* keep_path(const char* text) {
  const std::size_t n = std::strlen(text) + 1;
  if (n > sizeof g_paths - g_paths_used) return nullptr;
  char* at = g_paths + g_paths_used;
  std::memcpy(at, text, n);
  g_paths_used += n;
  return at;
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

}  // namespace

void forget_lookups() {
  g_caller_count = 0;
  g_lookup_count = 0;
  g_paths_used = 0;
}

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

const Caller* ready(std::uintptr_t lo) {
  for (std::size_t k = 0; k < g_caller_count; ++k)
    if (g_callers[k].lo == lo) return g_callers[k].answered ? &g_callers[k] : nullptr;
  return nullptr;
}

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

}  // namespace parlot::runtime::libcall
