// Patching the sleds on and off (sled_patcher.h).
#include "sleds/sled_patcher.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cstring>

#include "errno_keeper.h"
#include "ignore_hooks.h"
#include "libcalls/libcall_registers.h"
#include "sleds/sled_mirror.h"
#include "sleds/sled_scan.h"

// sled_trampolines.S: where a patched sled leads (through the mirror).
extern "C" char parlot_sled_entry[];

namespace parlot::runtime {

bool g_sleds_found = false;

namespace {

// A loaded object with sleds, known by its load address, link map and
// program headers (an object loaded again at the same address has a new
// link map).
struct SledObject {
  std::uintptr_t base;
  const void* link_map;
  const void* phdr;
  SledTable table;
  SledMirror mirror;
  bool seen;  // in the current pass
};

constexpr std::size_t kMaxObjects = 1024;
SledObject g_objects[kMaxObjects];
std::size_t g_object_count = 0;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
bool g_on = false;                       // the state asked; guarded by g_lock
bool g_on_for_readers = false;           // the same, for sleds_on()
bool g_initialised = false;              // guarded by g_lock
unsigned long long g_adds_seen = ~0ull;  // dl_iterate_phdr's load count at the last pass

constexpr unsigned char kNop = 0x90;
constexpr unsigned char kCall = 0xe8;
constexpr unsigned char kPatched[kSledBytes] = {kCall, kNop, kNop, kNop, kNop};
constexpr unsigned char kNops[kSledBytes] = {kNop, kNop, kNop, kNop, kNop};

// Replaces clang's 5-byte NOP (0f 1f 44 00 xx) at `s` by the patched call,
// in one atomic 8-byte store, when the 5 bytes lie inside one aligned
// word; false otherwise.
bool replace_long_nop(std::uintptr_t s) {
  if ((s & 7) > 8 - kSledBytes) return false;
  auto* word = reinterpret_cast<std::uint64_t*>(s & ~std::uintptr_t{7});
  const unsigned shift = static_cast<unsigned>(s & 7) * 8;
  std::uint64_t old = __atomic_load_n(word, __ATOMIC_RELAXED);
  for (;;) {
    std::uint64_t want = old;
    for (std::uintptr_t i = 0; i < kSledBytes; ++i) {
      const unsigned at = shift + static_cast<unsigned>(i) * 8;
      want = (want & ~(std::uint64_t{0xff} << at)) | (std::uint64_t{kPatched[i]} << at);
    }
    if (__atomic_compare_exchange_n(word, &old, want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return true;
  }
}

// Puts the sled at `s` into state `on`; true when it is in that state
// after. A sled is one of: gcc's five one-byte NOPs, clang's one 5-byte
// NOP, or patched (E8 90 90 90 90); only the first byte ever changes once
// it was patched, so a thread between gcc's NOPs runs on.
bool patch_one(std::uintptr_t s, bool on) {
  auto* b = reinterpret_cast<unsigned char*>(s);
  if (std::memcmp(b + 1, kNops, kSledBytes - 1) == 0 && (b[0] == kNop || b[0] == kCall)) {
    const unsigned char want = on ? kCall : kNop;
    if (b[0] != want) __atomic_store_n(b, want, __ATOMIC_SEQ_CST);
    return true;
  }
  if (b[0] == 0x0f && b[1] == 0x1f && b[2] == 0x44 && b[3] == 0x00) {
    return !on || replace_long_nop(s);  // off: clang's NOP is off already
  }
  return false;
}

// Puts every sled of `o` into state g_on, its text writable for the pass.
void patch_object(SledObject& o, SledCounts& counts) {
  counts.objects += 1;
  const std::size_t total = o.table.total();
  counts.sleds += total;
  if (o.mirror.hi == 0) {
    counts.left += total;
    return;
  }
  void* text = reinterpret_cast<void*>(o.table.text_lo);
  const std::size_t bytes = o.table.text_hi - o.table.text_lo;
  if (mprotect(text, bytes, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    counts.left += total;
    return;
  }
  for (std::size_t k = 0; k < o.table.sections; ++k) {
    for (std::size_t i = 0; i < o.table.count[k]; ++i) {
      const std::uintptr_t s = o.table.entries[k][i];
      if (s < o.table.text_lo || s + kSledBytes > o.table.text_hi) {
        counts.sleds -= 1;  // a function the linker dropped
        continue;
      }
      if (patch_one(s, g_on)) {
        counts.patched += 1;
      } else {
        counts.left += 1;
      }
    }
  }
  mprotect(text, bytes, PROT_READ | PROT_EXEC);
}

// One pass's state.
struct Pass {
  SledCounts counts;
  std::size_t visited = 0;  // objects visited: the first is the program
};

// dl_iterate_phdr callback (the loader's list held: no object is unmapped
// meanwhile): finds or adds the object, then patches it.
int visit_object(dl_phdr_info* info, std::size_t, void* data) {
  auto& pass = *static_cast<Pass*>(data);
  auto& counts = pass.counts;
  const bool program = pass.visited++ == 0;
  // Only a relocated object (glibc's _dl_find_object finds it then): the
  // sled table's words are addresses once relocated.
  dl_find_object found;
  if (info->dlpi_phnum == 0 ||
      _dl_find_object(const_cast<ElfW(Phdr)*>(info->dlpi_phdr), &found) != 0) {
    return 0;
  }
  const std::uintptr_t base = info->dlpi_addr;
  for (std::size_t i = 0; i < g_object_count; ++i) {
    SledObject& o = g_objects[i];
    if (o.base == base && o.link_map == found.dlfo_link_map && o.phdr == info->dlpi_phdr &&
        !o.seen) {
      o.seen = true;
      patch_object(o, counts);
      return 0;
    }
  }
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == 0) path = program ? "/proc/self/exe" : nullptr;
  SledTable table;
  if (path == nullptr || g_object_count == kMaxObjects ||
      !scan_sled_table(path, base, info->dlpi_phdr, info->dlpi_phnum, table)) {
    return 0;
  }
  SledObject& o = g_objects[g_object_count++];
  o = SledObject{base, found.dlfo_link_map, info->dlpi_phdr, table, SledMirror{}, true};
  g_sleds_found = true;
  map_sled_mirror(table, reinterpret_cast<std::uintptr_t>(parlot_sled_entry), o.mirror);
  patch_object(o, counts);
  return 0;
}

int read_adds(dl_phdr_info* info, std::size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds) {
    *static_cast<unsigned long long*>(data) = info->dlpi_adds + info->dlpi_subs * 0x100000000ull;
  }
  return 1;  // the counts are the same in every entry
}

// One pass over the loaded objects. Called with g_lock held.
SledCounts pass_locked() {
  if (!g_initialised) {
    g_initialised = true;
    // A fork child's pass must not wait for a pass of a thread it lacks.
    pthread_atfork(nullptr, nullptr, [] { pthread_mutex_init(&g_lock, nullptr); });
    choose_libcall_vector_width();  // what the entry trampoline saves
  }
  dl_iterate_phdr(read_adds, &g_adds_seen);
  for (std::size_t i = 0; i < g_object_count; ++i) g_objects[i].seen = false;
  Pass pass;
  dl_iterate_phdr(visit_object, &pass);
  // Objects unloaded since: their mirrors go (no sled calls into them).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < g_object_count; ++i) {
    if (g_objects[i].seen) {
      g_objects[kept++] = g_objects[i];
    } else {
      unmap_sled_mirror(g_objects[i].mirror);
    }
  }
  g_object_count = kept;
  return pass.counts;
}

}  // namespace

SledCounts set_sleds(bool on) {
  const ErrnoKeeper keep_errno;
  const IgnoreHooksOnThisThread quiet;
  pthread_mutex_lock(&g_lock);
  g_on = on;
  const SledCounts counts = pass_locked();
  __atomic_store_n(&g_on_for_readers, on, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_lock);
  return counts;
}

bool sleds_on() {
  return __atomic_load_n(&g_on_for_readers, __ATOMIC_ACQUIRE);
}

void patch_sleds_of_new_objects() {
  if (!__atomic_load_n(&g_initialised, __ATOMIC_ACQUIRE)) return;
  unsigned long long adds = 0;
  dl_iterate_phdr(read_adds, &adds);
  if (adds == __atomic_load_n(&g_adds_seen, __ATOMIC_RELAXED)) return;
  const ErrnoKeeper keep_errno;
  const IgnoreHooksOnThisThread quiet;
  if (pthread_mutex_trylock(&g_lock) != 0) return;
  pass_locked();
  pthread_mutex_unlock(&g_lock);
}

}  // namespace parlot::runtime
