/* Case 7: dlopen of an instrumented library, calls into it, dlclose, then
 * dlopen of a copy of it at another path, kept off the first copy's
 * addresses. Usage: dlopen_main LIB LIB_COPY
 *   main { load_and_call { plugin_init { plugin_leaf } plugin_entry { plugin_helper {
 *          plugin_leaf } } plugin_fini { plugin_leaf } } (twice) }
 * Prints "bases differ" when the second copy was loaded elsewhere. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "hardening_common.h"

struct range {
  uintptr_t lo, hi;
};

NOTRACE static struct range range_of(void* handle) {
  struct link_map* map = NULL;
  HCHECK(dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0);
  const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)map->l_addr;
  const ElfW(Phdr)* ph = (const ElfW(Phdr)*)(map->l_addr + eh->e_phoff);
  struct range r = {UINTPTR_MAX, 0};
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD) continue;
    const uintptr_t a = map->l_addr + ph[i].p_vaddr;
    if (a < r.lo) r.lo = a;
    if (a + ph[i].p_memsz > r.hi) r.hi = a + ph[i].p_memsz;
  }
  return r;
}

NOINLINE struct range load_and_call(const char* path, int x) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(70);
  }
  int (*entry)(int) = (int (*)(int))dlsym(handle, "plugin_entry");
  HCHECK(entry != NULL);
  HCHECK(entry(x) == 2 * x + 1);
  const struct range r = range_of(handle);
  HCHECK(dlclose(handle) == 0);
  return r;
}

int main(int argc, char** argv) {
  HCHECK(argc == 3);
  const struct range first = load_and_call(argv[1], 1);
  /* Keep the second copy off the first one's addresses. */
  const uintptr_t page = 4096;
  const uintptr_t lo = first.lo & ~(page - 1);
  const size_t len = (first.hi - lo + page - 1) & ~(page - 1);
  void* hold =
      mmap((void*)lo, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  HCHECK(hold == (void*)lo);
  const struct range second = load_and_call(argv[2], 2);
  printf("bases %s\n", second.lo != first.lo ? "differ" : "same");
  return 0;
}
