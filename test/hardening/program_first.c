/* Issue 8: the program comes first. Ordinary programs that manage their own
 * file descriptors, signal dispositions and exits; each mode prints what it
 * observed, so the test compares the traced run with the untraced one.
 * Usage: program_first MODE [ARGS]
 *   closefrom DIR N   work(N), closes fds 3..1023, opens 6 files DIR/own-<i>,
 *                     work(N), writes one line in each; prints their fds and
 *                     sizes: main{ work{N x leaf} work{N x leaf} }
 *   dup2 DIR N        work(N), dup2s 3 log files onto fds 5, 6, 7, work(N),
 *                     forks: the child runs child_work(N) and writes
 *                     "child" to 5, 6, 7; the parent then "parent"; prints
 *                     the logs: main{ work work } and main{ child_work }
 *   first_fd          work(3), then prints the fd its first open() returns
 *   rlimit T          RLIMIT_NOFILE 16, T threads thread_body{ leaf } that
 *                     each open and close /dev/null once all have started;
 *                     prints the failed opens
 *   flags SIG         for signal SIG: SA_RESTART (a blocked read resumes),
 *                     SA_NODEFER, sa_mask, SA_ONSTACK (on and off),
 *                     SA_SIGINFO, signal()'s BSD semantics and sigaction's
 *                     old action; prints one line per check
 *   resethand SIG     a one-shot handler (SA_RESETHAND) with SIGUSR2 in its
 *                     mask, SIG raised twice: the second kills
 *   refault           a one-shot SIGSEGV reporter that returns: the fault
 *                     happens again and kills
 *   alarm_exit HOW    SIGALRM every 50 us over a call-dense loop; the 20th
 *                     handler calls exit(5) or _exit(5) (HOW = exit|_exit)
 *   mass_exit T       T threads and main call exit(0) at once
 *   term_storm T      T threads calling in a loop; a child process sends
 *                     SIGTERM to this one every 20 us; main calls exit(0)
 *   fsize T           RLIMIT_FSIZE 64 KiB; thread 1 makes many calls, T
 *                     others few; exits with 0
 *   chdir_fork        work(3), chdir("moved"), fork: the child runs
 *                     child_work(3)
 *   exec FN TARGET    work(3), then execs TARGET through exec function FN
 *   frozen            a thread named "frozen" calls work() in a loop until
 *                     libfreeze_writes.so (preloaded by the test) freezes it
 *                     inside a write of its trace file; then main calls
 *                     exit(0): main{ work{3 x leaf} } */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening_common.h"

extern char** environ;

volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}
NOINLINE void work(int n) {
  for (int i = 0; i < n; ++i) leaf(i);
}
NOINLINE void child_work(int n) {
  for (int i = 0; i < n; ++i) leaf(i);
}

/* ---- file descriptors ---- */

NOTRACE static int open_own(const char* dir, const char* name, int i) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%d", dir, name, i);
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
}

NOTRACE static long file_size(const char* dir, const char* name, int i) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s-%d", dir, name, i);
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

NOTRACE static void print_file(const char* dir, const char* name, int i) {
  char path[4096], buf[256];
  snprintf(path, sizeof path, "%s/%s-%d", dir, name, i);
  FILE* f = fopen(path, "r");
  HCHECK(f != NULL);
  const size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  printf("%s-%d: %zu bytes: %s", name, i, n, buf);
}

NOTRACE static void run_closefrom(const char* dir, int n) {
  work(n);
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  int fds[6];
  for (int i = 0; i < 6; ++i) HCHECK((fds[i] = open_own(dir, "own", i)) >= 0);
  work(n);
  for (int i = 0; i < 6; ++i) {
    char line[32];
    const int len = snprintf(line, sizeof line, "line %d\n", i);
    HCHECK(write(fds[i], line, (size_t)len) == len);
    close(fds[i]);
  }
  printf("fds");
  for (int i = 0; i < 6; ++i) printf(" %d", fds[i]);
  printf("\nsizes");
  for (int i = 0; i < 6; ++i) printf(" %ld", file_size(dir, "own", i));
  printf("\n");
}

