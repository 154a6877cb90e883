// The CFA of an unwind context, from its own unwinder (unwinder_cfa.h).
#include "hot_path/unwinder_cfa.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>

namespace parlot::runtime {
namespace {

using GetCfa = _Unwind_Word (*)(_Unwind_Context*);

// Unwinders seen (a process has one or two: libgcc_s, a static copy),
// by the load address of their object. An entry is claimed once (base,
// compare-and-swap from 0) and then given its function; never removed:
// libgcc_s, which glibc loads, is never unloaded.
struct Unwinder {
  std::atomic<std::uintptr_t> base{0};
  std::atomic<GetCfa> get_cfa{nullptr};
};
constexpr int kUnwinders = 4;
Unwinder g_unwinders[kUnwinders];

// _Unwind_GetCFA of the object `map`, which starts at `base`; null when the
// object does not export its own (a hidden static copy of the unwinder).
GetCfa look_up(const link_map* map, const void* base) {
  // The main program's map has an empty name: its handle is dlopen(NULL).
  const char* name = map->l_name[0] == '\0' ? nullptr : map->l_name;
  void* handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  auto f = reinterpret_cast<GetCfa>(dlsym(handle, "_Unwind_GetCFA"));
  dlclose(handle);  // only drops the reference RTLD_NOLOAD took
  // dlsym also searches the object's dependencies: another unwinder's
  // function would misread this one's contexts.
  dl_find_object in;
  if (f == nullptr || _dl_find_object(reinterpret_cast<void*>(f), &in) != 0 ||
      in.dlfo_map_start != base) {
    return nullptr;
  }
  return f;
}

}  // namespace

std::uintptr_t unwinder_cfa(_Unwind_Context* context, const void* unwinder_code) {
  // Lock-free and async-signal-safe (glibc 2.35): a cancellation unwinds
  // from the cancelled thread's signal handler.
  dl_find_object found;
  if (_dl_find_object(const_cast<void*>(unwinder_code), &found) != 0) return 0;
  const auto base = reinterpret_cast<std::uintptr_t>(found.dlfo_map_start);
  for (Unwinder& u : g_unwinders) {
    if (u.base.load(std::memory_order_acquire) != base) continue;
    if (GetCfa f = u.get_cfa.load(std::memory_order_acquire)) return f(context);
    break;  // being filled by another thread: look it up here too
  }
  const GetCfa f = look_up(found.dlfo_link_map, found.dlfo_map_start);
  if (f == nullptr) return 0;
  for (Unwinder& u : g_unwinders) {
    std::uintptr_t expected = 0;
    if (u.base.compare_exchange_strong(expected, base, std::memory_order_acq_rel)) {
      u.get_cfa.store(f, std::memory_order_release);
      break;
    }
    if (expected == base) break;
  }
  return f(context);
}

}  // namespace parlot::runtime
