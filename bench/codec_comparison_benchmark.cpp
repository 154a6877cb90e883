// Parlot's incremental codec against general-purpose block compressors on
// the same event streams: compression and decompression speed (events/s,
// raw bytes/s) and compression ratio (raw bytes / compressed bytes).
//
// Codecs (benchmark names BM_Compress/<codec>/<stream>, BM_Decompress/...):
//   parlot1,      codec::Encoder (codec 1) / codec::v2::Encoder (codec 2),
//   parlot2       one encode() call per event, into a 256 KiB output window
//                 (as the runtime does); decompression with codec::Decoder
//                 into 64K-event batches, one window per feed (as the reader).
//   zstd1, zstd19 ZSTD_compressCCtx at level 1 / 19 on 256 KiB blocks of the
//   lz4, lz4hc    uncompressed word stream (the runtime's buffer size);
//                 LZ4_compress_default / LZ4_compress_HC (level 9).
//   zstd1-whole,  zstd at level 1, 3, 19 and LZ4_compress_default on the
//   zstd3-whole,  whole word stream in one call (the best offline ratio).
//   zstd19-whole,
//   lz4-whole
// Before timing, a Markdown table of every ratio is printed; run with
// --benchmark_filter=NONE for the table alone. PARLOT_BENCH_CODECS=a,b
// keeps only the codecs named.
// The uncompressed word stream is what codec::RawEncoder writes (the
// runtime's PARLOT_COMPRESS=0 format: IDs < 0x8000 one 16-bit word, larger
// ones two). Block decompression produces that word stream, not events.
// Compressed sizes exclude framing (Parlot block headers, stored block
// sizes). Every codec's round trip is checked once before timing.
//
// Run (one command line):
//   PARLOT_BENCH_TRACES=/tmp/cb/pid-1/thread-0-1.trace:/tmp/cb/pid-2/thread-1-3.trace
//   build/bench/codec_comparison_benchmark [--benchmark_filter=parlot]
// PARLOT_BENCH_TRACES is a colon-separated list of thread-*.trace files (see
// docs/FORMAT.md); each is decoded once with ThreadEventReader and named by
// its file name without ".trace". Without it a synthetic stream is used.
#include <benchmark/benchmark.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "codec/decoder.h"
#include "event_streams.h"
#include "parlot/codec.h"
#include "parlot/trace_reader.h"

namespace {

namespace codec = parlot::codec;
using codec::OutputWindow;

constexpr std::size_t kBlockBytes = 256 * 1024;  // the runtime's default buffer
constexpr std::size_t kBatchEvents = 1 << 16;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "codec_comparison_benchmark: %s\n", what.c_str());
  std::exit(1);
}

/// One event stream: the events and their uncompressed word stream.
struct Stream {
  std::string name;
  std::vector<std::uint32_t> events;
  std::vector<std::uint8_t> raw;
};

/// Encoder sink appending each full output window to `out` (capacity is
/// kept between runs, so a timed run does not allocate).
struct AppendSink {
  std::vector<std::uint8_t>* out = nullptr;
  std::vector<std::size_t>* block_sizes = nullptr;  // each drained window's bytes, if set
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(kBlockBytes);
  OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(OutputWindow& w) {
    const auto n = static_cast<std::size_t>(w.cur - window.data());
    if (n != 0) {
      out->insert(out->end(), window.data(), w.cur);
      if (block_sizes != nullptr) block_sizes->push_back(n);
    }
    w = fresh();
  }
};

template <class Enc>
void encode_all(const std::vector<std::uint32_t>& events, AppendSink& sink, auto... options) {
  Enc enc(sink, sink.fresh(), options...);
  for (const std::uint32_t v : events) enc.encode(v);
  enc.finish();
  sink.drain(enc.window());
}

/// The uncompressed word stream, as the codec writes it.
std::vector<std::uint8_t> raw_words(const std::vector<std::uint32_t>& events) {
  std::vector<std::uint8_t> raw;
  AppendSink sink{&raw};
  encode_all<codec::RawEncoder>(events, sink);
  return raw;
}

Stream load_trace(const std::filesystem::path& path) {
  Stream s;
  s.name = path.stem().string();
  try {
    s.events = parlot::bench::recorded_events(path);
  } catch (const parlot::FormatError& e) {
    die(path.string() + ": " + e.what());
  }
  s.raw = raw_words(s.events);
  return s;
}

