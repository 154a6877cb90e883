/* An uninstrumented shared library (built -fno-instrument-functions) whose
 * functions use every register the System V x86-64 ABI passes arguments
 * and results in; libcall_abi calls them through its PLT. Under
 * PARLOT_LIBCALLS=1 each call goes through the runtime's entry stub and
 * return thunk, which must leave every one of these registers as the caller
 * and the callee left them. */
#include <fenv.h>
#include <immintrin.h>
#include <stdarg.h>

/* Returned in %st0. */
long double abi_ld_mul(long double a, long double b) {
  return a * b + 0.1L;
}

/* Returned in %xmm0 and %xmm1. */
_Complex double abi_cd_mul(_Complex double a, _Complex double b) {
  return a * b;
}

/* Returned in %st0 and %st1. */
_Complex long double abi_cld_mul(_Complex long double a, _Complex long double b) {
  return a * b;
}

/* Returned in %rax and %rdx. */
__int128 abi_i128_mul(__int128 a, __int128 b) {
  return a * b + 1;
}

/* Classified SSE + INTEGER: %xmm0 and %rax. */
struct abi_dl {
  double d;
  long l;
};
struct abi_dl abi_dl_make(double d, long l) {
  struct abi_dl r = {d * 3.0, l * 5};
  return r;
}

/* Classified SSE + SSE: %xmm0 and %xmm1. */
struct abi_dd {
  double a, b;
};
struct abi_dd abi_dd_make(double a, double b) {
  struct abi_dd r = {a / 3.0, b / 7.0};
  return r;
}

/* Classified INTEGER + INTEGER: %rax and %rdx. */
struct abi_ll {
  long a, b;
};
struct abi_ll abi_ll_make(long a, long b) {
  struct abi_ll r = {a * 7, b ^ a};
  return r;
}

/* Every argument register: %xmm0-7, %rdi %rsi %rdx %rcx %r8 %r9, and the
 * stack. */
double abi_all_registers(double d0, double d1, double d2, double d3, double d4, double d5,
                         double d6, double d7, long i0, long i1, long i2, long i3, long i4, long i5,
                         double s0, long s1) {
  return d0 + 2 * d1 + 3 * d2 + 4 * d3 + 5 * d4 + 6 * d5 + 7 * d6 + 8 * d7 +
         (double)(i0 + 2 * i1 + 3 * i2 + 4 * i3 + 5 * i4 + 6 * i5) + s0 * (double)s1;
}

/* Variadic: %al holds the number of vector registers used. */
double abi_vsum(int n, ...) {
  va_list ap;
  va_start(ap, n);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum = sum * 1.5 + va_arg(ap, double);
  va_end(ap);
  return sum;
}

/* Arguments in %ymm0-7, result in %ymm0. */
__attribute__((target("avx"))) __m256d abi_ymm_sum(__m256d a0, __m256d a1, __m256d a2, __m256d a3,
                                                   __m256d a4, __m256d a5, __m256d a6, __m256d a7) {
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

/* Arguments in %zmm0-7, result in %zmm0. */
__attribute__((target("avx512f"))) __m512d abi_zmm_sum(__m512d a0, __m512d a1, __m512d a2,
                                                       __m512d a3, __m512d a4, __m512d a5,
                                                       __m512d a6, __m512d a7) {
  const __m512d two = _mm512_set1_pd(2.0);
  __m512d s = a0;
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a1);
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a2);
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a3);
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a4);
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a5);
  s = _mm512_add_pd(_mm512_mul_pd(s, two), a6);
  return _mm512_add_pd(_mm512_mul_pd(s, two), a7);
}

/* The floating-point environment the callee runs with: rounding mode, the
 * %mxcsr and x87 control words, and a quotient that depends on them. */
unsigned abi_fp_environment(double a, double b, double* quotient) {
  *quotient = a / b;
  unsigned short x87_control;
  __asm__ volatile("fnstcw %0" : "=m"(x87_control));
  return ((unsigned)fegetround() << 24) ^ ((unsigned)x87_control << 16) ^
         (unsigned)__builtin_ia32_stmxcsr();
}
