/* Library calls must not change a program's results (PARLOT_LIBCALLS=1):
 * calls the uninstrumented libabi_callee.so (abi_callee.c) with arguments
 * and results in every register the System V x86-64 ABI uses for them
 * (%ymm/%zmm vectors where the CPU has them, x87 %st0/%st1, %rax:%rdx,
 * %xmm0:%xmm1, varargs with %al) and prints each result bit-exactly: the
 * first in full, then a hash of the bytes of all of them. Each check runs
 * on the main thread and on two threads started together, whose output is
 * printed after they end. Then the floating-point environment: a rounding
 * mode, FTZ and an x87 precision set by the program must reach the callee
 * and stay set after the call. Traced with library calls, the output must
 * be the same as untraced. Usage: libcall_abi [ITERATIONS] */
#define _GNU_SOURCE
#include <fenv.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "hardening_common.h"

long double abi_ld_mul(long double a, long double b);
_Complex double abi_cd_mul(_Complex double a, _Complex double b);
_Complex long double abi_cld_mul(_Complex long double a, _Complex long double b);
__int128 abi_i128_mul(__int128 a, __int128 b);
struct abi_dl {
  double d;
  long l;
};
struct abi_dl abi_dl_make(double d, long l);
struct abi_dd {
  double a, b;
};
struct abi_dd abi_dd_make(double a, double b);
struct abi_ll {
  long a, b;
};
struct abi_ll abi_ll_make(long a, long b);
double abi_all_registers(double d0, double d1, double d2, double d3, double d4, double d5,
                         double d6, double d7, long i0, long i1, long i2, long i3, long i4, long i5,
                         double s0, long s1);
double abi_vsum(int n, ...);
__attribute__((target("avx"))) __m256d abi_ymm_sum(__m256d a0, __m256d a1, __m256d a2, __m256d a3,
                                                   __m256d a4, __m256d a5, __m256d a6, __m256d a7);
__attribute__((target("avx512f"))) __m512d abi_zmm_sum(__m512d a0, __m512d a1, __m512d a2,
                                                       __m512d a3, __m512d a4, __m512d a5,
                                                       __m512d a6, __m512d a7);
unsigned abi_fp_environment(double a, double b, double* quotient);

static int iterations = 2000;

/* What one run of the checks printed. */
struct output {
  char text[4096];
  size_t used;
};

NOTRACE static void say(struct output* o, const char* name, const void* first, size_t bytes,
                        uint64_t hash) {
  int n = snprintf(o->text + o->used, sizeof o->text - o->used, "%s ", name);
  o->used += (size_t)n;
  for (size_t i = 0; i < bytes; ++i) {
    n = snprintf(o->text + o->used, sizeof o->text - o->used, "%02x",
                 ((const unsigned char*)first)[i]);
    o->used += (size_t)n;
  }
  n = snprintf(o->text + o->used, sizeof o->text - o->used, " %016llx\n", (unsigned long long)hash);
  o->used += (size_t)n;
}

/* Irregular calls between the library calls (a pseudo-random choice of
 * function and depth), so that the trace encoder searches for matches
 * inside the library calls' hooks, as it does in a real program. */
NOINLINE static void noise_leaf(void) {
  __asm__ volatile("");
}
NOINLINE static void noise(unsigned i) {
  const unsigned r = (i * 2654435761u) >> 27;
  for (unsigned k = 0; k < (r & 3); ++k) noise_leaf();
  if ((r & 4) != 0) noise(i + 1);
}

/* FNV-1a over `bytes` bytes of `p`. */
NOTRACE static uint64_t hash_bytes(uint64_t h, const void* p, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 0x100000001b3ull;
  return h;
}
#define HASH_START 0xcbf29ce484222325ull
/* An x87 long double's value: its first 10 bytes (the rest is padding). */
#define LD_BYTES 10

NOINLINE static void check_long_double(struct output* o) {
  uint64_t h = HASH_START;
  long double first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const long double r = abi_ld_mul((long double)i + 0.5L, 1.0L / 3.0L);
    if (i == 0) first = r;
    h = hash_bytes(h, &r, LD_BYTES);
  }
  say(o, "long_double", &first, LD_BYTES, h);
}

NOINLINE static void check_complex_double(struct output* o) {
  uint64_t h = HASH_START;
  _Complex double first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const _Complex double a = (double)i / 7.0 + (double)(i + 1) / 3.0 * 1.0i;
    const _Complex double r = abi_cd_mul(a, 0.25 - 1.5i);
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say(o, "complex_double", &first, sizeof first, h);
}

NOINLINE static void check_complex_long_double(struct output* o) {
  uint64_t h = HASH_START;
  _Complex long double first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const _Complex long double a = (long double)i / 7.0L + (long double)(i + 1) / 3.0L * 1.0i;
    const _Complex long double r = abi_cld_mul(a, 0.25L - 1.5iL);
    if (i == 0) first = r;
    const long double parts[2] = {__real__ r, __imag__ r};
    h = hash_bytes(h, &parts[0], LD_BYTES);
    h = hash_bytes(h, &parts[1], LD_BYTES);
  }
  const long double parts[2] = {__real__ first, __imag__ first};
  unsigned char bytes[2 * LD_BYTES];
  memcpy(bytes, &parts[0], LD_BYTES);
  memcpy(bytes + LD_BYTES, &parts[1], LD_BYTES);
  say(o, "complex_long_double", bytes, sizeof bytes, h);
}

