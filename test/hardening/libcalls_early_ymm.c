/* A library call with %ymm arguments and result made before the runtime's
 * constructors run (PARLOT_LIBCALLS=1): libcalls_early_ymm_lib.c's
 * constructor calls early_ymm_hook, whose first event patches the library
 * calls; the trampolines must already save the vector registers whole.
 * Prints the first result in full and a hash of the bytes of all of them;
 * traced, the output must be the same as untraced. Prints "no avx" on a CPU
 * without AVX. Trace: early_ymm_hook{ check_ymm{ noise... early_ymm_sum ...
 * } }, then main{ printf }. */
#include <immintrin.h>
#include <stdint.h>

#include "hardening_common.h"

__attribute__((target("avx"))) __m256d early_ymm_sum(__m256d a0, __m256d a1, __m256d a2, __m256d a3,
                                                     __m256d a4, __m256d a5, __m256d a6,
                                                     __m256d a7);

enum { kIterations = 2000 };
static char text[256];

NOTRACE static uint64_t hash_bytes(uint64_t h, const void* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 1099511628211ull;
  return h;
}

/* Irregular calls between the library calls, so that the trace encoder
 * searches for matches inside the library calls' hooks. */
NOINLINE static void noise_leaf(void) {
  __asm__ volatile("");
}
NOINLINE static void noise(unsigned i) {
  const unsigned r = (i * 2654435761u) >> 27;
  for (unsigned k = 0; k < (r & 3); ++k) noise_leaf();
  if ((r & 4) != 0) noise(i + 1);
}

__attribute__((target("avx"))) NOINLINE static void check_ymm(void) {
  uint64_t h = 14695981039346656037ull;
  __m256d first = _mm256_setzero_pd();
  for (int i = 0; i < kIterations; ++i) {
    noise((unsigned)i);
    __m256d a[8];
    for (int k = 0; k < 8; ++k)
      a[k] = _mm256_set_pd(i + k * 0.125, i - k * 0.5, (i + 1) * (k + 1) / 3.0, -(double)k / 7.0);
    const __m256d r = early_ymm_sum(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  int n = snprintf(text, sizeof text, "ymm ");
  for (size_t i = 0; i < sizeof first; ++i)
    n += snprintf(text + n, sizeof text - (size_t)n, "%02x", ((const unsigned char*)&first)[i]);
  snprintf(text + n, sizeof text - (size_t)n, " %016llx\n", (unsigned long long)h);
}

NOINLINE void early_ymm_hook(void) {
  __builtin_cpu_init(); /* before the program's constructors, libgcc's among them */
  if (__builtin_cpu_supports("avx")) {
    check_ymm();
  } else {
    snprintf(text, sizeof text, "no avx\n");
  }
}

int main(void) {
  printf("%s", text);
  return 0;
}
