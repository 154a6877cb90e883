/* The instrumented shared library relative_objects is linked with, found at
 * run time through a relative LD_LIBRARY_PATH:
 * rel_lib_work(n) { rel_lib_leaf x n }. No constructor: its functions are
 * first seen after the program's chdir. */
#include "hardening_common.h"

volatile int rel_lib_sink;

NOINLINE void rel_lib_leaf(int x) {
  rel_lib_sink = x;
}
NOINLINE int rel_lib_work(int n) {
  for (int i = 0; i < n; ++i) rel_lib_leaf(i);
  return n;
}
