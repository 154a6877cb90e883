// Shadow memory of library calls' return addresses (libcall_shadow.h).
#include "libcalls/libcall_shadow.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

namespace parlot::runtime {
namespace {

// Stack ranges whose shadow this process mapped (stacks are reused after a
// thread ends; a mapping is never removed). Guarded by g_lock.
struct Range {
  std::uintptr_t lo, hi;
};
constexpr std::size_t kMaxRanges = 4096;
Range g_ranges[kMaxRanges];
std::size_t g_range_count = 0;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

constexpr std::uintptr_t kMaxCovered = std::uintptr_t{64} << 20;  // bytes below a stack's top

// Maps the shadow of [lo, hi) minus the ranges mapped already; every piece
// or nothing. Called with g_lock held.
bool map_missing(std::uintptr_t lo, std::uintptr_t hi) {
  std::uintptr_t at = lo;
  while (at < hi) {
    // The lowest mapped range that overlaps [at, hi).
    const Range* first = nullptr;
    for (std::size_t i = 0; i < g_range_count; ++i) {
      const Range& r = g_ranges[i];
      if (r.hi > at && r.lo < hi && (first == nullptr || r.lo < first->lo)) first = &r;
    }
    const std::uintptr_t gap_end = first == nullptr ? hi : (first->lo > at ? first->lo : at);
    if (gap_end > at) {
      void* want = reinterpret_cast<void*>(at - kLibcallShadowOffset);
      const std::size_t bytes = gap_end - at;
      void* got = mmap(want, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
      if (got == MAP_FAILED) return false;
      if (got != want) {  // a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
        munmap(got, bytes);
        return false;
      }
      if (g_range_count == kMaxRanges) return false;
      g_ranges[g_range_count++] = Range{at, gap_end};
    }
    at = first == nullptr ? hi : first->hi;
  }
  return true;
}

}  // namespace

void map_libcall_shadow(std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t* mapped_lo,
                        std::uintptr_t* mapped_hi) {
  *mapped_lo = *mapped_hi = 0;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  lo = (lo + page - 1) & ~(page - 1);
  hi &= ~(page - 1);
  if (hi - lo > kMaxCovered) lo = hi - kMaxCovered;
  if (lo >= hi || lo < kLibcallShadowOffset + page) return;
  pthread_mutex_lock(&g_lock);
  const int saved_errno = errno;
  if (map_missing(lo, hi)) {
    *mapped_lo = lo;
    *mapped_hi = hi;
  }
  errno = saved_errno;
  pthread_mutex_unlock(&g_lock);
}

}  // namespace parlot::runtime