Stream synthetic_stream(std::size_t n) {
  Stream s;
  s.name = "synthetic";
  s.events = parlot::bench::synthetic_call_stream(n);
  s.raw = raw_words(s.events);
  return s;
}

/// A compressed stream: `size` bytes in `bytes` (which may be longer: block
/// codecs keep it at the worst-case size so that a run never zero-fills it)
/// and, for block codecs, each block's size.
struct Compressed {
  std::vector<std::uint8_t> bytes;
  std::size_t size = 0;
  std::vector<std::size_t> block_sizes;
  bool operator==(const Compressed& o) const {
    return size == o.size &&
           std::equal(bytes.begin(), bytes.begin() + static_cast<long>(size), o.bytes.begin());
  }
};

class Codec {
 public:
  virtual ~Codec() = default;
  virtual const char* name() const = 0;
  virtual const char* label() const = 0;
  /// Compresses the whole stream into `c` (reusing its buffers).
  virtual void compress(const Stream& s, Compressed& c) = 0;
  /// Decompresses the whole stream into a small reused buffer; returns a
  /// checksum-ish value so the work cannot be optimised away.
  virtual std::uint64_t decompress(const Stream& s, const Compressed& c) = 0;
  /// Decompresses everything and compares with the original; dies on a mismatch.
  virtual void verify(const Stream& s, const Compressed& c) = 0;
};

/// Parlot's codec 1 (`Enc` = codec::Encoder) or codec 2 (v2::Encoder):
/// one encode() call per event into 256 KiB windows, decoded with
/// codec::Decoder into 64K-event batches, each window fed as one block (as
/// the runtime writes and the reader reads them). `version`: the format
/// version written (codec 2: its length model and table tail).
template <class Enc>
class ParlotCodec final : public Codec {
 public:
  ParlotCodec(parlot::format::Codec id, const char* name,
              unsigned version = parlot::format::kVersion)
      : id_(id), name_(name), version_(version) {}
  const char* name() const override { return name_; }
  const char* label() const override { return "incremental, per event"; }

  void compress(const Stream& s, Compressed& c) override {
    c.bytes.clear();
    c.block_sizes.clear();
    sink_.out = &c.bytes;
    sink_.block_sizes = &c.block_sizes;
    if constexpr (std::is_same_v<Enc, codec::v2::Encoder>) {
      encode_all<Enc>(s.events, sink_, version_);
    } else {
      encode_all<Enc>(s.events, sink_);
    }
    c.size = c.bytes.size();
  }

  std::uint64_t decompress(const Stream& s, const Compressed& c) override {
    // One decoder for every run, reset per stream (as the reader's worker
    // threads reuse theirs): the model is not allocated per decode.
    if (!decoder_) decoder_ = std::make_unique<codec::Decoder>(id_);
    codec::Decoder& d = *decoder_;
    d.reset();
    d.set_format_version(version_);
    std::size_t block = 0;
    std::size_t off = 0;
    std::uint64_t total = 0;
    std::uint64_t last = 0;
    while (total < s.events.size()) {
      const std::size_t want = std::min<std::uint64_t>(batch_.size(), s.events.size() - total);
      const std::size_t n = d.next(batch_.data(), want);
      if (n == 0) {
        if (d.status() != codec::Decoder::Status::kNeedInput || block == c.block_sizes.size())
          break;
        d.feed(c.bytes.data() + off, c.block_sizes[block]);
        off += c.block_sizes[block++];
        continue;
      }
      total += n;
      last += batch_[n - 1];
    }
    return total + last;
  }

  void verify(const Stream& s, const Compressed& c) override {
    codec::Decoder d(id_);
    d.set_format_version(version_);
    std::vector<std::uint32_t> out(s.events.size());
    std::size_t total = 0;
    std::size_t block = 0;
    std::size_t off = 0;
    while (total < out.size()) {
      const std::size_t n = d.next(out.data() + total, out.size() - total);
      if (d.status() == codec::Decoder::Status::kError) {
        die(s.name + ": " + name_ + ": decoder error: " + d.error());
      }
      if (n == 0) {
        if (block == c.block_sizes.size()) break;
        d.feed(c.bytes.data() + off, c.block_sizes[block]);
        off += c.block_sizes[block++];
        continue;
      }
      total += n;
    }
    if (total != out.size() || out != s.events)
      die(s.name + ": " + name_ + ": round trip mismatch");
  }

