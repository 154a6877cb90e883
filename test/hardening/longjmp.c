/* Case 1: longjmp and siglongjmp out of several nested calls back into a
 * caller. Expected tree (main thread):
 *   main { run_longjmp { outer { middle { leaf; jumper { leaf } } } after { leaf }
 *                        outer { ... } after { leaf } ... (3 rounds) }
 *          run_siglongjmp { s_outer { s_middle { on_usr1 { leaf } } } after { leaf } }
 *          run_sigsetjmp_direct { s_outer2 { s_middle2 { s_jumper { leaf } } } after { leaf } } }
 * Calls made after a jump sit at the depth of the function that called
 * setjmp; the jumped-over frames are closed by the runtime. */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "hardening_common.h"

static jmp_buf env;
static sigjmp_buf senv;
volatile int sink;

NOINLINE void leaf(int x) {
  sink = x;
}

NOINLINE void jumper(int round) {
  leaf(round);
  longjmp(env, round + 1);
}
NOINLINE void middle(int round) {
  leaf(round);
  jumper(round);
  leaf(-1); /* never reached */
}
NOINLINE void outer(int round) {
  middle(round);
  leaf(-1);
}
NOINLINE void after(int x) {
  leaf(x);
}

NOINLINE int run_longjmp(void) {
  volatile int rounds = 0;
  int got = 0;
  for (int round = 0; round < 3; ++round) {
    if ((got = setjmp(env)) == 0) outer(round);
    HCHECK(got == round + 1);
    ++rounds;
    after(round);
  }
  return rounds;
}

/* siglongjmp out of a signal handler raised two calls deep. */
NOINLINE void on_usr1(int sig) {
  leaf(sig);
  siglongjmp(senv, 1);
}
NOINLINE void s_middle(void) {
  raise(SIGUSR1);
  leaf(-1);
}
NOINLINE void s_outer(void) {
  s_middle();
  leaf(-1);
}

/* siglongjmp without a signal, out of three frames. */
NOINLINE void s_jumper(void) {
  leaf(5);
  siglongjmp(senv, 2);
}
NOINLINE void s_middle2(void) {
  s_jumper();
  leaf(-1);
}
NOINLINE void s_outer2(void) {
  s_middle2();
  leaf(-1);
}

NOINLINE int run_siglongjmp(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  HCHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
  if (sigsetjmp(senv, 1) == 0) s_outer();
  after(10);
  /* SIGUSR1 must be unblocked again (sigsetjmp saved the mask). */
  sigset_t now;
  sigprocmask(SIG_BLOCK, NULL, &now);
  return sigismember(&now, SIGUSR1) ? 1 : 0;
}

NOINLINE int run_sigsetjmp_direct(void) {
  volatile int jumped = 0;
  if (sigsetjmp(senv, 0) == 0) {
    s_outer2();
  } else {
    jumped = 1;
  }
  after(20);
  return jumped;
}

int main(void) {
  const int rounds = run_longjmp();
  const int blocked = run_siglongjmp();
  const int jumped = run_sigsetjmp_direct();
  printf("rounds %d blocked %d jumped %d\n", rounds, blocked, jumped);
  return 0;
}
