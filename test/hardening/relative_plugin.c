/* The instrumented plugin relative_objects dlopens by a relative path:
 * rel_plugin_work(n) { rel_plugin_leaf x n }. No constructor: its functions
 * are first seen after the program's chdir. */
#include "hardening_common.h"

volatile int rel_plugin_sink;

NOINLINE void rel_plugin_leaf(int x) {
  rel_plugin_sink = x;
}
NOINLINE int rel_plugin_work(int n) {
  for (int i = 0; i < n; ++i) rel_plugin_leaf(i);
  return n;
}
