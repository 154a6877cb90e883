// Relocations left by the library-call patcher, and why
// (libcall_accounting.h).
#include "libcalls/libcall_accounting.h"

#include <cstring>

#include "parlot/format.h"

namespace parlot::runtime {

LibcallPatchCounts g_libcall_counts;

namespace libcall {
namespace {

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

}  // namespace

LibcallLeft never_patched(const char* name) {
  for (const NeverPatched& n : kNeverPatched)
    if (std::strcmp(n.name, name) == 0) return n.reason;
  return LibcallLeft::kCount;
}

void count_left(LibcallLeft reason) {
  ++g_libcall_counts.left[static_cast<unsigned>(reason)];
}

bool recorded_library(const Object& o, const Object* library, const char* spec) {
  return library != nullptr && library != &o && !library->instrumented && !library->parlot &&
         matches(spec, library->name[0] != 0 ? library->name : "");
}

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

void format_libcall_record(TextBuilder& t, std::size_t capacity) {
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
    if (t.size() + 4 * len + 64 > capacity) break;  // never a line cut short
    t.str("stub ").hex(s.function).ch(' ').hex(s.target).ch(' ');
    t.escaped(s.name, std::strlen(s.name)).ch(' ');
    if (s.version[0] != 0) {
      t.escaped(s.version, std::strlen(s.version));
    } else {
      t.ch('-');
    }
    t.ch(' ').escaped(s.library, std::strlen(s.library)).ch('\n');
  }
}

}  // namespace libcall

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

}  // namespace parlot::runtime