NOINLINE static void check_int128(struct output* o) {
  uint64_t h = HASH_START;
  __int128 first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const __int128 a = ((__int128)(i + 3) << 70) | (unsigned)(i * 77);
    const __int128 r = abi_i128_mul(a, (__int128)0x123456789abcdefll * (i + 1));
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say(o, "int128", &first, sizeof first, h);
}

NOINLINE static void check_structs(struct output* o) {
  uint64_t h = HASH_START;
  unsigned char first[48];
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const struct abi_dl dl = abi_dl_make((double)i / 9.0, i * 1001L);
    const struct abi_dd dd = abi_dd_make((double)i * 1.25, (double)-i / 11.0);
    const struct abi_ll ll = abi_ll_make(i * 3L, -(long)i * 100003L);
    unsigned char all[48];
    memcpy(all, &dl, 16);
    memcpy(all + 16, &dd, 16);
    memcpy(all + 32, &ll, 16);
    if (i == 0) memcpy(first, all, sizeof first);
    h = hash_bytes(h, all, sizeof all);
  }
  say(o, "structs", first, sizeof first, h);
}

NOINLINE static void check_argument_registers(struct output* o) {
  uint64_t h = HASH_START;
  double first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    const double d = (double)i / 13.0;
    const double r = abi_all_registers(d, d + 1, d + 2, d + 3, d + 4, d + 5, d + 6, d + 7, i, i + 1,
                                       i + 2, i + 3, i + 4, i + 5, d * 0.5, i * 3L);
    const double v = abi_vsum(5, d, d / 3, d / 5, d / 7, d / 11);
    if (i == 0) first = r + v;
    h = hash_bytes(h, &r, sizeof r);
    h = hash_bytes(h, &v, sizeof v);
  }
  say(o, "argument_registers", &first, sizeof first, h);
}

__attribute__((target("avx"))) NOINLINE static void check_ymm(struct output* o) {
  uint64_t h = HASH_START;
  __m256d first = _mm256_setzero_pd();
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    __m256d a[8];
    for (int k = 0; k < 8; ++k)
      a[k] = _mm256_set_pd(i + k * 0.125, i - k * 0.5, (i + 1) * (k + 1) / 3.0, -(double)k / 7.0);
    const __m256d r = abi_ymm_sum(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say(o, "ymm", &first, sizeof first, h);
}

__attribute__((target("avx512f"))) NOINLINE static void check_zmm(struct output* o) {
  uint64_t h = HASH_START;
  __m512d first = _mm512_setzero_pd();
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    __m512d a[8];
    for (int k = 0; k < 8; ++k)
      a[k] = _mm512_set_pd(i + k * 0.125, i - k * 0.5, (i + 1) * (k + 1) / 3.0, -(double)k / 7.0,
                           i * 0.75, k * 1.5, -(double)i, (double)(i ^ k));
    const __m512d r = abi_zmm_sum(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    if (i == 0) first = r;
    h = hash_bytes(h, &r, sizeof r);
  }
  say(o, "zmm", &first, sizeof first, h);
}

NOINLINE static void run_checks(struct output* o) {
  check_long_double(o);
  check_complex_double(o);
  check_complex_long_double(o);
  check_int128(o);
  check_structs(o);
  check_argument_registers(o);
  if (__builtin_cpu_supports("avx")) check_ymm(o);
  if (__builtin_cpu_supports("avx512f")) check_zmm(o);
}

NOINLINE static void* checks_thread(void* arg) {
  run_checks(arg);
  return NULL;
}

/* Rounding upward, flush-to-zero and double precision for the x87 unit:
 * the callee's quotients and its view of the environment, and the
 * environment the program sees after the calls. */
NOINLINE static void check_fp_environment(struct output* o) {
  fenv_t saved;
  HCHECK(fegetenv(&saved) == 0);
  HCHECK(fesetround(FE_UPWARD) == 0);
  _mm_setcsr(_mm_getcsr() | 0x8000); /* FTZ */
  unsigned short x87_control;
  __asm__ volatile("fnstcw %0" : "=m"(x87_control));
  x87_control = (unsigned short)((x87_control & ~0x300) | 0x200); /* double precision */
  __asm__ volatile("fldcw %0" : : "m"(x87_control));
  uint64_t h = HASH_START;
  unsigned first = 0;
  for (int i = 0; i < iterations; ++i) {
    noise((unsigned)i);
    double q = 0;
    const unsigned seen = abi_fp_environment(1.0 + i, 3.0, &q);
    unsigned short after_control;
    __asm__ volatile("fnstcw %0" : "=m"(after_control));
    const unsigned after = ((unsigned)fegetround() << 24) ^ ((unsigned)after_control << 16) ^
                           (unsigned)(_mm_getcsr() & ~0x3fu); /* minus the exception flags */
    if (i == 0) first = seen;
    h = hash_bytes(h, &seen, sizeof seen);
    h = hash_bytes(h, &q, sizeof q);
    h = hash_bytes(h, &after, sizeof after);
  }
  HCHECK(fesetenv(&saved) == 0);
  say(o, "fp_environment", &first, sizeof first, h);
}

int main(int argc, char** argv) {
  iterations = int_arg(argc > 1 ? argv[1] : NULL, iterations);
  static struct output main_out, thread_out[2], fp_out;
  run_checks(&main_out);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i)
    HCHECK(pthread_create(&threads[i], NULL, checks_thread, &thread_out[i]) == 0);
  for (int i = 0; i < 2; ++i) HCHECK(pthread_join(threads[i], NULL) == 0);
  check_fp_environment(&fp_out);
  printf("main\n%sthread 1\n%sthread 2\n%s%s", main_out.text, thread_out[0].text,
         thread_out[1].text, fp_out.text);
  return 0;
}
