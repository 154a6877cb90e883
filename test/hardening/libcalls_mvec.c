/* Calls glibc's vector math library (libmvec) through its vector-ABI names,
 * as code vectorised by gcc -ffast-math -fopenmp-simd does:
 * _ZGVbN2v_sin (SSE, 2 doubles in %xmm0) and, on a CPU with AVX2,
 * _ZGVdN4v_sin (4 doubles in %ymm0). Under PARLOT_LIBCALLS=1 each call must
 * be recorded and return the same bits as untraced. Prints, per variant,
 * the first result in full and a hash of the bytes of all of them. Trace:
 * main{ check_sse{ noise... _ZGVbN2v_sin ... } check_avx2{ ... } printf }. */
#include <immintrin.h>
#include <stdint.h>

#include "hardening_common.h"

__m128d _ZGVbN2v_sin(__m128d x);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_sin(__m256d x);

enum { kIterations = 1000 };

NOTRACE static uint64_t hash_bytes(uint64_t h, const void* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 1099511628211ull;
  return h;
}

NOTRACE static void say(const char* name, const void* first, size_t bytes, uint64_t hash) {
  printf("%s ", name);
  for (size_t i = 0; i < bytes; ++i) printf("%02x", ((const unsigned char*)first)[i]);
  printf(" %016llx\n", (unsigned long long)hash);
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

NOINLINE static void check_sse(void) {
  uint64_t h = 14695981039346656037ull;
  __m128d first = _mm_setzero_pd();
  for (int i = 0; i < kIterations; ++i) {
    noise((unsigned)i);
    const __m128d r = _ZGVbN2v_sin(_mm_set_pd(i * 0.01, -i / 7.0));
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say("sse", &first, sizeof first, h);
}

__attribute__((target("avx2"))) NOINLINE static void check_avx2(void) {
  uint64_t h = 14695981039346656037ull;
  __m256d first = _mm256_setzero_pd();
  for (int i = 0; i < kIterations; ++i) {
    noise((unsigned)i);
    const __m256d r = _ZGVdN4v_sin(_mm256_set_pd(i * 0.01, -i / 7.0, i * 1.5, 1.0 / (i + 1)));
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say("avx2", &first, sizeof first, h);
}

int main(void) {
  check_sse();
  if (__builtin_cpu_supports("avx2")) check_avx2();
  return 0;
}