 private:
  std::unique_ptr<codec::Decoder> decoder_;
  parlot::format::Codec id_;
  const char* name_;
  unsigned version_;
  AppendSink sink_;
  std::vector<std::uint32_t> batch_ = std::vector<std::uint32_t>(kBatchEvents);
};

/// A block compressor applied to `block` bytes of the word stream at a time
/// (0: the whole stream in one block).
class BlockCodec : public Codec {
 public:
  explicit BlockCodec(std::size_t block) : block_(block) {}

  void compress(const Stream& s, Compressed& c) override {
    const std::size_t block = block_size(s);
    std::size_t cap = 0;
    for (std::size_t off = 0; off < s.raw.size(); off += block) {
      cap += bound(std::min(block, s.raw.size() - off));
    }
    if (c.bytes.size() < cap) c.bytes.resize(cap);
    c.block_sizes.clear();
    std::size_t pos = 0;
    for (std::size_t off = 0; off < s.raw.size(); off += block) {
      const std::size_t n = std::min(block, s.raw.size() - off);
      const std::size_t k = compress_block(s.raw.data() + off, n, c.bytes.data() + pos, cap - pos);
      c.block_sizes.push_back(k);
      pos += k;
    }
    c.size = pos;
  }

  std::uint64_t decompress(const Stream& s, const Compressed& c) override {
    const std::size_t block = block_size(s);
    if (scratch_.size() < block) scratch_.resize(block);
    std::uint64_t sum = 0;
    std::size_t pos = 0;
    std::size_t off = 0;
    for (const std::size_t k : c.block_sizes) {
      const std::size_t n = std::min(block, s.raw.size() - off);
      const std::size_t got = decompress_block(c.bytes.data() + pos, k, scratch_.data(), n);
      if (got != n) die(s.name + ": " + name() + ": block decompressed to a wrong size");
      sum += got + scratch_[n - 1];
      pos += k;
      off += n;
    }
    return sum;
  }

  void verify(const Stream& s, const Compressed& c) override {
    const std::size_t block = block_size(s);
    std::vector<std::uint8_t> out(s.raw.size());
    std::size_t pos = 0;
    std::size_t off = 0;
    for (const std::size_t k : c.block_sizes) {
      const std::size_t n = std::min(block, s.raw.size() - off);
      if (decompress_block(c.bytes.data() + pos, k, out.data() + off, n) != n) {
        die(s.name + ": " + name() + ": block decompressed to a wrong size");
      }
      pos += k;
      off += n;
    }
    if (off != out.size() || out != s.raw) die(s.name + ": " + name() + ": round trip mismatch");
  }

  const char* label() const override { return block_ == 0 ? "whole stream" : "256 KiB blocks"; }

 protected:
  /// Bytes per block (0: the whole stream in one block).
  std::size_t block_bytes() const { return block_; }
  virtual std::size_t bound(std::size_t n) const = 0;
  virtual std::size_t compress_block(const std::uint8_t* src, std::size_t n, std::uint8_t* dst,
                                     std::size_t cap) = 0;
  /// Returns the decompressed size (which must be `n`).
  virtual std::size_t decompress_block(const std::uint8_t* src, std::size_t k, std::uint8_t* dst,
                                       std::size_t n) = 0;

 private:
  std::size_t block_size(const Stream& s) const {
    return block_ != 0 ? block_ : std::max<std::size_t>(s.raw.size(), 1);
  }

  std::size_t block_;
  std::vector<std::uint8_t> scratch_;
};

class ZstdCodec final : public BlockCodec {
 public:
  ZstdCodec(int level, std::size_t block, const char* name)
      : BlockCodec(block), level_(level), name_(name) {}
  ~ZstdCodec() override {
    ZSTD_freeCCtx(cctx_);
    ZSTD_freeDCtx(dctx_);
  }
  const char* name() const override { return name_; }

 protected:
  std::size_t bound(std::size_t n) const override { return ZSTD_compressBound(n); }
  std::size_t compress_block(const std::uint8_t* src, std::size_t n, std::uint8_t* dst,
                             std::size_t cap) override {
    const std::size_t k = ZSTD_compressCCtx(cctx_, dst, cap, src, n, level_);
    if (ZSTD_isError(k)) die(std::string(name_) + ": " + ZSTD_getErrorName(k));
    return k;
  }
  std::size_t decompress_block(const std::uint8_t* src, std::size_t k, std::uint8_t* dst,
                               std::size_t n) override {
    const std::size_t got = ZSTD_decompressDCtx(dctx_, dst, n, src, k);
    if (ZSTD_isError(got)) die(std::string(name_) + ": " + ZSTD_getErrorName(got));
    return got;
  }

