// Per-event latency of producing a trace: incremental compression versus
// buffering raw events and compressing whole blocks (ParLoT paper §3.2).
// Incremental compression spreads the compression work over all events;
// block compression makes the event that fills the buffer wait for the
// compression of the whole block. This program measures the latency of each
// event's put() and prints its distribution as Markdown tables.
//
// Producers (all write 16-byte block headers plus payload to a real file with
// write() whenever their 256 KiB output buffer is full, and keep the
// runtime's per-event counters and 1 s periodic flush, as ThreadTrace does):
//   incremental   codec::Encoder, encode() per event into the output buffer
//                 (what libparlotrt does);
//   uncompressed  codec::RawEncoder words into the output buffer (PARLOT_COMPRESS=0);
//   block-parlot  events into a buffer of 256 KiB of raw words; when it is
//                 full, the block goes through one long-lived codec::Encoder
//                 and its output is written;
//   block-zstd1   raw words into a 256 KiB buffer; when full, ZSTD level 1 on
//   block-lz4     the block (LZ4_compress_default), then write();
//   timer         nothing: the cost of the time measurement itself.
// Each producer runs twice over the same N events: once untimed (events/s),
// once with each put() timed by the TSC (lfence; rdtsc; lfence ... rdtscp;
// lfence), converted to ns by calibration against CLOCK_MONOTONIC. The
// latencies go to a log-linear histogram: exact below 1024 ticks, 128
// buckets per power of two above (< 0.8% error); max and mean are exact.
// Events whose put() called write() are also counted apart.
//
// Usage: latency_benchmark [events]                  (default 50000000)
//   PARLOT_BENCH_TRACE=<dir>/pid-<pid>/thread-<i>-<tid>.trace
//                 replay a recorded thread stream (cycled to `events`);
//                 without it a synthetic call-dense stream is used.
//   TMPDIR        where the output files go (default /tmp; removed at the end).
// Pinning helps: taskset -c 1 build/bench/latency_benchmark
#include <fcntl.h>
#include <lz4.h>
#include <sys/resource.h>
#include <unistd.h>
#include <x86intrin.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "event_streams.h"
#include "parlot/codec.h"
#include "parlot/format.h"
#include "parlot/trace_reader.h"

namespace {

namespace codec = parlot::codec;
namespace format = parlot::format;
using codec::OutputWindow;

constexpr std::size_t kBufferBytes = 256 * 1024;  // PARLOT_BUFFER_KB default
constexpr std::size_t kHeader = sizeof(format::BlockHeader);
constexpr std::uint32_t kFlushCheckEvents = 16384;      // as ThreadTrace
constexpr std::uint64_t kFlushIntervalNs = 1000000000;  // PARLOT_FLUSH_MS default

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "latency_benchmark: %s\n", what.c_str());
  std::exit(1);
}

std::uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// TSC reads ordered with the measured code: lfence before rdtsc waits for
// earlier instructions, the lfence after it holds back later ones; rdtscp
// waits for the measured code and the lfence after it holds back the
// bookkeeping. The empty asm statements stop the compiler moving memory
// accesses across.
inline std::uint64_t tsc_begin() {
  asm volatile("" ::: "memory");
  _mm_lfence();
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  asm volatile("" ::: "memory");
  return t;
}

inline std::uint64_t tsc_end() {
  asm volatile("" ::: "memory");
  unsigned aux;
  const std::uint64_t t = __rdtscp(&aux);
  _mm_lfence();
  asm volatile("" ::: "memory");
  return t;
}

/// TSC ticks per ns, measured against CLOCK_MONOTONIC over ~100 ms.
double calibrate_tsc() {
  const std::uint64_t n0 = clock_ns(CLOCK_MONOTONIC);
  const std::uint64_t t0 = tsc_begin();
  std::uint64_t n1;
  do {
    n1 = clock_ns(CLOCK_MONOTONIC);
  } while (n1 - n0 < 100000000);
  const std::uint64_t t1 = tsc_begin();
  return static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0);
}

/// Log-linear histogram of tick counts: exact below 2^kExactBits, then
/// 2^kSubBits buckets per power of two.
class TickHistogram {
 public:
  static constexpr unsigned kExactBits = 10;
  static constexpr unsigned kSubBits = 7;
  static constexpr std::size_t kBuckets = (1u << kExactBits) + (64 - kExactBits) * (1u << kSubBits);

  inline void add(std::uint64_t t) {
    ++counts_[index(t)];
    ++n_;
    sum_ += t;
    if (t > max_) max_ = t;
  }

