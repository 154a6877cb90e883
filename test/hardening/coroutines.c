/* Case 8: makecontext/swapcontext coroutines. Usage: coroutines MODE
 *   low   the main thread runs a coroutine on a stack in .bss (below the
 *         main thread's stack): run_coroutines resumes it three times; the
 *         coroutine runs co_body { step(1) yield step(2) yield step(3) } and
 *         returns to run_coroutines through uc_link
 *   high  the same in a thread whose stack lies below the coroutine's stack
 *         (mmap'd first): co_worker { run_coroutines { ... } } */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "hardening_common.h"

volatile int sink;
static ucontext_t caller_ctx, co_ctx;
static char low_stack[1 << 16] __attribute__((aligned(64)));
static void* co_stack;
static size_t co_stack_size;

NOINLINE void step(int x) {
  sink = x;
}

NOINLINE void yield(void) {
  HCHECK(swapcontext(&co_ctx, &caller_ctx) == 0);
}

NOINLINE void co_body(void) {
  step(1);
  yield();
  step(2);
  yield();
  step(3);
}

NOINLINE void resume(void) {
  HCHECK(swapcontext(&caller_ctx, &co_ctx) == 0);
}

NOINLINE int run_coroutines(void) {
  HCHECK(getcontext(&co_ctx) == 0);
  co_ctx.uc_stack.ss_sp = co_stack;
  co_ctx.uc_stack.ss_size = co_stack_size;
  co_ctx.uc_link = &caller_ctx;
  makecontext(&co_ctx, co_body, 0);
  for (int i = 0; i < 3; ++i) resume();
  return sink;
}

NOINLINE void* co_worker(void* arg) {
  (void)arg;
  return (void*)(intptr_t)run_coroutines();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "low";
  int result = 0;
  if (strcmp(mode, "low") == 0) {
    co_stack = low_stack;
    co_stack_size = sizeof low_stack;
    HCHECK((uintptr_t)low_stack < (uintptr_t)&mode);
    result = run_coroutines();
  } else {
    co_stack_size = 1 << 16;
    co_stack =
        mmap(NULL, co_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const size_t size = 1 << 20;
    void* stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    HCHECK(co_stack != MAP_FAILED && stack != MAP_FAILED);
    HCHECK((uintptr_t)stack + size <= (uintptr_t)co_stack);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    HCHECK(pthread_attr_setstack(&attr, stack, size) == 0);
    pthread_t t;
    void* ret;
    HCHECK(pthread_create(&t, &attr, co_worker, NULL) == 0);
    HCHECK(pthread_join(t, &ret) == 0);
    result = (int)(intptr_t)ret;
  }
  printf("result %d\n", result);
  return 0;
}
