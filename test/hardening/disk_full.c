/* A trace that outgrows its file system: 4 threads make many calls in a
 * pseudo-random order among 32 functions (a stream no codec makes small),
 * then main prints a checksum of what they computed and exits with 0.
 * Usage: disk_full [CALLS per thread, default 1000000] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>

#include "hardening_common.h"

/* f<i>: one function of the 32 (the typedef lets each use end in ';'). */
#define FN(i)                                   \
  NOINLINE unsigned f##i(unsigned x) {          \
    return x * 2654435761u + (unsigned)(i) + 1; \
  }                                             \
  typedef int f##i##_defined
FN(0);
FN(1);
FN(2);
FN(3);
FN(4);
FN(5);
FN(6);
FN(7);
FN(8);
FN(9);
FN(10);
FN(11);
FN(12);
FN(13);
FN(14);
FN(15);
FN(16);
FN(17);
FN(18);
FN(19);
FN(20);
FN(21);
FN(22);
FN(23);
FN(24);
FN(25);
FN(26);
FN(27);
FN(28);
FN(29);
FN(30);
FN(31);

NOINLINE unsigned call(unsigned which, unsigned x) {
  switch (which & 31u) {
    case 0:
      return f0(x);
    case 1:
      return f1(x);
    case 2:
      return f2(x);
    case 3:
      return f3(x);
    case 4:
      return f4(x);
    case 5:
      return f5(x);
    case 6:
      return f6(x);
    case 7:
      return f7(x);
    case 8:
      return f8(x);
    case 9:
      return f9(x);
    case 10:
      return f10(x);
    case 11:
      return f11(x);
    case 12:
      return f12(x);
    case 13:
      return f13(x);
    case 14:
      return f14(x);
    case 15:
      return f15(x);
    case 16:
      return f16(x);
    case 17:
      return f17(x);
    case 18:
      return f18(x);
    case 19:
      return f19(x);
    case 20:
      return f20(x);
    case 21:
      return f21(x);
    case 22:
      return f22(x);
    case 23:
      return f23(x);
    case 24:
      return f24(x);
    case 25:
      return f25(x);
    case 26:
      return f26(x);
    case 27:
      return f27(x);
    case 28:
      return f28(x);
    case 29:
      return f29(x);
    case 30:
      return f30(x);
    default:
      return f31(x);
  }
}

static long g_calls = 1000000;

struct Work {
  unsigned seed;
  unsigned result;
};

NOINLINE void* worker(void* arg) {
  struct Work* w = arg;
  unsigned state = w->seed, acc = 0;
  for (long i = 0; i < g_calls; ++i) {
    state = state * 1103515245u + 12345u; /* which function: the LCG's high bits */
    acc ^= call(state >> 24, acc);
  }
  w->result = acc;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_calls = int_arg(argv[1], 1000000);
  pthread_t threads[4];
  struct Work work[4];
  for (int i = 0; i < 4; ++i) {
    work[i].seed = 7u + 31u * (unsigned)i;
    HCHECK(pthread_create(&threads[i], NULL, worker, &work[i]) == 0);
  }
  unsigned sum = 0;
  for (int i = 0; i < 4; ++i) {
    HCHECK(pthread_join(threads[i], NULL) == 0);
    sum ^= work[i].result;
  }
  printf("checksum %08x\n", sum);
  return 0;
}