  std::uint64_t count() const { return n_; }
  std::uint64_t max() const { return max_; }
  double mean() const { return n_ == 0 ? 0 : static_cast<double>(sum_) / static_cast<double>(n_); }

  /// Smallest bucket value v with at least q * count events <= v (bucket
  /// midpoint above the exact range).
  double quantile(double q) const {
    if (n_ == 0) return 0;
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(q * static_cast<double>(n_) + 0.999999));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(midpoint(i), static_cast<double>(max_));
    }
    return static_cast<double>(max_);
  }

  /// Events of at least `t` ticks and their share of all ticks (to bucket
  /// resolution).
  std::pair<std::uint64_t, double> at_least(std::uint64_t t) const {
    std::uint64_t n = 0;
    double ticks = 0;
    for (std::size_t i = index(t); i < kBuckets; ++i) {
      n += counts_[i];
      ticks += static_cast<double>(counts_[i]) * midpoint(i);
    }
    return {n, sum_ == 0 ? 0 : ticks / static_cast<double>(sum_)};
  }

 private:
  static std::size_t index(std::uint64_t t) {
    if (t < (1u << kExactBits)) return static_cast<std::size_t>(t);
    const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(t));
    const std::uint64_t sub = (t >> (e - kSubBits)) - (1u << kSubBits);
    return (1u << kExactBits) + (e - kExactBits) * (1u << kSubBits) + static_cast<std::size_t>(sub);
  }
  static double midpoint(std::size_t i) {
    if (i < (1u << kExactBits)) return static_cast<double>(i);
    const std::size_t k = i - (1u << kExactBits);
    const unsigned e = kExactBits + static_cast<unsigned>(k >> kSubBits);
    const double width = static_cast<double>(std::uint64_t{1} << (e - kSubBits));
    const double lower =
        static_cast<double>((1u << kSubBits) + (k & ((1u << kSubBits) - 1))) * width;
    return lower + width / 2;
  }

  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t n_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t max_ = 0;
};

/// A trace file being written: blocks of header + payload, one write() each.
class OutputFile {
 public:
  explicit OutputFile(std::string path) : path_(std::move(path)) {
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) die(path_ + ": " + std::strerror(errno));
  }
  ~OutputFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Writes a block: `block` has kHeader bytes of room, then `payload` bytes.
  void write_block(std::uint8_t* block, std::size_t payload) {
    if (payload == 0) return;
    const format::BlockHeader h{format::kBlockMagic, static_cast<std::uint32_t>(payload),
                                sequence_++};
    std::memcpy(block, &h, sizeof h);
    const std::uint8_t* p = block;
    std::size_t left = kHeader + payload;
    while (left != 0) {
      const ssize_t k = write(fd_, p, left);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) die(path_ + ": write: " + std::strerror(errno));
      p += k;
      left -= static_cast<std::size_t>(k);
    }
    bytes_ += kHeader + payload;
    ++writes_;
  }

  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t writes() const { return writes_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t sequence_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t writes_ = 0;
};

/// The bookkeeping ThreadTrace::put does around the encoder: event and raw
/// byte counters, and every kFlushCheckEvents events a look at the coarse
/// clock for the periodic flush.
class RuntimeCounters {
 public:
  /// Counts event `v`; true when the periodic flush is due.
  inline bool count(std::uint32_t v) {
    ++events_;
    raw_bytes_ += codec::raw_bytes_of(v);
    if (--countdown_ != 0) [[likely]]
      return false;
    countdown_ = kFlushCheckEvents;
    return clock_ns(CLOCK_MONOTONIC_COARSE) - last_flush_ns_ >= kFlushIntervalNs;
  }
  void flushed() { last_flush_ns_ = clock_ns(CLOCK_MONOTONIC_COARSE); }

 private:
  std::uint64_t events_ = 0;
  std::uint64_t raw_bytes_ = 0;
  std::uint32_t countdown_ = kFlushCheckEvents;
  std::uint64_t last_flush_ns_ = clock_ns(CLOCK_MONOTONIC_COARSE);
};

/// Encodes straight into the output buffer and writes it when full:
/// incremental (codec::Encoder) or uncompressed (codec::RawEncoder).
template <class Enc>
class DirectProducer {
 public:
  explicit DirectProducer(OutputFile& f) : file_(f) {}

