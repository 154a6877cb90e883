/* Shared by the hardening test programs (C and C++): every function that
 * shows in an expected call tree is noinline, so the tree is the same at -O0
 * and -O2, and `leaf` has an observable side effect so it is never dropped. */
#ifndef PARLOT_HARDENING_COMMON_H
#define PARLOT_HARDENING_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
/* noipa: no inlining, cloning (.constprop, .isra) or identical-code folding. */
#define NOINLINE __attribute__((noinline, noipa))
#endif
/* Not instrumented: helpers whose calls must not show in the trace. */
#define NOTRACE __attribute__((no_instrument_function))

/* Aborts with a message when a precondition of the test program fails. */
#define HCHECK(cond)                                                           \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(70);                                                                \
    }                                                                          \
  } while (0)

/* atoi is an extern inline in glibc's headers: clang -O2 instruments it
 * where it is inlined (it then shows as a call), so the programs use this. */
NOTRACE static inline int int_arg(const char* s, int fallback) {
  return s != NULL ? (int)strtol(s, NULL, 10) : fallback;
}

#endif
