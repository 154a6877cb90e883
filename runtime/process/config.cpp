#include "process/config.h"

#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "io/raw_io.h"
#include "process/node_identity.h"

namespace parlot::runtime {
namespace {

// PARLOT_FLIGHT_KB's default: 1 MiB per thread, the size of the codec's
// own model (a traced thread's memory at most doubles), which holds
// minutes of a loop-heavy code's history (docs/BENCHMARKS.md).
constexpr std::size_t kDefaultFlightKb = 1024;

bool parse_size(const char* name, std::size_t lo, std::size_t hi, std::size_t& out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  if (*end != '\0' || x < lo || x > hi) {
    char buf[200];
    TextBuilder msg(buf, sizeof buf);
    msg.str("ignoring ")
        .str(name)
        .str("='")
        .str(v)
        .str("': expected a whole number from ")
        .u64(lo)
        .str(" to ")
        .u64(hi);
    log_line(msg.c_str());
    return false;
  }
  out = static_cast<std::size_t>(x);
  return true;
}

// Copies a pattern list; one that does not fit is ignored with a notice.
void copy_patterns(const char* name, char* out, std::size_t size) {
  const char* v = std::getenv(name);
  if (v == nullptr) return;
  if (std::strlen(v) >= size) {
    char buf[200];
    TextBuilder msg(buf, sizeof buf);
    msg.str("ignoring ").str(name).str(": longer than ").u64(size - 1).str(" bytes");
    log_line(msg.c_str());
    return;
  }
  std::strcpy(out, v);
}

}  // namespace

Config read_config() {
  Config c;
  if (const char* d = std::getenv("PARLOT_DIR"); d != nullptr && *d != '\0') {
    if (std::strlen(d) < sizeof c.dir) {
      std::strcpy(c.dir, d);
    } else {
      log_line("PARLOT_DIR is too long; using ./parlot.data");
    }
  }
  if (const char* z = std::getenv("PARLOT_COMPRESS"); z != nullptr) {
    c.compress = std::strcmp(z, "0") != 0;
  }
  if (std::size_t codec = 0; parse_size("PARLOT_CODEC", 1, 2, codec)) {
    c.codec = static_cast<unsigned>(codec);
  }
  std::size_t kb = 0;
  if (parse_size("PARLOT_BUFFER_KB", 4, 16384, kb)) c.buffer_bytes = kb * 1024;
  parse_size("PARLOT_FLUSH_MS", 0, 3600u * 1000u, c.flush_ms);
  parse_size("PARLOT_CLOCK_EVENTS", 0, std::size_t{1} << 20, c.clock_events);
  parse_size("PARLOT_CLOCK_TOLERANCE_NS", 0, std::size_t{1} << 40, c.clock_tolerance_ns);
  if (parse_size("PARLOT_CLOCK_TICK_US", 0, 10000000, c.clock_tick_us) && c.clock_tick_us != 0) {
    c.clock_tick_us = std::max<std::size_t>(c.clock_tick_us, 50);
  }
  parse_size("PARLOT_MAX_FUNCTIONS", 1024, std::size_t{1} << 30, c.max_functions);
  parse_size("PARLOT_STACK_FRAMES", 64, std::size_t{1} << 26, c.stack_frames);
  parse_size("PARLOT_MAX_DEPTH", 1, std::size_t{1} << 26, c.record_depth);
  copy_patterns("PARLOT_INCLUDE", c.include, sizeof c.include);
  copy_patterns("PARLOT_EXCLUDE", c.exclude, sizeof c.exclude);
  if (const char* x = std::getenv("PARLOT_DISCARD"); x != nullptr) {
    c.discard = std::strcmp(x, "0") != 0;
  }
  if (const char* m = std::getenv("PARLOT_MODE"); m != nullptr && *m != '\0') {
    if (std::strcmp(m, "flight") == 0) {
      c.flight_bytes = kDefaultFlightKb * 1024;
    } else if (std::strcmp(m, "normal") != 0) {
      char buf[200];
      TextBuilder msg(buf, sizeof buf);
      msg.str("ignoring PARLOT_MODE='").str(m).str("': expected normal or flight");
      log_line(msg.c_str());
    }
  }
  if (c.flight_bytes != 0) {
    if (parse_size("PARLOT_FLIGHT_KB", 32, std::size_t{1} << 22, kb)) c.flight_bytes = kb * 1024;
    // PARLOT_FLIGHT_KB holds the ring and the block being encoded: a
    // ninth for the block, eight blocks' room for the ring (the window
    // holds 7/8 to all of it); each block starts a fresh codec state (a
    // restart point). Codec 2 only.
    c.buffer_bytes = c.flight_bytes / 9 / 8 * 8;
    c.compress = true;
    c.codec = 2;
    c.discard = false;
    c.flight_signal = SIGRTMIN + 6;
    std::size_t sig = 0;
    if (parse_size("PARLOT_FLIGHT_SIGNAL", 0, 64, sig)) c.flight_signal = static_cast<int>(sig);
  }
  c.toggle_signal = SIGRTMIN + 7;
  if (std::size_t sig = 0; parse_size("PARLOT_TOGGLE_SIGNAL", 0, 64, sig)) {
    c.toggle_signal = static_cast<int>(sig);
  }
  if (const char* x = std::getenv("PARLOT_CALL_SITES"); x != nullptr) {
    c.call_sites = std::strcmp(x, "0") != 0;
  }
  if (const char* q = std::getenv("PARLOT_QUIET"); q != nullptr) c.quiet = std::strcmp(q, "0") != 0;
  c.node_layout = node_layout_from_environment() && c.flight_bytes == 0;
  if (c.node_layout) node_name_from_environment(c.node, sizeof c.node);
  return c;
}

}  // namespace parlot::runtime
