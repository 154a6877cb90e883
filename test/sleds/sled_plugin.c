/* A library built with sleds, dlopened by sled_fixture (mode dlopen). */
#define NOINLINE __attribute__((noinline))
volatile int plugin_sink;
NOINLINE int plugin_inner(int x) {
  plugin_sink = x;
  return x * 2;
}
NOINLINE int plugin_entry(int x) {
  return plugin_inner(x) + 1;
}
