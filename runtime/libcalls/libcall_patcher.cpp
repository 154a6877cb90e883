// GOT patching for library-call tracing (libcall_patcher.h): the patching
// passes, at start, at the first event, when dlopen returns and on the idle
// flusher's rounds. The objects (libcall_objects.h), the loader lookups
// (libcall_lookup.h), the stubs (libcall_stubs.h) and the relocations left
// (libcall_accounting.h) are in files of their own.
#include "libcalls/libcall_patcher.h"

#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "errno_keeper.h"
#include "ignore_hooks.h"
#include "io/process_file.h"
#include "io/raw_io.h"
#include "libcalls/libcall_accounting.h"
#include "libcalls/libcall_lookup.h"
#include "libcalls/libcall_objects.h"
#include "libcalls/libcall_registers.h"
#include "libcalls/libcall_stubs.h"

namespace parlot::runtime {

bool g_libcalls_on = false;

namespace {

using namespace libcall;

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
  format_libcall_record(t, sizeof buf);
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
    // What the trampolines save, before any entry leads to them: the first
    // pass may come before the runtime's constructors, at the first event.
    choose_libcall_vector_width();
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