NOTRACE static void write_logs(const char* who) {
  for (int fd = 5; fd <= 7; ++fd) {
    char line[32];
    const int len = snprintf(line, sizeof line, "%s %d\n", who, fd);
    if (write(fd, line, (size_t)len) != len)
      printf("%s: write to fd %d failed: %s\n", who, fd, strerror(errno));
  }
}

NOTRACE static void run_dup2(const char* dir, int n) {
  work(n);
  for (int i = 0; i < 3; ++i) {
    const int fd = open_own(dir, "log", i);
    HCHECK(fd >= 0 && dup2(fd, 5 + i) == 5 + i);
    if (fd != 5 + i) close(fd);
  }
  work(n);
  fflush(stdout);
  const pid_t child = fork();
  HCHECK(child >= 0);
  if (child == 0) {
    child_work(n);
    write_logs("child");
    exit(0);
  }
  int status = 0;
  HCHECK(waitpid(child, &status, 0) == child);
  write_logs("parent");
  for (int i = 0; i < 3; ++i) print_file(dir, "log", i);
  printf("child status %d\n", status);
}

NOTRACE static void run_first_fd(void) {
  work(3);
  const int fd = open("/dev/null", O_RDONLY);
  printf("first fd %d\n", fd);
}

static pthread_barrier_t barrier;
static int open_failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE void* thread_body(void* arg) {
  leaf((int)(intptr_t)arg);
  pthread_barrier_wait(&barrier);
  const int fd = open("/dev/null", O_RDONLY);
  if (fd < 0) {
    pthread_mutex_lock(&failures_lock);
    ++open_failures;
    pthread_mutex_unlock(&failures_lock);
  } else {
    close(fd);
  }
  return NULL;
}

NOTRACE static void run_rlimit(int threads) {
  const struct rlimit lim = {16, 16};
  HCHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0);
  pthread_t t[1024];
  HCHECK(threads <= 1024);
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  for (int i = 0; i < threads; ++i) {
    HCHECK(pthread_create(&t[i], NULL, thread_body, (void*)(intptr_t)i) == 0);
  }
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("open failures %d of %d\n", open_failures, threads);
}

/* ---- signal dispositions ---- */

static volatile sig_atomic_t handled, raised_inside, depth, max_depth, usr2_inside, usr2_seen,
    on_altstack, info_ok;
static char altstack[1 << 16] __attribute__((aligned(64)));
static int the_signal;

NOINLINE void on_usr2(int sig) {
  (void)sig;
  ++usr2_seen;
}

NOINLINE void on_sig(int sig) {
  ++handled;
  ++depth;
  if (depth > max_depth) max_depth = depth;
  const int local = 0;
  const uintptr_t a = (uintptr_t)&local;
  on_altstack = a >= (uintptr_t)altstack && a < (uintptr_t)altstack + sizeof altstack;
  if (depth == 1 && the_signal == sig && !raised_inside) {
    raised_inside = 1;
    raise(sig); /* runs nested only with SA_NODEFER, else right after */
    const int before = usr2_seen;
    raise(SIGUSR2); /* blocked here when the mask holds it */
    usr2_inside = usr2_seen != before;
  }
  --depth;
}

NOINLINE void on_sig_info(int sig, siginfo_t* info, void* context) {
  info_ok = context != NULL && info->si_signo == sig && info->si_code == SI_TKILL &&
            info->si_pid == getpid();
  ++handled;
}

NOTRACE static void set_action(int sig, void (*h)(int), int flags, int mask_usr2) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = h;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  if (mask_usr2) sigaddset(&sa.sa_mask, SIGUSR2);
  HCHECK(sigaction(sig, &sa, NULL) == 0);
}

static int pipe_fds[2];
static pthread_t main_thread;

NOTRACE static void* signal_then_write(void* arg) {
  (void)arg;
  usleep(100 * 1000);
  pthread_kill(main_thread, the_signal);
  usleep(100 * 1000);
  HCHECK(write(pipe_fds[1], "x", 1) == 1);
  return NULL;
}

