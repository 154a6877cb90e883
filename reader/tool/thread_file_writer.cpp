#include "thread_file_writer.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>

#include "parlot/codec.h"
#include "parlot/codec_v2.h"
#include "parlot/crc32c.h"

namespace parlot::tool {

namespace {

/// Collects the encoder's output; whole codec-2 segments become data-block
/// payloads (cut()).
struct BlockSink {
  std::vector<std::vector<std::uint8_t>> blocks;
  std::vector<std::uint8_t> pending;
  std::vector<std::uint8_t> window = std::vector<std::uint8_t>(64u << 10);
  codec::OutputWindow fresh() { return {window.data(), window.data() + window.size()}; }
  void drain(codec::OutputWindow& w) {
    pending.insert(pending.end(), window.data(), w.cur);
    w = fresh();
  }
  /// After a flush(): what was written is whole segments, one data block.
  void cut(codec::OutputWindow& w) {
    drain(w);
    if (!pending.empty()) blocks.push_back(std::move(pending));
    pending.clear();
  }
};

/// Events per data block (each block ends a codec-2 segment).
constexpr std::size_t kEventsPerBlock = std::size_t{1} << 22;

void put_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}

template <class T>
void put(std::vector<std::uint8_t>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

void put_record(std::vector<std::uint8_t>& out, format::AuxKind kind, std::uint64_t index,
                const std::vector<std::uint8_t>& data) {
  format::AuxRecordHeader h{};
  h.kind = static_cast<std::uint8_t>(kind);
  h.data_bytes = static_cast<std::uint16_t>(data.size());
  h.event_index = index;
  put(out, h);
  out.insert(out.end(), data.begin(), data.end());
}

/// The side records: clock samples in records of at most ~60 KB, then marks.
std::vector<std::vector<std::uint8_t>> side_records(const ThreadFileContents& c) {
  std::vector<std::vector<std::uint8_t>> records;
  std::size_t i = 0;
  while (i < c.samples.size()) {
    std::vector<std::uint8_t> data, record;
    const auto [index0, time0] = c.samples[i];
    put(data, time0);
    auto prev = c.samples[i++];
    while (i < c.samples.size() && data.size() < 60000) {
      put_varint(data, c.samples[i].first - prev.first);
      put_varint(data, c.samples[i].second - prev.second);
      prev = c.samples[i++];
    }
    put_record(record, format::AuxKind::kClockSamples, index0, data);
    records.push_back(std::move(record));
  }
  for (const auto& [index, label] : c.marks) {
    std::vector<std::uint8_t> record;
    const std::size_t n = std::min<std::size_t>(label.size(), 1024);
    put_record(record, format::AuxKind::kMark, index, {label.begin(), label.begin() + n});
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

std::uint64_t write_thread_file(const std::filesystem::path& file, const ThreadFileContents& c) {
  BlockSink sink;
  auto encoder = std::make_unique<codec::v2::Encoder>(sink, sink.fresh());
  std::uint64_t raw = 0, max_depth = 0, depth = 0;
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    const std::uint32_t v = c.events[i];
    if (i > 0 && i % kEventsPerBlock == 0) {
      encoder->flush();
      sink.cut(encoder->window());
    }
    encoder->encode(v);
    raw += codec::raw_bytes_of(v);
    depth = v ? depth + 1 : depth - 1;
    max_depth = std::max(max_depth, depth);
  }
  encoder->finish();
  sink.drain(encoder->window());
  const std::vector<std::uint8_t> last = std::move(sink.pending);

  std::vector<std::uint8_t> out;
  format::TraceFileHeader h{};
  std::memcpy(h.magic, format::kTraceMagic, sizeof h.magic);
  h.version = format::kVersion;
  h.codec = static_cast<std::uint16_t>(format::Codec::kLzRank);
  h.header_bytes = sizeof h;
  h.tid = c.tid;
  h.pid = c.pid;
  h.start_ns = c.start_ns;
  h.thread_index = c.thread_index;
  h.flags = format::kTraceFlagAuxChecksums;
  put(out, h);
  std::uint64_t sequence = 0, payload = 0;
  for (const auto& b : sink.blocks) {
    put(out,
        format::BlockHeader{format::kBlockMagic, static_cast<std::uint32_t>(b.size()), sequence++});
    out.insert(out.end(), b.begin(), b.end());
    payload += b.size();
  }
  // Side records in PAUX blocks of at most 1 MiB, each with its checksum.
  const auto records = side_records(c);
  for (std::size_t i = 0; i < records.size();) {
    std::vector<std::uint8_t> block;
    while (i < records.size() && (block.empty() || block.size() + records[i].size() < (1u << 20))) {
      block.insert(block.end(), records[i].begin(), records[i].end());
      ++i;
    }
    const std::uint32_t crc = crc32c::of(block.data(), block.size());
    format::AuxRecordHeader ch{};
    ch.kind = static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum);
    ch.data_bytes = 4;
    put(block, ch);
    put(block, crc);
    put(out, format::BlockHeader{format::kAuxBlockMagic, static_cast<std::uint32_t>(block.size()),
                                 sequence++});
    out.insert(out.end(), block.begin(), block.end());
  }
  const std::uint64_t events = c.events.size();
  put(out,
      format::BlockHeader{format::kFinalBlockMagic,
                          static_cast<std::uint32_t>(sizeof events + last.size()), sequence++});
  put(out, events);
  out.insert(out.end(), last.begin(), last.end());
  payload += sizeof events + last.size();
  format::TrailerPayload t{};
  t.events = events;
  t.raw_bytes = raw;
  t.payload_bytes = payload;
  t.end_ns = c.end_ns;
  t.max_depth = max_depth;
  put(out, format::BlockHeader{format::kTrailerMagic, sizeof t, sequence++});
  put(out, t);

  std::ofstream f(file, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  f.flush();
  if (!f) throw std::runtime_error("cannot write " + file.string());
  return out.size();
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> thin_samples(
    const std::vector<std::uint64_t>& times, std::uint64_t end_time, std::uint64_t tolerance) {
  const std::size_t n = times.size();
  auto at = [&](std::size_t i) { return i < n ? times[i] : std::max(end_time, times.back()); };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (n == 0) return {{0, end_time}};
  // Swing door: from the anchor, the slopes that pass within the tolerance
  // of every point so far; a point is a possible end when the line to it
  // does. When no slope is left, the last possible end is kept.
  const double tol = static_cast<double>(tolerance);
  out.emplace_back(0, at(0));
  for (std::size_t anchor = 0; anchor < n;) {
    double lo = -std::numeric_limits<double>::infinity();
    double hi = std::numeric_limits<double>::infinity();
    std::size_t end = anchor + 1;
    const double t0 = static_cast<double>(at(anchor));
    for (std::size_t j = anchor + 1; j <= n; ++j) {
      const double dx = static_cast<double>(j - anchor);
      const double dt = static_cast<double>(at(j)) - t0;
      const double exact = dt / dx;
      if (exact >= lo && exact <= hi) end = j;
      lo = std::max(lo, (dt - tol) / dx);
      hi = std::min(hi, (dt + tol) / dx);
      if (lo > hi) break;
    }
    out.emplace_back(end, at(end));
    anchor = end;
  }
  return out;
}

}  // namespace parlot::tool
