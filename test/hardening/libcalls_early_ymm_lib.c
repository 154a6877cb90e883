/* Not instrumented. Its constructor calls early_ymm_hook, an instrumented
 * function of the program that links it (libcalls_early_ymm.c), before the
 * runtime's own constructors run (a preloaded library is initialised after
 * the program's libraries): the program's first event, which patches the
 * library calls, comes from there. early_ymm_sum takes and returns %ymm
 * vectors, so a library call recorded then must keep them whole. */
#include <immintrin.h>

void early_ymm_hook(void);

__attribute__((constructor)) static void run_program_code_first(void) {
  early_ymm_hook();
}

__attribute__((target("avx"))) __m256d early_ymm_sum(__m256d a0, __m256d a1, __m256d a2, __m256d a3,
                                                     __m256d a4, __m256d a5, __m256d a6,
                                                     __m256d a7) {
  const __m256d two = _mm256_set1_pd(2.0);
  __m256d s = a0;
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a1);
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a2);
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a3);
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a4);
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a5);
  s = _mm256_add_pd(_mm256_mul_pd(s, two), a6);
  return _mm256_add_pd(_mm256_mul_pd(s, two), a7);
}
