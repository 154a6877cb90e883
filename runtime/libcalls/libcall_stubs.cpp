// The library-call entry stubs and their names (libcall_stubs.h).
#include "libcalls/libcall_stubs.h"

#include <cstring>
#include <initializer_list>

#include "libcalls/libcall_patcher.h"

extern "C" char parlot_libcall_stubs[];  // libcall_trampolines.S: 16 bytes per stub

namespace parlot::runtime {

LibcallStub g_libcall_stubs[kLibcallStubs];

namespace libcall {
namespace {

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

}  // namespace

std::uintptr_t stub_address(std::size_t i) {
  return reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs) + i * kStubBytes;
}

bool in_parlot_stubs(std::uintptr_t value) {
  const auto base = reinterpret_cast<std::uintptr_t>(parlot_libcall_stubs);
  return value - base < kLibcallStubs * kStubBytes;
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

}  // namespace libcall

bool libcall_stub_names(std::uintptr_t address, const char** name, const char** library) {
  if (!libcall::in_parlot_stubs(address)) return false;
  const std::size_t i = (address - libcall::stub_address(0)) / libcall::kStubBytes;
  if (i >= __atomic_load_n(&g_libcall_counts.functions, __ATOMIC_ACQUIRE)) return false;
  *name = g_libcall_stubs[i].name;
  *library = g_libcall_stubs[i].library;
  return true;
}

}  // namespace parlot::runtime
