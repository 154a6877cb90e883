/* Case 5: signal handlers that run instrumented code.
 * Usage: signals MODE [N]
 *   raise          main { s_outer { s_inner { on_usr1 { leaf } leaf } } }: a
 *                  synchronous signal two calls deep; the handler nests under
 *                  the frame that raised it
 *   altstack_low   the same on the main thread with the handler on a
 *                  sigaltstack in .bss (below the main thread's stack)
 *   altstack_high  a thread whose stack lies below its sigaltstack:
 *                  alt_worker { s_outer { s_inner { on_usr1 { leaf } leaf } } }
 *   timer          SIGPROF (ITIMER_PROF) and SIGALRM (ITIMER_REAL), both every
 *                  50 us, while main { run_loop { N x level1 { level2 { level3 } } } }
 *                  runs; handlers on_tick { tick_leaf } interrupt hooks as well
 *                  as code between hooks. Prints "sum S ticks T". */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "hardening_common.h"

volatile int sink;
/* Handlers of SIGPROF and SIGALRM nest: a plain ++ could lose a count
 * when one interrupts the other between the load and the store. */
static long ticks;
static char low_altstack[1 << 16] __attribute__((aligned(64)));

NOINLINE void leaf(int x) {
  sink = x;
}

NOINLINE void on_usr1(int sig) {
  leaf(sig);
}

NOINLINE void s_inner(void) {
  raise(SIGUSR1);
  leaf(2);
}
NOINLINE void s_outer(void) {
  s_inner();
}

NOTRACE static void install(int sig, void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  HCHECK(sigaction(sig, &sa, NULL) == 0);
}

NOTRACE static void use_altstack(void* base, size_t size) {
  stack_t ss;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = base;
  ss.ss_size = size;
  HCHECK(sigaltstack(&ss, NULL) == 0);
}

/* ---- altstack above the interrupted thread's stack ---- */
static void* high_altstack;
NOINLINE void* alt_worker(void* arg) {
  (void)arg;
  use_altstack(high_altstack, 1 << 16);
  s_outer();
  return NULL;
}

NOTRACE static void run_altstack_high(void) {
  /* mmap hands out addresses downwards: the thread stack mapped second lies
   * below the altstack mapped first. */
  const size_t stack_size = 1 << 20;
  high_altstack = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  void* stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  HCHECK(high_altstack != MAP_FAILED && stack != MAP_FAILED);
  HCHECK((uintptr_t)stack + stack_size <= (uintptr_t)high_altstack);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  HCHECK(pthread_attr_setstack(&attr, stack, stack_size) == 0);
  pthread_t t;
  HCHECK(pthread_create(&t, &attr, alt_worker, NULL) == 0);
  HCHECK(pthread_join(t, NULL) == 0);
  printf("altstack above the thread stack\n");
}

/* ---- high-rate timer signals over a call-dense loop ---- */
NOINLINE void tick_leaf(int x) {
  sink = x;
}
NOINLINE void on_tick(int sig) {
  __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED);
  tick_leaf(sig);
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
  for (int i = 0; i < n; ++i) sum += level1(i);
  return sum;
}

NOTRACE static void set_timers(long usec) {
  struct itimerval it;
  memset(&it, 0, sizeof it);
  it.it_interval.tv_usec = usec;
  it.it_value.tv_usec = usec;
  HCHECK(setitimer(ITIMER_PROF, &it, NULL) == 0);
  HCHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "raise";
  if (strcmp(mode, "raise") == 0) {
    install(SIGUSR1, on_usr1, 0);
    s_outer();
    printf("raised\n");
  } else if (strcmp(mode, "altstack_low") == 0) {
    use_altstack(low_altstack, sizeof low_altstack);
    HCHECK((uintptr_t)low_altstack < (uintptr_t)&mode);
    install(SIGUSR1, on_usr1, SA_ONSTACK);
    s_outer();
    printf("altstack below the main stack\n");
  } else if (strcmp(mode, "altstack_high") == 0) {
    install(SIGUSR1, on_usr1, SA_ONSTACK);
    run_altstack_high();
  } else if (strcmp(mode, "timer") == 0) {
    const int n = int_arg(argc > 2 ? argv[2] : NULL, 300000);
    install(SIGPROF, on_tick, SA_RESTART);
    install(SIGALRM, on_tick, SA_RESTART);
    set_timers(50);
    const long sum = run_loop(n);
    set_timers(0);
    printf("sum %ld ticks %ld\n", sum, __atomic_load_n(&ticks, __ATOMIC_RELAXED));
  }
  return 0;
}
