/* A new user's program: traced with parlot record, calls the user API. */
#include <parlot/parlot.h>
#include <stdio.h>

__attribute__((noinline)) int leaf(int x) {
  return x + 1;
}
__attribute__((noinline)) int branch(int x) {
  return leaf(x) * 2;
}
__attribute__((noinline)) int quiet(int x) {
  return leaf(x) - 1;
}

int main(void) {
  int s = branch(1);
  parlot_pause();
  s += quiet(2); /* not recorded */
  parlot_resume();
  s += branch(3);
  printf("sum %d tracing %d\n", s, parlot_is_tracing());
  return 0;
}
