/* Case 11: calls into uninstrumented shared libraries (PARLOT_LIBCALLS=1).
 * Built lazily bound and with -z now (libcalls_now_*). Usage: libcalls MODE
 *   qsort      main { sort_numbers { qsort { N x by_value } } printf }: a
 *              library calling back into the program nests the callback
 *   longjmp    main { jump_through_qsort { qsort { jump_out } }
 *              after_jump { getpid } printf }: a longjmp out of a callback
 *              ends the library call it crossed
 *   signal     main { raise { on_usr1 { getpid } } printf }: a handler that
 *              runs during a library call nests in it
 *   exit       main { qsort { exit_in_callback } }, then the destructor: exit()
 *              inside a library call
 *   thread     a thread: in_thread { qsort { exit_thread_in_callback } }:
 *              pthread_exit inside a library call (forced unwinding through it)
 *   processes  main { fork waitpid system posix_spawnp waitpid printf }; the
 *              forked child: main { fork child_work { getpid } }
 *   pointer    main { call_through_pointer printf }: a call through a pointer
 *              from dlsym does not go through the GOT and is not recorded
 *   backtrace  main { qsort { find_main } printf }: glibc's backtrace()
 *              unwinds through a library call into main (the runtime
 *              interposes backtrace: not recorded)
 *   frames     main { frames_through_qsort { qsort { record_frames } }
 *              (dladdr, strrchr, printf per frame) }:
 *              the frames backtrace() sees from a callback, printed as
 *              object+offset and name, the same as untraced
 *   dlopen P   main { plugin_init { plugin_leaf } usleep plugin_pid { getpid }
 *              dlclose { plugin_fini { plugin_leaf } } printf }: the plugin P
 *              (dlopened, so patched by the idle flusher during the usleep;
 *              run with PARLOT_FLUSH_MS=20) calls into the C library
 * Every mode also runs before_main { getppid } (a constructor) and
 * after_main { getppid } (a destructor). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

extern char** environ;
static volatile int compares;
static jmp_buf jump_target;
static volatile int sink;
static volatile int main_found;

__attribute__((constructor)) NOINLINE static void before_main(void) {
  sink = (int)getppid();
}

__attribute__((destructor)) NOINLINE static void after_main(void) {
  sink = (int)getppid();
}

NOINLINE static int by_value(const void* a, const void* b) {
  ++compares;
  return *(const int*)a - *(const int*)b;
}

NOINLINE static void sort_numbers(void) {
  int v[4] = {4, 2, 3, 1};
  qsort(v, 4, sizeof v[0], by_value);
  HCHECK(v[0] == 1 && v[3] == 4);
}

NOINLINE static int jump_out(const void* a, const void* b) {
  (void)a;
  (void)b;
  longjmp(jump_target, 1);
}

NOINLINE static void jump_through_qsort(void) {
  int v[2] = {2, 1};
  qsort(v, 2, sizeof v[0], jump_out);
}

NOINLINE static void after_jump(void) {
  sink = (int)getpid();
}

NOINLINE static void on_usr1(int sig) {
  (void)sig;
  sink = (int)getpid();
}

NOINLINE static int exit_in_callback(const void* a, const void* b) {
  (void)a;
  (void)b;
  fflush(stdout);
  exit(3);
}

NOINLINE static int exit_thread_in_callback(const void* key, const void* member) {
  (void)key;
  (void)member;
  pthread_exit(NULL);
}

NOINLINE static void* in_thread(void* arg) {
  (void)arg;
  /* Not bsearch: glibc's headers inline it at -O2. */
  int v[2] = {2, 1};
  qsort(v, 2, sizeof v[0], exit_thread_in_callback);
  return NULL;
}

NOINLINE static void child_work(void) {
  sink = (int)getpid();
}

NOINLINE static void call_through_pointer(void) {
  pid_t (*f)(void) = (pid_t(*)(void))dlsym(RTLD_DEFAULT, "getpid");
  HCHECK(f != NULL);
  sink = (int)f();
}

NOINLINE static int find_main(const void* a, const void* b) {
  (void)a;
  (void)b;
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) != 0 && info.dli_sname != NULL &&
        strcmp(info.dli_sname, "main") == 0) {
      main_found = 1;
    }
  }
  return 0;
}

/* The frames backtrace() sees from a qsort callback (the first call),
 * printed by main as "object+offset name" (object: the file's base name;
 * dladdr's nearest dynamic symbol or "?"). Not static: named by dladdr. */
static void* seen_frames[64];
static int seen_count;

NOINLINE int record_frames(const void* a, const void* b) {
  if (seen_count == 0) seen_count = backtrace(seen_frames, 64);
  return *(const int*)a - *(const int*)b;
}

NOINLINE void frames_through_qsort(void) {
  int v[2] = {2, 1};
  qsort(v, 2, sizeof v[0], record_frames);
}

NOTRACE static void print_frames(void) {
  for (int i = 0; i < seen_count; ++i) {
    Dl_info info;
    if (dladdr(seen_frames[i], &info) == 0) {
      printf("frame %d ?\n", i);
      continue;
    }
    const char* slash = strrchr(info.dli_fname, '/');
    printf("frame %d %s+%#lx %s\n", i, slash != NULL ? slash + 1 : info.dli_fname,
           (unsigned long)((char*)seen_frames[i] - (char*)info.dli_fbase),
           info.dli_sname != NULL ? info.dli_sname : "?");
  }
}

int main(int argc, char** argv) {
  HCHECK(argc >= 2);
  const char* mode = argv[1];
  if (strcmp(mode, "qsort") == 0) {
    sort_numbers();
    printf("compares %d\n", compares);
  } else if (strcmp(mode, "longjmp") == 0) {
    if (setjmp(jump_target) == 0) jump_through_qsort();
    after_jump();
    printf("jumped %d\n", 1);
  } else if (strcmp(mode, "signal") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    HCHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    raise(SIGUSR1);
    printf("raised %d\n", 1);
  } else if (strcmp(mode, "exit") == 0) {
    int v[2] = {2, 1};
    qsort(v, 2, sizeof v[0], exit_in_callback);
  } else if (strcmp(mode, "thread") == 0) {
    pthread_t t;
    HCHECK(pthread_create(&t, NULL, in_thread, NULL) == 0);
    pthread_join(t, NULL);
    printf("joined %d\n", 1);
  } else if (strcmp(mode, "processes") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      child_work();
      _exit(0);
    }
    waitpid(pid, NULL, 0);
    const int status = system("exit 4");
    char* spawn_argv[] = {"true", NULL};
    HCHECK(posix_spawnp(&pid, "true", NULL, NULL, spawn_argv, environ) == 0);
    waitpid(pid, NULL, 0);
    printf("system %d\n", WEXITSTATUS(status));
  } else if (strcmp(mode, "pointer") == 0) {
    call_through_pointer();
    printf("called %d\n", 1);
  } else if (strcmp(mode, "backtrace") == 0) {
    int v[2] = {2, 1};
    qsort(v, 2, sizeof v[0], find_main);
    printf("main found %d\n", main_found);
  } else if (strcmp(mode, "frames") == 0) {
    frames_through_qsort();
    print_frames();
  } else if (strcmp(mode, "dlopen") == 0) {
    HCHECK(argc == 3);
    void* plugin = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    HCHECK(plugin != NULL);
    int (*pid_of)(void) = (int (*)(void))dlsym(plugin, "plugin_pid");
    HCHECK(pid_of != NULL);
    usleep(300000);
    sink = pid_of();
    dlclose(plugin);
    printf("loaded %d\n", 1);
  } else {
    return 2;
  }
  return 0;
}
