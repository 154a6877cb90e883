#include "time/clock_tick.h"

namespace parlot::runtime {

std::atomic<std::uint32_t> g_clock_tick{0};
std::atomic<std::uint64_t> g_clock_tick_ns{0};
std::atomic<std::uint64_t> g_clock_tick_period_ns{0};
std::atomic<std::uint64_t> g_clock_tick_late_max_ns{0};

void set_clock_tick_period(std::uint64_t tick_us, std::uint64_t clock_events) {
  g_clock_tick_period_ns.store(clock_events <= 1 ? 0 : tick_us * 1000u, std::memory_order_release);
}

}  // namespace parlot::runtime