  inline void put(std::uint32_t v) {
    if (counters_.count(v)) [[unlikely]]
      drain(enc_.window());
    enc_.encode(v);
  }
  void finish() {
    enc_.finish();
    drain(enc_.window());
  }
  /// Encoder sink: writes the filled buffer.
  void drain(OutputWindow& w) {
    file_.write_block(block_.data(), static_cast<std::size_t>(w.cur - (block_.data() + kHeader)));
    w = window();
    counters_.flushed();
  }

 private:
  OutputWindow window() { return {block_.data() + kHeader, block_.data() + block_.size()}; }

  OutputFile& file_;
  RuntimeCounters counters_;
  std::vector<std::uint8_t> block_ = std::vector<std::uint8_t>(kHeader + kBufferBytes);
  Enc enc_{*this, window()};
};

/// Buffers raw words (codec::RawEncoder); compresses a full buffer with
/// `Compressor` and writes the result.
template <class Compressor>
class BlockProducer {
 public:
  explicit BlockProducer(OutputFile& f) : file_(f) {}

  inline void put(std::uint32_t v) {
    if (counters_.count(v)) [[unlikely]]
      drain(raw_.window());
    raw_.encode(v);
  }
  void finish() { drain(raw_.window()); }
  /// RawEncoder sink: the raw buffer is full.
  void drain(OutputWindow& w) {
    const auto n = static_cast<std::size_t>(w.cur - raw_block_.data());
    if (n != 0) {
      const std::size_t k =
          compressor_.compress(raw_block_.data(), n, out_.data() + kHeader, out_.size() - kHeader);
      file_.write_block(out_.data(), k);
    }
    w = window();
    counters_.flushed();
  }

 private:
  OutputWindow window() { return {raw_block_.data(), raw_block_.data() + raw_block_.size()}; }

  OutputFile& file_;
  RuntimeCounters counters_;
  Compressor compressor_;
  std::vector<std::uint8_t> raw_block_ = std::vector<std::uint8_t>(kBufferBytes);
  std::vector<std::uint8_t> out_ =
      std::vector<std::uint8_t>(kHeader + Compressor::bound(kBufferBytes));
  codec::RawEncoder raw_{*this, window()};
};

struct Zstd1 {
  static std::size_t bound(std::size_t n) { return ZSTD_compressBound(n); }
  std::size_t compress(const std::uint8_t* src, std::size_t n, std::uint8_t* dst, std::size_t cap) {
    const std::size_t k = ZSTD_compressCCtx(ctx.get(), dst, cap, src, n, 1);
    if (ZSTD_isError(k)) die(std::string("zstd: ") + ZSTD_getErrorName(k));
    return k;
  }
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> ctx{ZSTD_createCCtx(), &ZSTD_freeCCtx};
};

struct Lz4 {
  static std::size_t bound(std::size_t n) {
    return static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(n)));
  }
  std::size_t compress(const std::uint8_t* src, std::size_t n, std::uint8_t* dst, std::size_t cap) {
    const int k =
        LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                             static_cast<int>(n), static_cast<int>(cap));
    if (k <= 0) die("lz4: compression failed");
    return static_cast<std::size_t>(k);
  }
};

/// Buffers events up to 256 KiB of raw words; a full buffer goes through one
/// long-lived codec::Encoder (so the model and the ratio are those of the
/// incremental producer) and the encoder's output is written.
class BlockParlotProducer {
 public:
  explicit BlockParlotProducer(OutputFile& f) : file_(f) {}

  inline void put(std::uint32_t v) {
    if (counters_.count(v)) [[unlikely]]
      compress_block();
    if (kBufferBytes - raw_in_block_ < 4) [[unlikely]]  // as RawEncoder
      compress_block();
    events_[n_++] = v;
    raw_in_block_ += codec::raw_bytes_of(v);
  }
  void finish() {
    compress_block();
    enc_.finish();
    drain(enc_.window());
  }
  /// Encoder sink: the output buffer is full (or the block is done).
  void drain(OutputWindow& w) {
    file_.write_block(block_.data(), static_cast<std::size_t>(w.cur - (block_.data() + kHeader)));
    w = window();
    counters_.flushed();
  }

 private:
  void compress_block() {
    for (std::size_t i = 0; i < n_; ++i) enc_.encode(events_[i]);
    n_ = 0;
    raw_in_block_ = 0;
    drain(enc_.window());
  }
  OutputWindow window() { return {block_.data() + kHeader, block_.data() + block_.size()}; }

