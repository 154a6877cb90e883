/* Case 9: a program that replaces malloc and free with its own instrumented
 * allocator (a bump allocator over a static arena; free only counts). Every
 * allocation of the process, by libc or by anything else, comes here, as do
 * those made before main and by the runtime's own start-up if it made any.
 *   main { run_allocs { malloc { bump } calloc { bump } realloc { bump } free free }
 *          report { malloc { bump } } }
 * report's printf makes stdio allocate the stdout buffer with our malloc. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "hardening_common.h"

static _Alignas(64) unsigned char arena[1 << 24];
static size_t used;
static volatile long frees;

NOINLINE void* bump(size_t size, size_t align) {
  if (align < 16) align = 16;
  size_t start = (used + align - 1) & ~(align - 1);
  /* A header before each block keeps its size for realloc. */
  start += align >= sizeof(size_t) ? align : sizeof(size_t);
  if (start + size > sizeof arena) return NULL;
  memcpy(arena + start - sizeof(size_t), &size, sizeof size);
  used = start + size;
  return arena + start;
}

NOTRACE static size_t block_size(void* p) {
  size_t size;
  memcpy(&size, (unsigned char*)p - sizeof size, sizeof size);
  return size;
}

void* malloc(size_t size) {
  return bump(size, 16);
}
void free(void* p) {
  if (p != NULL) ++frees;
}
void* calloc(size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  /* The arena is zero and never reused. */
  return bump(n * size, 16);
}
void* realloc(void* p, size_t size) {
  void* q = bump(size, 16);
  if (p != NULL && q != NULL) {
    const size_t old = block_size(p);
    memcpy(q, p, old < size ? old : size);
  }
  return q;
}
void* memalign(size_t align, size_t size) {
  return bump(size, align);
}
void* aligned_alloc(size_t align, size_t size) {
  return bump(size, align);
}
int posix_memalign(void** out, size_t align, size_t size) {
  void* p = bump(size, align);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}
void* valloc(size_t size) {
  return bump(size, 4096);
}
void* pvalloc(size_t size) {
  return bump((size + 4095) & ~(size_t)4095, 4096);
}
size_t malloc_usable_size(void* p) {
  return p == NULL ? 0 : block_size(p);
}

NOINLINE long run_allocs(void) {
  char* a = malloc(10);
  long* b = calloc(4, sizeof *b);
  memcpy(a, "hello", 6);
  a = realloc(a, 100);
  long ok = strcmp(a, "hello") == 0 && b[3] == 0;
  free(a);
  free(b);
  return ok;
}

NOINLINE void report(long ok, long freed) {
  printf("ok %ld frees %ld\n", ok, freed);
}

int main(void) {
  const long before = frees;
  const long ok = run_allocs();
  report(ok, frees - before);
  return 0;
}
