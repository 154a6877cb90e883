// The loaded objects as the library-call patcher sees them
// (libcall_patcher.h): each object's extent and the parts of its dynamic
// section it reads (the ELF relocation walk), found with dl_iterate_phdr,
// and the loader's state they may be read in. An object's memory may be
// read only while the loader's list of objects is held
// (with_objects_held()): another thread's dlclose may unmap it otherwise.
#pragma once

#include <elf.h>
#include <link.h>

#include <cstddef>
#include <cstdint>

namespace parlot::runtime::libcall {

/// A loaded object and the parts of its dynamic section the patcher reads.
/// The pointers point into the object: valid while it is held or pinned.
struct Object {
  std::uintptr_t bias = 0;                    ///< load bias (link_map::l_addr)
  const char* name = "";                      ///< its path (the loader's string)
  std::uintptr_t lo = 0, hi = 0;              ///< extent of its PT_LOAD segments
  std::uintptr_t relro_lo = 0, relro_hi = 0;  ///< PT_GNU_RELRO, page-aligned
  const ElfW(Sym) * symtab = nullptr;         ///< DT_SYMTAB
  const char* strtab = nullptr;               ///< DT_STRTAB
  const ElfW(Rela) * jmprel = nullptr;        ///< DT_JMPREL: the PLT's relocations
  std::size_t jmprel_count = 0;
  const ElfW(Rela) * rela = nullptr;  ///< DT_RELA: the other relocations
  std::size_t rela_count = 0;
  const ElfW(Half) * versym = nullptr;      ///< DT_VERSYM
  const ElfW(Verneed) * verneed = nullptr;  ///< DT_VERNEED
  std::size_t verneed_count = 0;            ///< DT_VERNEEDNUM
  const std::uint32_t* gnu_hash = nullptr;  ///< DT_GNU_HASH
  bool versioned = false;                   ///< defines symbol versions (DT_VERDEF)
  bool bind_now = false;       ///< DF_BIND_NOW / DF_1_NOW: its GOT holds the loader's bindings
  bool instrumented = false;   ///< references __cyg_profile_func_enter
  bool parlot = false;         ///< the runtime or the MPI wrappers (libparlotrt, libparlotmpi)
  bool audit = false;          ///< names an audit module (DT_AUDIT, DT_DEPAUDIT)
  bool main = false;           ///< the program itself (listed first): never unloaded
  std::uintptr_t dynamic = 0;  ///< its PT_DYNAMIC (link_map::l_ld)
};

/// Capacity of g_objects.
inline constexpr std::size_t kMaxObjects = 1024;
/// The objects the last collect_object() walk listed (in the loader's
/// order), and their number. Written with the patcher's lock held.
extern Object g_objects[kMaxObjects];
extern std::size_t g_object_count;

/// dl_iterate_phdr callback: appends the object `info` describes to
/// g_objects (nothing for one without a dynamic section, symbol table or
/// RELA relocations); stops the walk when g_objects is full. Start a walk
/// with g_object_count = 0.
int collect_object(dl_phdr_info* info, std::size_t size, void* unused);

/// The listed object whose PT_LOAD extent holds `address`, or nullptr.
Object* object_at(std::uintptr_t address);

/// The file name part of `path`.
const char* base_name(const char* path);

/// True for the hooks' names (__cyg_profile_func_*), whose relocations are
/// never looked at.
bool is_hook(const char* name);

/// The version a symbol reference of `o` asks for (DT_VERNEED), or nullptr
/// for none. `sym` indexes o's dynamic symbol table.
const char* required_version(const Object& o, std::size_t sym);

/// True when `o` defines a dynamic symbol `name` (GNU hash lookup).
bool defines(const Object& o, const char* name);

/// The object a call to `name` that lands at `target` is a call into: the
/// object holding the target, but for the vDSO (what the C library's
/// gettimeofday, time, clock_gettime resolve to) the first other listed
/// object defining the name. nullptr when no listed object holds `target`.
const Object* library_of(std::uintptr_t target, const char* name);

/// True when `path`'s file name matches PARLOT_LIBCALLS' `spec`: "1" (any),
/// or ':'-separated fnmatch(3) patterns ("libc.so*:libm.so*").
bool matches(const char* spec, const char* path);

/// True when the GOT value `got` of `o` is the loader's binding: an entry
/// already bound (a -z now object, or a lazy one called before), not the
/// object's own PLT (lazy binding still to come).
bool bound(const Object& o, std::uintptr_t got);

/// The loader's counts of objects added and removed (dl_phdr_info's
/// dlpi_adds, dlpi_subs): equal counts, the same objects.
struct LoadCounts {
  unsigned long long adds = 0, subs = 0;
  bool operator==(const LoadCounts&) const = default;
};

/// dl_iterate_phdr callback: stores the counts in `*out` (a LoadCounts)
/// and stops the walk.
int read_counts(dl_phdr_info* info, std::size_t size, void* out);

/// dl_iterate_phdr callback: stores dlpi_adds in `*out` (an unsigned long
/// long) and stops the walk.
int read_adds(dl_phdr_info* info, std::size_t size, void* out);

/// True when the loader has relocated `o` (glibc's _dl_find_object finds
/// an object only from then on): a dlopen running on another thread may
/// have mapped an object it has not relocated yet, whose GOT and RELRO the
/// loader still writes. True where glibc has no _dl_find_object.
bool relocated(const Object& o);

/// Runs `f()` while the loader can neither add nor remove an object: inside
/// a dl_iterate_phdr callback (glibc holds the lock of its list of objects
/// there, and unmaps an object only with it held). `f` must not call into
/// the loader (dlsym takes the loader's main lock: lock order); walking
/// the list again (dl_iterate_phdr) is allowed.
template <class F>
void with_objects_held(F& f) {
  dl_iterate_phdr(
      [](dl_phdr_info*, std::size_t, void* p) {
        (*static_cast<F*>(p))();
        return 1;
      },
      &f);
}

}  // namespace parlot::runtime::libcall