  OutputFile& file_;
  RuntimeCounters counters_;
  std::vector<std::uint32_t> events_ = std::vector<std::uint32_t>(kBufferBytes / 2);
  std::size_t n_ = 0;
  std::size_t raw_in_block_ = 0;
  std::vector<std::uint8_t> block_ = std::vector<std::uint8_t>(kHeader + kBufferBytes);
  codec::Encoder enc_{*this, window()};
};

/// Does nothing: the "timer" row measures the measurement.
class NoProducer {
 public:
  explicit NoProducer(OutputFile&) {}
  inline void put(std::uint32_t v) { asm volatile("" : : "r"(v)); }
  void finish() {}
};

struct Row {
  const char* name = "";
  bool writes_output = true;
  TickHistogram hist;
  double events_per_s = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t writes = 0;
  std::uint64_t write_events = 0;  // events whose put() called write()
  std::uint64_t write_ticks = 0;
  std::uint64_t write_max = 0;
  std::uint64_t other_max = 0;  // largest latency of the other events
  long minor_faults = 0;
  long preemptions = 0;  // involuntary context switches
};

rusage usage() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u;
}

template <class P>
void measure(Row& r, const std::vector<std::uint32_t>& src, std::uint64_t n,
             const std::string& dir) {
  const std::string path = dir + "/" + r.name;
  {  // Throughput: no per-event timing.
    OutputFile f(path);
    auto p = std::make_unique<P>(f);
    std::size_t j = 0;
    const std::uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    for (std::uint64_t i = 0; i < n; ++i) {
      p->put(src[j]);
      if (++j == src.size()) j = 0;
    }
    p->finish();
    const std::uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
    r.events_per_s = static_cast<double>(n) * 1e9 / static_cast<double>(t1 - t0);
  }
  {  // Latency of each put().
    OutputFile f(path);
    auto p = std::make_unique<P>(f);
    const rusage before = usage();
    std::size_t j = 0;
    std::uint64_t writes = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint32_t v = src[j];
      if (++j == src.size()) j = 0;
      const std::uint64_t a = tsc_begin();
      p->put(v);
      const std::uint64_t b = tsc_end();
      const std::uint64_t d = b - a;
      r.hist.add(d);
      if (f.writes() != writes) [[unlikely]] {
        writes = f.writes();
        ++r.write_events;
        r.write_ticks += d;
        r.write_max = std::max(r.write_max, d);
      } else if (d > r.other_max) {
        r.other_max = d;
      }
    }
    const rusage after = usage();
    r.minor_faults = after.ru_minflt - before.ru_minflt;
    r.preemptions = after.ru_nivcsw - before.ru_nivcsw;
    p->finish();
    r.file_bytes = f.bytes();
    r.writes = f.writes();
  }
}

std::vector<std::uint32_t> load_trace(const char* path, std::uint64_t max_events) {
  std::vector<std::uint32_t> v;
  try {
    v = parlot::bench::recorded_events(path, max_events);
  } catch (const parlot::FormatError& e) {
    die(std::string(path) + ": " + e.what());
  }
  if (v.empty()) die(std::string(path) + ": no events");
  return v;
}

