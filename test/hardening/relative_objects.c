/* Shared objects reached by relative names, as in a development tree: the
 * linked library relative_lib.c (found through a relative LD_LIBRARY_PATH,
 * set by the test) and the plugin relative_plugin.c, dlopened by the
 * relative path PLUGIN. Then the program moves to DIR and calls both.
 * Usage: relative_objects PLUGIN DIR
 *   main{ rel_lib_work{rel_lib_leaf x 2} rel_plugin_work{rel_plugin_leaf x 2} }
 * Prints "sum 4". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "hardening_common.h"

int rel_lib_work(int n);

int main(int argc, char** argv) {
  HCHECK(argc == 3);
  void* plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (plugin == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 70;
  }
  int (*plugin_work)(int) = (int (*)(int))dlsym(plugin, "rel_plugin_work");
  HCHECK(plugin_work != NULL);
  HCHECK(chdir(argv[2]) == 0);
  const int sum = rel_lib_work(2) + plugin_work(2);
  printf("sum %d\n", sum);
  return 0;
}
