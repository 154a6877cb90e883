/* Test oracle: the simplest possible recorder of -finstrument-functions
 * hooks. For each thread it writes every event, uncompressed, as a text line
 * to $PARLOT_ORACLE_DIR/<tid>:
 *   E <object basename>+<hex offset>     entry
 *   E <function> @ <object basename>+<hex offset>
 *                                        entry with its call site (the
 *                                        return address), when
 *                                        PARLOT_ORACLE_SITES is set
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

/* Prints "<object basename>+<hex offset>" of `address`, or "?". */
__attribute__((no_instrument_function)) static void oracle_where(void* address) {
  Dl_info info;
  if (dladdr(address, &info) != 0 && info.dli_fname != NULL) {
    const char* base = strrchr(info.dli_fname, '/');
    fprintf(oracle_file, "%s+%lx", base ? base + 1 : info.dli_fname,
            (unsigned long)((char*)address - (char*)info.dli_fbase));
  } else {
    fputs("?", oracle_file);
  }
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void* fn, void* site) {
  static int with_sites = -1;
  if (oracle_busy) return;
  oracle_busy = 1;
  if (with_sites < 0) with_sites = getenv("PARLOT_ORACLE_SITES") != NULL;
  if (oracle_file == NULL) oracle_file = oracle_open();
  Dl_info info;
  if (oracle_file != NULL && dladdr(fn, &info) != 0 && info.dli_fname != NULL) {
    const char* base = strrchr(info.dli_fname, '/');
    fprintf(oracle_file, "E %s+%lx", base ? base + 1 : info.dli_fname,
            (unsigned long)((char*)fn - (char*)info.dli_fbase));
    if (with_sites) {
      fputs(" @ ", oracle_file);
      oracle_where(site);
    }
    fputc('\n', oracle_file);
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