std::string fmt_ns(double ns) {
  char b[32];
  if (ns < 100) {
    std::snprintf(b, sizeof b, "%.1f ns", ns);
  } else if (ns < 1000) {
    std::snprintf(b, sizeof b, "%.0f ns", ns);
  } else if (ns < 100000) {
    std::snprintf(b, sizeof b, "%.1f µs", ns / 1e3);
  } else if (ns < 1e6) {
    std::snprintf(b, sizeof b, "%.0f µs", ns / 1e3);
  } else {
    std::snprintf(b, sizeof b, "%.2f ms", ns / 1e6);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t n = 50000000;
  if (argc > 2) die("usage: latency_benchmark [events]");
  if (argc == 2) {
    char* end = nullptr;
    n = std::strtoull(argv[1], &end, 10);
    if (*end != '\0' || n == 0) die(std::string("bad event count '") + argv[1] + "'");
  }

  std::vector<std::uint32_t> src;
  std::string source;
  if (const char* t = std::getenv("PARLOT_BENCH_TRACE"); t != nullptr && *t != '\0') {
    src = load_trace(t, n);
    source = t;
  } else {
    src = parlot::bench::synthetic_call_stream(
        static_cast<std::size_t>(std::min<std::uint64_t>(n, 1u << 24)));
    source = "synthetic call-dense stream";
  }
  std::uint64_t raw_bytes = 0;
  for (std::uint64_t i = 0, j = 0; i < n; ++i) {
    raw_bytes += codec::raw_bytes_of(src[j]);
    if (++j == src.size()) j = 0;
  }

  const char* tmp = std::getenv("TMPDIR");
  std::string dir =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/parlot-latency-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) die(dir + ": " + std::strerror(errno));

  const double ticks_per_ns = calibrate_tsc();

  std::vector<std::unique_ptr<Row>> rows;
  auto add = [&rows](const char* name) -> Row& {
    rows.push_back(std::make_unique<Row>());
    rows.back()->name = name;
    return *rows.back();
  };
  {
    Row& r = add("timer");
    r.writes_output = false;
    measure<NoProducer>(r, src, n, dir);
  }
  measure<DirectProducer<codec::RawEncoder>>(add("uncompressed"), src, n, dir);
  measure<DirectProducer<codec::Encoder>>(add("incremental"), src, n, dir);
  measure<BlockParlotProducer>(add("block-parlot"), src, n, dir);
  measure<BlockProducer<Zstd1>>(add("block-zstd1"), src, n, dir);
  measure<BlockProducer<Lz4>>(add("block-lz4"), src, n, dir);
  rmdir(dir.c_str());

  auto ns = [ticks_per_ns](double ticks) { return fmt_ns(ticks / ticks_per_ns); };
  std::printf("## Per-event latency of put()\n\n");
  std::printf(
      "%llu events of %s (a source of %zu events, cycled); 256 KiB buffers; "
      "output to %s; TSC %.4f ticks/ns.\n",
      static_cast<unsigned long long>(n), source.c_str(), src.size(), dir.c_str(), ticks_per_ns);
  std::printf("Latencies include the timer overhead (row \"timer\").\n\n");
  std::printf("| producer | p50 | p90 | p99 | p99.9 | p99.99 | p99.999 | max | mean |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows) {
    const TickHistogram& h = r->hist;
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->name,
                ns(h.quantile(0.5)).c_str(), ns(h.quantile(0.9)).c_str(),
                ns(h.quantile(0.99)).c_str(), ns(h.quantile(0.999)).c_str(),
                ns(h.quantile(0.9999)).c_str(), ns(h.quantile(0.99999)).c_str(),
                ns(static_cast<double>(h.max())).c_str(), ns(h.mean()).c_str());
  }

  std::printf("\n## Throughput, output and where the slow events are\n\n");
  std::printf(
      "Throughput from the untimed run; the rest from the timed run. \"write events\": "
      "events whose put() called write() (and, for block producers, compressed a "
      "block); \"preemptions\": involuntary context switches (getrusage). Counts of slow "
      "events are to histogram resolution (1%%).\n\n");
  std::printf(
      "| producer | Mevents/s | ratio | writes | write events: mean | write events: max "
      "| max of other events | events ≥ 1 µs | events ≥ 10 µs | time in events ≥ 10 µs "
      "| minor faults | preemptions |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const auto t1us = static_cast<std::uint64_t>(1000 * ticks_per_ns);
  const auto t10us = static_cast<std::uint64_t>(10000 * ticks_per_ns);
  for (const auto& r : rows) {
    const std::uint64_t n1 = r->hist.at_least(t1us).first;
    const auto [n10, s10] = r->hist.at_least(t10us);
    char ratio[32] = "-";
    char rate[32] = "-";
    if (r->writes_output) {
      std::snprintf(rate, sizeof rate, "%.1f", r->events_per_s / 1e6);
      std::snprintf(ratio, sizeof ratio, "%.1f",
                    static_cast<double>(raw_bytes) /
                        static_cast<double>(std::max<std::uint64_t>(r->file_bytes, 1)));
    }
    const std::string wmean =
        r->write_events != 0
            ? ns(static_cast<double>(r->write_ticks) / static_cast<double>(r->write_events))
            : "-";
    const std::string wmax = r->write_events != 0 ? ns(static_cast<double>(r->write_max)) : "-";
    std::printf("| %s | %s | %s | %llu | %s | %s | %s | %llu | %llu | %.2f%% | %ld | %ld |\n",
                r->name, rate, ratio, static_cast<unsigned long long>(r->writes), wmean.c_str(),
                wmax.c_str(), ns(static_cast<double>(r->other_max)).c_str(),
                static_cast<unsigned long long>(n1), static_cast<unsigned long long>(n10),
                100 * s10, r->minor_faults, r->preemptions);
  }
  return 0;
}