/* A read blocked when the signal arrives: resumed (SA_RESTART) or EINTR. */
NOTRACE static void check_restart(const char* what) {
  HCHECK(pipe(pipe_fds) == 0);
  pthread_t t;
  handled = 0;
  HCHECK(pthread_create(&t, NULL, signal_then_write, NULL) == 0);
  char c;
  const ssize_t n = read(pipe_fds[0], &c, 1);
  const int e = n < 0 ? errno : 0;
  pthread_join(t, NULL);
  if (n < 0) HCHECK(read(pipe_fds[0], &c, 1) == 1);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  printf("%s: read %zd (%s), handled %d\n", what, n, e != 0 ? strerror(e) : "ok", (int)handled);
}

NOTRACE static void check_raise(const char* what) {
  handled = raised_inside = max_depth = usr2_inside = usr2_seen = on_altstack = 0;
  raise(the_signal);
  printf(
      "%s: handled %d, max depth %d, SIGUSR2 inside the handler %d, after %d, on the altstack "
      "%d\n",
      what, (int)handled, (int)max_depth, (int)usr2_inside, (int)usr2_seen, (int)on_altstack);
}

NOTRACE static void print_old_action(const char* what, int sig) {
  struct sigaction old;
  HCHECK(sigaction(sig, NULL, &old) == 0);
  const int known = SA_RESTART | SA_RESETHAND | SA_NODEFER | SA_ONSTACK | SA_SIGINFO;
  printf(
      "%s: old action handler %s, flags %#x (documented %#x), mask has SIGUSR2 %d, has the "
      "signal %d\n",
      what,
      old.sa_handler == on_sig                                         ? "on_sig"
      : (old.sa_flags & SA_SIGINFO) && old.sa_sigaction == on_sig_info ? "on_sig_info"
      : old.sa_handler == SIG_DFL                                      ? "SIG_DFL"
      : old.sa_handler == SIG_IGN                                      ? "SIG_IGN"
                                                                       : "other",
      (unsigned)old.sa_flags, (unsigned)(old.sa_flags & known), sigismember(&old.sa_mask, SIGUSR2),
      sigismember(&old.sa_mask, sig));
}

NOTRACE static void run_flags(int sig) {
  the_signal = sig;
  main_thread = pthread_self();
  work(3);
  signal(SIGUSR2, on_usr2);
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  HCHECK(sigaltstack(&ss, NULL) == 0);

  HCHECK(signal(sig, on_sig) != SIG_ERR);
  print_old_action("signal()", sig);
  raised_inside = 1; /* the handler raises nothing while a read waits */
  check_restart("signal() restart");
  check_raise("signal() raise");

  set_action(sig, on_sig, 0, 0);
  print_old_action("flags 0", sig);
  raised_inside = 1;
  check_restart("flags 0 restart");
  check_raise("flags 0 raise");

  set_action(sig, on_sig, SA_RESTART | SA_NODEFER, 1);
  print_old_action("SA_RESTART|SA_NODEFER, mask SIGUSR2", sig);
  raised_inside = 1;
  check_restart("SA_RESTART|SA_NODEFER restart");
  check_raise("SA_RESTART|SA_NODEFER, mask SIGUSR2 raise");

  set_action(sig, on_sig, SA_ONSTACK, 1);
  print_old_action("SA_ONSTACK, mask SIGUSR2", sig);
  check_raise("SA_ONSTACK, mask SIGUSR2 raise");

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sig_info;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  HCHECK(sigaction(sig, &sa, NULL) == 0);
  print_old_action("SA_SIGINFO|SA_RESTART", sig);
  handled = info_ok = 0;
  raise(sig);
  printf("SA_SIGINFO: handled %d, siginfo right %d\n", (int)handled, (int)info_ok);

  set_action(sig, SIG_IGN, 0, 0);
  print_old_action("SIG_IGN", sig);
  raise(sig);
  printf("ignored and still here\n");
  set_action(sig, SIG_DFL, 0, 0);
  print_old_action("SIG_DFL", sig);
}