 private:
  int level_;
  const char* name_;
  ZSTD_CCtx* cctx_ = ZSTD_createCCtx();
  ZSTD_DCtx* dctx_ = ZSTD_createDCtx();
};

class Lz4Codec final : public BlockCodec {
 public:
  Lz4Codec(bool hc, std::size_t block) : BlockCodec(block), hc_(hc) {}
  const char* name() const override {
    return hc_ ? "lz4hc" : block_bytes() == 0 ? "lz4-whole" : "lz4";
  }

 protected:
  std::size_t bound(std::size_t n) const override {
    return static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(n)));
  }
  std::size_t compress_block(const std::uint8_t* src, std::size_t n, std::uint8_t* dst,
                             std::size_t cap) override {
    const auto* s = reinterpret_cast<const char*>(src);
    auto* d = reinterpret_cast<char*>(dst);
    const int in = static_cast<int>(n);
    const int out = static_cast<int>(std::min<std::size_t>(cap, 0x7fffffff));
    const int k = hc_ ? LZ4_compress_HC(s, d, in, out, LZ4HC_CLEVEL_DEFAULT)
                      : LZ4_compress_default(s, d, in, out);
    if (k <= 0) die(std::string(name()) + ": compression failed");
    return static_cast<std::size_t>(k);
  }
  std::size_t decompress_block(const std::uint8_t* src, std::size_t k, std::uint8_t* dst,
                               std::size_t n) override {
    const int got =
        LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                            static_cast<int>(k), static_cast<int>(n));
    if (got < 0) die(std::string(name()) + ": corrupt block");
    return static_cast<std::size_t>(got);
  }

 private:
  bool hc_;
};

/// One (stream, codec) pair and its verified compressed form.
struct Case {
  const Stream* stream;
  Codec* codec;
  Compressed compressed;
};

void set_counters(benchmark::State& state, const Case& c) {
  const auto events = static_cast<double>(c.stream->events.size());
  state.counters["events"] = benchmark::Counter(events * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
  state.counters["ratio"] = static_cast<double>(c.stream->raw.size()) /
                            static_cast<double>(std::max<std::size_t>(c.compressed.size, 1));
  state.counters["compressed_bytes"] = static_cast<double>(c.compressed.size);
  state.counters["stream_events"] = events;
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(c.stream->raw.size()));
  state.SetLabel(c.codec->label());
}

void bm_compress(benchmark::State& state, Case* c) {
  Compressed out = c->compressed;  // buffers of the final size: no allocation while timed
  for (auto _ : state) {
    c->codec->compress(*c->stream, out);
    benchmark::DoNotOptimize(out.bytes.data());
    benchmark::ClobberMemory();
  }
  if (!(out == c->compressed)) {
    die(c->stream->name + ": " + c->codec->name() + ": compression is not deterministic");
  }
  set_counters(state, *c);
}

void bm_decompress(benchmark::State& state, Case* c) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(c->codec->decompress(*c->stream, c->compressed));
  }
  set_counters(state, *c);
}

