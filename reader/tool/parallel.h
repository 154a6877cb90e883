// A small fork-join pool for the reader: decode threads and process
// directories on all cores. Each task writes only its own result slot; the
// caller merges the slots in index order afterwards, so output does not
// depend on scheduling.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace parlot::tool {

/// Number of workers for `jobs` (0 = one per hardware thread).
inline unsigned worker_count(unsigned jobs) {
  if (jobs != 0) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Calls `task(i)` for i in [0, n) on up to `jobs` std::threads (the calling
/// thread is one of them), handing out indices dynamically. Returns when all
/// are done; rethrows the first exception a task threw (remaining indices
/// are then skipped).
template <class Task>
void parallel_for(std::size_t n, unsigned jobs, Task&& task) {
  const unsigned workers =
      static_cast<unsigned>(std::min<std::size_t>(worker_count(jobs), std::max<std::size_t>(n, 1)));
  std::atomic<std::size_t> next{0};
  std::mutex error_lock;
  std::exception_ptr error;
  auto work = [&] {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) task(i);
    } catch (...) {
      const std::lock_guard<std::mutex> guard(error_lock);
      if (!error) error = std::current_exception();
      next.store(n);
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace parlot::tool