NOTRACE static void run_resethand(int sig) {
  the_signal = 0; /* on_sig raises nothing */
  work(3);
  signal(SIGUSR2, on_usr2);
  set_action(sig, on_sig, SA_RESETHAND, 1);
  print_old_action("SA_RESETHAND", sig);
  raise(sig);
  printf("handled %d\n", (int)handled);
  print_old_action("after the first signal", sig);
  fflush(stdout);
  raise(sig);
  printf("survived the second signal\n");
}

NOINLINE void crash_reporter(int sig) {
  static const char msg[] = "reporter ran\n";
  (void)sig;
  HCHECK(write(STDOUT_FILENO, msg, sizeof msg - 1) == (ssize_t)(sizeof msg - 1));
}

NOINLINE void fault(void) {
  *(volatile int*)(uintptr_t)sink = 1;
}

NOTRACE static void run_refault(void) {
  work(3);
  fflush(stdout);
  set_action(SIGSEGV, crash_reporter, SA_RESETHAND, 0);
  sink = 0;
  fault();
}

/* ---- exits ---- */

static int use_underscore_exit;
static volatile sig_atomic_t ticks;

NOINLINE void on_alarm(int sig) {
  (void)sig;
  if (++ticks == 20) {
    if (use_underscore_exit) _exit(5);
    exit(5);
  }
}

NOINLINE int level3(int x) {
  sink = x;
  return x & 7;
}
NOINLINE int level2(int x) {
  return level3(x) + 1;
}
NOINLINE int level1(int x) {
  return level2(x) + 1;
}
NOINLINE long run_loop(int n) {
  long sum = 0;
  for (int i = 0; n < 0 || i < n; ++i) sum += level1(i);
  return sum;
}

NOTRACE static void run_alarm_exit(const char* how) {
  use_underscore_exit = strcmp(how, "_exit") == 0;
  set_action(SIGALRM, on_alarm, SA_RESTART, 0);
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_interval.tv_usec = 50;
  it.it_value.tv_usec = 50;
  HCHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
  run_loop(-1);
}

NOINLINE void exiter(void) {
  work(3);
  pthread_barrier_wait(&barrier);
  exit(0);
}

NOINLINE void* exiting_thread(void* arg) {
  (void)arg;
  exiter();
  return NULL;
}

NOTRACE static void run_mass_exit(int threads) {
  pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 18);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    HCHECK(pthread_create(&t, &attr, exiting_thread, NULL) == 0);
  }
  exiter();
}

static volatile int stop_looping;
NOINLINE void* looping_thread(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  while (!stop_looping) level1(1);
  return NULL;
}

NOTRACE static void run_term_storm(int threads) {
  pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    HCHECK(pthread_create(&t, NULL, looping_thread, NULL) == 0);
  }
  pthread_barrier_wait(&barrier);
  run_loop(20000);
  const pid_t parent = getpid();
  fflush(stdout);
  const pid_t pest = fork();
  HCHECK(pest >= 0);
  if (pest == 0) {
    /* A job scheduler that insists: untraced, not instrumented code. */
    while (syscall(SYS_kill, parent, SIGTERM) == 0) usleep(20);
    syscall(SYS_exit_group, 0);
  }
  usleep(2000); /* the storm has begun */
  exit(0);
}

NOINLINE void* busy_thread(void* arg) {
  work((int)(intptr_t)arg);
  return NULL;
}

NOTRACE static void run_fsize(int threads) {
  signal(SIGXFSZ, SIG_IGN);
  const struct rlimit lim = {64 * 1024, 64 * 1024};
  HCHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
  pthread_t big;
  HCHECK(pthread_create(&big, NULL, busy_thread, (void*)(intptr_t)1000000) == 0);
  pthread_join(big, NULL);
  for (int i = 0; i < threads; ++i) {
    pthread_t t;
    HCHECK(pthread_create(&t, NULL, busy_thread, (void*)(intptr_t)3) == 0);
    pthread_join(t, NULL);
  }
  printf("done\n");
}

