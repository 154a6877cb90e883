// The width of the vector registers the library-call trampolines save
// (libcall_registers.h).
#include "libcalls/libcall_registers.h"

extern "C" {
[[gnu::visibility("hidden")]] unsigned char parlot_libcall_vector_width =
    PARLOT_LIBCALL_VECTORS_SSE;
}

namespace parlot::runtime {

unsigned char choose_libcall_vector_width() {
  // libgcc's CPU model checks the OS support too (xgetbv: the %ymm state
  // for "avx", the opmask and %zmm states for "avx512f").
  __builtin_cpu_init();
  unsigned char width = PARLOT_LIBCALL_VECTORS_SSE;
  if (__builtin_cpu_supports("avx512f")) {
    width = PARLOT_LIBCALL_VECTORS_AVX512;
  } else if (__builtin_cpu_supports("avx")) {
    width = PARLOT_LIBCALL_VECTORS_AVX;
  }
  __atomic_store_n(&parlot_libcall_vector_width, width, __ATOMIC_RELAXED);
  return width;
}

}  // namespace parlot::runtime
