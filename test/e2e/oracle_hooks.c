/* Test oracle: the simplest possible recorder of -finstrument-functions
 * hooks. For each thread it writes every event, uncompressed, as a text line
 * to $PARLOT_ORACLE_DIR/<tid>:
 *   E <object basename>+<hex offset>     entry
 *   X                                    exit
 *   P / R                                parlot_pause() / parlot_resume()
 * (it defines those two of the user API, include/parlot/parlot.h, so a
 * test can drop what a paused Parlot must not record).
 * The end-to-end tests compare Parlot's decoded traces against it. No
 * correction, no compression, nothing shared with the runtime.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread FILE* oracle_file;
static __thread int oracle_busy;

__attribute__((no_instrument_function)) static FILE* oracle_open(void) {
  const char* dir = getenv("PARLOT_ORACLE_DIR");
  if (dir == NULL) return NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/%ld", dir, (long)syscall(SYS_gettid));
  return fopen(path, "w"); /* flushed by exit(); threads' files stay open */
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* fn, void* site) {
  (void)site;
  if (oracle_busy) return;
  oracle_busy = 1;
  if (oracle_file == NULL) oracle_file = oracle_open();
  Dl_info info;
  if (oracle_file != NULL && dladdr(fn, &info) != 0 && info.dli_fname != NULL) {
    const char* base = strrchr(info.dli_fname, '/');
    fprintf(oracle_file, "E %s+%lx\n", base ? base + 1 : info.dli_fname,
            (unsigned long)((char*)fn - (char*)info.dli_fbase));
  }
  oracle_busy = 0;
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void* fn, void* site) {
  (void)fn;
  (void)site;
  if (oracle_busy || oracle_file == NULL) return;
  fputs("X\n", oracle_file);
}

__attribute__((no_instrument_function)) void parlot_pause(void) {
  if (oracle_file == NULL) oracle_file = oracle_open();
  if (oracle_file != NULL) fputs("P\n", oracle_file);
}

__attribute__((no_instrument_function)) void parlot_resume(void) {
  if (oracle_file != NULL) fputs("R\n", oracle_file);
}
