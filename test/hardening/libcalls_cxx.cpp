// Case 11 (C++): library calls left by an exception or a thread
// cancellation (PARLOT_LIBCALLS=1). Prints what an untraced run prints:
//   caught at        std::vector::at throws from inside libstdc++
//                    (std::__throw_out_of_range_fmt), caught in element_or_zero
//   from comparator  an exception thrown by a qsort comparator crosses
//                    qsort's frame (C, in libc) to the catch in sort_or_catch
//   ~Noisy           twice: a thread leaves qsort's callback with
//                    pthread_exit, another is cancelled inside pause(); both
//                    unwind through the library call and run the destructor
//                    of their Noisy object
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "hardening_common.h"

struct Noisy {
  NOINLINE ~Noisy() { std::puts("~Noisy"); }
};

NOINLINE int element_or_zero(const std::vector<int>& v, std::size_t i) {
  try {
    return v.at(i);
  } catch (const std::out_of_range& e) {
    std::puts("caught at");
    return 0;
  }
}

NOINLINE int throwing_compare(const void*, const void*) {
  throw std::runtime_error("from comparator");
}

NOINLINE int sort_or_catch() {
  int v[2] = {2, 1};
  try {
    std::qsort(v, 2, sizeof v[0], throwing_compare);
  } catch (const std::exception& e) {
    std::puts(e.what());
    return 1;
  }
  return 0;
}

NOINLINE int exit_thread(const void*, const void*) {
  pthread_exit(nullptr);
}

NOINLINE void* exits_in_callback(void*) {
  Noisy noisy;
  int v[2] = {2, 1};  // not bsearch: glibc's headers inline it at -O2
  std::qsort(v, 2, sizeof v[0], exit_thread);
  return nullptr;
}

NOINLINE void* sleeps_until_cancelled(void*) {
  Noisy noisy;
  for (;;) pause();
}

int main() {
  const std::vector<int> two(2, 1);
  const int zero = element_or_zero(two, 5) + sort_or_catch() - 1;
  pthread_t t;
  HCHECK(pthread_create(&t, nullptr, exits_in_callback, nullptr) == 0);
  pthread_join(t, nullptr);
  HCHECK(pthread_create(&t, nullptr, sleeps_until_cancelled, nullptr) == 0);
  usleep(20000);
  pthread_cancel(t);
  pthread_join(t, nullptr);
  return zero;
}