/// Prints the compression ratio (raw bytes / compressed bytes) of every
/// codec on every stream as a Markdown table on stdout, before any timing.
void print_ratio_table(const std::vector<std::unique_ptr<Stream>>& streams,
                       const std::vector<std::unique_ptr<Codec>>& codecs,
                       const std::vector<std::unique_ptr<Case>>& cases) {
  std::printf("| stream | events | raw bytes |");
  for (const auto& c : codecs) std::printf(" %s |", c->name());
  std::printf("\n|---|---|---|");
  for (std::size_t i = 0; i < codecs.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::size_t k = 0;
  for (const auto& s : streams) {
    std::printf("| %s | %zu | %zu |", s->name.c_str(), s->events.size(), s->raw.size());
    for (std::size_t i = 0; i < codecs.size(); ++i, ++k) {
      const auto& c = *cases[k];
      std::printf(" %.1f |", static_cast<double>(s->raw.size()) /
                                 static_cast<double>(std::max<std::size_t>(c.compressed.size, 1)));
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::vector<std::unique_ptr<Stream>> streams;
  if (const char* list = std::getenv("PARLOT_BENCH_TRACES"); list != nullptr && *list != '\0') {
    std::set<std::string> names;
    std::string rest = list;
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string path = rest.substr(0, colon);
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
      if (path.empty()) continue;
      auto s = std::make_unique<Stream>(load_trace(path));
      if (s->events.empty()) {
        std::fprintf(stderr, "codec_comparison_benchmark: %s: no events, skipped\n", path.c_str());
        continue;
      }
      for (int k = 2; !names.insert(s->name).second; ++k) {
        s->name = std::filesystem::path(path).stem().string() + "." + std::to_string(k);
      }
      streams.push_back(std::move(s));
    }
    if (streams.empty()) die("PARLOT_BENCH_TRACES names no trace with events");
  } else {
    std::fprintf(stderr,
                 "codec_comparison_benchmark: PARLOT_BENCH_TRACES not set, using a synthetic "
                 "stream\n");
    streams.push_back(std::make_unique<Stream>(synthetic_stream(std::size_t{1} << 24)));
  }

  std::vector<std::unique_ptr<Codec>> codecs;
  codecs.push_back(
      std::make_unique<ParlotCodec<codec::Encoder>>(parlot::format::Codec::kLzZe, "parlot1"));
  codecs.push_back(
      std::make_unique<ParlotCodec<codec::v2::Encoder>>(parlot::format::Codec::kLzRank, "parlot2"));
  // Codec 2 as format version 2 wrote it (length model 1), for comparison.
  codecs.push_back(std::make_unique<ParlotCodec<codec::v2::Encoder>>(parlot::format::Codec::kLzRank,
                                                                     "parlot2-v2", 2));
  // And as format version 3 wrote it (no table tail).
  codecs.push_back(std::make_unique<ParlotCodec<codec::v2::Encoder>>(parlot::format::Codec::kLzRank,
                                                                     "parlot2-v3", 3));
  // And as format version 4 wrote it (no long context).
  codecs.push_back(std::make_unique<ParlotCodec<codec::v2::Encoder>>(parlot::format::Codec::kLzRank,
                                                                     "parlot2-v4", 4));
  codecs.push_back(std::make_unique<ZstdCodec>(1, kBlockBytes, "zstd1"));
  codecs.push_back(std::make_unique<ZstdCodec>(19, kBlockBytes, "zstd19"));
  codecs.push_back(std::make_unique<Lz4Codec>(false, kBlockBytes));
  codecs.push_back(std::make_unique<Lz4Codec>(true, kBlockBytes));
  codecs.push_back(std::make_unique<ZstdCodec>(1, 0, "zstd1-whole"));
  codecs.push_back(std::make_unique<ZstdCodec>(3, 0, "zstd3-whole"));
  codecs.push_back(std::make_unique<ZstdCodec>(19, 0, "zstd19-whole"));
  codecs.push_back(std::make_unique<Lz4Codec>(false, 0));

  // PARLOT_BENCH_CODECS: comma-separated codec names to keep (default all).
  if (const char* keep = std::getenv("PARLOT_BENCH_CODECS"); keep != nullptr && *keep != '\0') {
    const std::string list = std::string(",") + keep + ",";
    std::erase_if(codecs, [&list](const std::unique_ptr<Codec>& c) {
      return list.find(std::string(",") + c->name() + ",") == std::string::npos;
    });
  }
  // Compress and check every round trip once, before anything is timed.
  std::vector<std::unique_ptr<Case>> cases;
  for (const auto& s : streams) {
    for (const auto& c : codecs) {
      auto k = std::make_unique<Case>(Case{s.get(), c.get(), {}});
      c->compress(*s, k->compressed);
      c->verify(*s, k->compressed);
      cases.push_back(std::move(k));
    }
  }
  print_ratio_table(streams, codecs, cases);
  for (const auto& k : cases) {
    const std::string suffix = std::string(k->codec->name()) + "/" + k->stream->name;
    benchmark::RegisterBenchmark(("BM_Compress/" + suffix).c_str(), bm_compress, k.get())
        ->Unit(benchmark::kMillisecond);
  }
  for (const auto& k : cases) {
    const std::string suffix = std::string(k->codec->name()) + "/" + k->stream->name;
    benchmark::RegisterBenchmark(("BM_Decompress/" + suffix).c_str(), bm_decompress, k.get())
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