NOTRACE static void run_chdir_fork(void) {
  work(3);
  HCHECK(mkdir("moved", 0700) == 0 && chdir("moved") == 0);
  fflush(stdout);
  const pid_t child = fork();
  HCHECK(child >= 0);
  if (child == 0) {
    child_work(3);
    exit(0);
  }
  int status = 0;
  HCHECK(waitpid(child, &status, 0) == child && status == 0);
  printf("child done\n");
}

NOTRACE static void run_exec(const char* fn, const char* target) {
  work(3);
  fflush(stdout);
  char* const argv[] = {(char*)target, (char*)fn, NULL};
  const char* base = strrchr(target, '/') + 1;
  if (strcmp(fn, "execve") == 0) {
    execve(target, argv, environ);
  } else if (strcmp(fn, "execv") == 0) {
    execv(target, argv);
  } else if (strcmp(fn, "execvp") == 0) {
    execvp(target, argv);
  } else if (strcmp(fn, "execvpe") == 0) {
    execvpe(target, argv, environ);
  } else if (strcmp(fn, "execl") == 0) {
    execl(target, target, fn, (char*)NULL);
  } else if (strcmp(fn, "execlp") == 0) {
    execlp(target, target, fn, (char*)NULL);
  } else if (strcmp(fn, "execle") == 0) {
    execle(target, target, fn, (char*)NULL, environ);
  } else if (strcmp(fn, "fexecve") == 0) {
    const int fd = open(target, O_RDONLY | O_CLOEXEC);
    HCHECK(fd >= 0);
    fexecve(fd, argv, environ);
  } else if (strcmp(fn, "execveat") == 0) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", (int)(base - target), target);
    const int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    HCHECK(dfd >= 0);
    execveat(dfd, base, argv, environ, 0);
  }
  printf("%s failed: %s\n", fn, strerror(errno));
  exit(1);
}

NOINLINE void* frozen_thread(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "frozen");
  for (;;) work(1000);
  return NULL;
}

NOTRACE static void run_frozen(void) {
  work(3);
  volatile int* frozen = (volatile int*)dlsym(RTLD_DEFAULT, "parlot_test_frozen_in_write");
  HCHECK(frozen != NULL);
  pthread_t t;
  HCHECK(pthread_create(&t, NULL, frozen_thread, NULL) == 0);
  for (int i = 0; i < 5000 && *frozen == 0; ++i) usleep(1000);
  printf("frozen %d\n", *frozen);
  fflush(stdout);
  exit(0);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "first_fd";
  const char* a2 = argc > 2 ? argv[2] : NULL;
  const char* a3 = argc > 3 ? argv[3] : NULL;
  if (strcmp(mode, "closefrom") == 0) {
    run_closefrom(a2, int_arg(a3, 2000));
  } else if (strcmp(mode, "dup2") == 0) {
    run_dup2(a2, int_arg(a3, 2000));
  } else if (strcmp(mode, "first_fd") == 0) {
    run_first_fd();
  } else if (strcmp(mode, "rlimit") == 0) {
    run_rlimit(int_arg(a2, 64));
  } else if (strcmp(mode, "flags") == 0) {
    run_flags(int_arg(a2, SIGTERM));
  } else if (strcmp(mode, "resethand") == 0) {
    run_resethand(int_arg(a2, SIGINT));
  } else if (strcmp(mode, "refault") == 0) {
    run_refault();
  } else if (strcmp(mode, "alarm_exit") == 0) {
    run_alarm_exit(a2 != NULL ? a2 : "exit");
  } else if (strcmp(mode, "mass_exit") == 0) {
    run_mass_exit(int_arg(a2, 500));
  } else if (strcmp(mode, "term_storm") == 0) {
    run_term_storm(int_arg(a2, 8));
  } else if (strcmp(mode, "fsize") == 0) {
    run_fsize(int_arg(a2, 3));
  } else if (strcmp(mode, "chdir_fork") == 0) {
    run_chdir_fork();
  } else if (strcmp(mode, "frozen") == 0) {
    run_frozen();
  } else if (strcmp(mode, "exec") == 0) {
    run_exec(a2, a3);
  }
  return 0;
}
