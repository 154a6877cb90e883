#include <algorithm>
#include <atomic>
#include <cstring>

#include "codec/decoder.h"
#include "input_files.h"
#include "parlot/crc32c.h"
#include "parlot/decode_progress.h"
#include "parlot/trace_reader.h"
#include "varint.h"

namespace parlot {
namespace {

std::atomic<std::uint64_t> g_events_decoded{0};  // events_decoded_so_far()

constexpr std::size_t kBatch = 1 << 16;

/// The decoder of the last thread file this thread finished reading, kept
/// for the next one (a reader thread goes through many files): reset()
/// instead of allocating a codec-2 model (about 1 MiB) again.
thread_local std::unique_ptr<codec::Decoder> t_spare_decoder;

/// A decoder for `c`: this thread's spare, reset, when it reads `c`.
std::unique_ptr<codec::Decoder> take_decoder(format::Codec c) {
  if (t_spare_decoder && t_spare_decoder->codec() == c) {
    t_spare_decoder->reset();
    return std::move(t_spare_decoder);
  }
  return std::make_unique<codec::Decoder>(c);
}

using detail::read_varint;

/// Parses the data of a kind-4 record (several MPI calls; docs/FORMAT.md
/// "Kind 4, MPI calls") at file offset `offset` whose first call's entry
/// event is `first_entry`, appending one MpiCallArguments per call to `out`.
/// Throws FormatError naming the file and the offset of the bad entry.
void parse_mpi_calls(const std::filesystem::path& path, std::uint64_t offset,
                     std::uint64_t first_entry, std::span<const std::uint8_t> data,
                     std::vector<MpiCallArguments>& out) {
  const std::uint8_t* const begin = data.data();
  const std::uint8_t* const end = begin + data.size();
  const std::uint8_t* p = begin;
  std::uint64_t entry = first_entry;
  if (p == end) throw FormatError(path, offset, "MPI calls record without a call");
  while (p < end) {
    const std::uint64_t at = offset + static_cast<std::uint64_t>(p - begin);
    std::uint64_t zigzag = 0, n = 0;
    if (!read_varint(p, end, zigzag) || !read_varint(p, end, n)) {
      throw FormatError(path, at, "MPI call entry cut short");
    }
    const auto delta = static_cast<std::int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
    if ((delta < 0 && static_cast<std::uint64_t>(-(delta + 1)) >= entry) ||
        (delta > 0 && static_cast<std::uint64_t>(delta) > ~std::uint64_t{0} - entry)) {
      throw FormatError(path, at, "MPI call entry event out of range");
    }
    entry += static_cast<std::uint64_t>(delta);
    if (n > static_cast<std::uint64_t>(end - p)) {
      throw FormatError(path, at, "MPI call longer than its record");
    }
    out.push_back(decode_mpi_call(path, offset + static_cast<std::uint64_t>(p - begin), entry,
                                  std::span<const std::uint8_t>(p, static_cast<std::size_t>(n))));
    p += n;
  }
}

/// Parses the data of a kind-6 record (call sites; docs/FORMAT.md "Kind 6,
/// call sites") at file offset `offset` whose first entry event is
/// `first_entry`, appending one CallSite per entry to `out`. Entries never
/// go back in events, within the record or from the last one of `out`.
/// Throws FormatError naming the file and the offset of the bad entry.
void parse_call_sites(const std::filesystem::path& path, std::uint64_t offset,
                      std::uint64_t first_entry, std::span<const std::uint8_t> data,
                      std::vector<CallSite>& out) {
  const std::uint8_t* const begin = data.data();
  const std::uint8_t* const end = begin + data.size();
  const std::uint8_t* p = begin;
  if (p == end) throw FormatError(path, offset, "call-site record without a site");
  std::uint64_t entry = first_entry;
  std::uint64_t site = 0;
  while (p < end) {
    const std::uint64_t at = offset + static_cast<std::uint64_t>(p - begin);
    std::uint64_t delta = 0, zigzag = 0;
    if (!read_varint(p, end, delta) || !read_varint(p, end, zigzag)) {
      throw FormatError(path, at, "call site cut short");
    }
    if (delta > ~std::uint64_t{0} - entry) {
      throw FormatError(path, at, "call site's entry event out of range");
    }
    entry += delta;
    if (!out.empty() && entry < out.back().event_index) {
      throw FormatError(path, at, "call sites go back in events");
    }
    // Modular: the delta from the previous site, wrapping as it was made.
    site += (zigzag >> 1) ^ (~(zigzag & 1) + 1);
    out.push_back({entry, site});
  }
}

/// Checks the block-checksum record (kind 5) whose header is at payload
/// byte `at` (file offset `offset` + `at`): it must be the block's last
/// record, exactly as the runtime writes it, and hold the CRC32C of the
/// payload bytes before it. Throws FormatError naming the record's offset.
void check_block_checksum(const std::filesystem::path& path, std::uint64_t offset,
                          const std::vector<std::uint8_t>& payload, std::size_t at) {
  format::AuxRecordHeader h{};
  if (payload.size() - at < sizeof h) {
    throw FormatError(path, offset + at, "side-record block checksum cut short");
  }
  std::memcpy(&h, payload.data() + at, sizeof h);
  if (h.kind != static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum) || h.reserved0 != 0 ||
      h.reserved1 != 0 || h.event_index != 0 || h.data_bytes != sizeof(std::uint32_t) ||
      payload.size() - at != format::kBlockChecksumRecordBytes) {
    throw FormatError(path, offset + at,
                      "side-record block without a valid checksum record at its end");
  }
  std::uint32_t stored = 0;
  std::memcpy(&stored, payload.data() + at + sizeof h, sizeof stored);
  const std::uint32_t computed = crc32c::of(payload.data(), at);
  if (stored != computed) {
    throw FormatError(path, offset + at,
                      "side-record block checksum mismatch (the block's clock samples, marks "
                      "or MPI arguments were altered)");
  }
}

/// Parses the side records of one PAUX block payload (starting at file
/// offset `offset`) into `summary` (clock samples, marks, MPI calls). Unknown
/// kinds are skipped. With `checksummed` (the file header's
/// kTraceFlagAuxChecksums) the block must end with a valid block-checksum
/// record, checked before any record is read; without it, a checksum record
/// found is checked all the same. `restarts` counts the restart records of
/// a flight window (the first one fills summary.flight_window).
void parse_side_records(const std::filesystem::path& path, std::uint64_t offset,
                        const std::vector<std::uint8_t>& payload, ThreadTraceSummary& summary,
                        bool checksummed, std::uint64_t* restarts = nullptr) {
  if (checksummed) {
    if (payload.size() < format::kBlockChecksumRecordBytes) {
      throw FormatError(path, offset, "side-record block too short for its checksum");
    }
    check_block_checksum(path, offset, payload, payload.size() - format::kBlockChecksumRecordBytes);
  }
  std::vector<ClockSample>& samples = summary.clock_samples;
  std::size_t at = 0;
  while (at < payload.size()) {
    format::AuxRecordHeader h{};
    if (payload.size() - at < sizeof h) {
      throw FormatError(path, offset + at, "side record header cut short");
    }
    std::memcpy(&h, payload.data() + at, sizeof h);
    const std::size_t data = at + sizeof h;
    if (payload.size() - data < h.data_bytes) {
      throw FormatError(path, offset + at, "side record longer than its block");
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kBlockChecksum)) {
      check_block_checksum(path, offset, payload, at);
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kMpiCall)) {
      summary.mpi_calls.push_back(
          decode_mpi_call(path, offset + data, h.event_index,
                          std::span<const std::uint8_t>(payload.data() + data, h.data_bytes)));
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kMpiCallBegun)) {
      summary.mpi_calls_begun.push_back(
          decode_mpi_call(path, offset + data, h.event_index,
                          std::span<const std::uint8_t>(payload.data() + data, h.data_bytes)));
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kMpiCalls)) {
      parse_mpi_calls(path, offset + data, h.event_index,
                      std::span<const std::uint8_t>(payload.data() + data, h.data_bytes),
                      summary.mpi_calls);
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kCallSites)) {
      parse_call_sites(path, offset + data, h.event_index,
                       std::span<const std::uint8_t>(payload.data() + data, h.data_bytes),
                       summary.call_sites);
    }
    if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kClockSamples)) {
      const std::uint8_t* p = payload.data() + data;
      const std::uint8_t* end = p + h.data_bytes;
      ClockSample s{h.event_index, 0};
      if (h.data_bytes < sizeof s.ns)
        throw FormatError(path, offset + at, "clock record too short");
      std::memcpy(&s.ns, p, sizeof s.ns);
      p += sizeof s.ns;
      auto add = [&] {
        if (!samples.empty() &&
            (s.event_index < samples.back().event_index || s.ns < samples.back().ns)) {
          throw FormatError(path, offset + at, "clock samples go back in events or time");
        }
        samples.push_back(s);
      };
      add();
      while (p < end) {
        std::uint64_t di = 0, dt = 0;
        if (!read_varint(p, end, di) || !read_varint(p, end, dt)) {
          throw FormatError(path, offset + static_cast<std::uint64_t>(p - payload.data()),
                            "clock sample cut short");
        }
        s.event_index += di;
        s.ns += dt;
        add();
      }
    } else if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kRestart) &&
               summary.flight_window) {
      // A restart point of a flight window: the first one says what the
      // window starts with; the next data block starts a fresh decoder.
      if (h.data_bytes < sizeof(std::uint64_t) || (h.data_bytes - sizeof(std::uint64_t)) % 4 != 0) {
        throw FormatError(path, offset + at, "restart record of a bad size");
      }
      if (restarts != nullptr && (*restarts)++ == 0) {
        const std::uint8_t* p = payload.data() + data;
        std::memcpy(&summary.flight_window->dropped_events, p, sizeof(std::uint64_t));
        const std::size_t n = (h.data_bytes - sizeof(std::uint64_t)) / 4;
        summary.flight_window->open_frames.resize(n);
        if (n != 0) std::memcpy(summary.flight_window->open_frames.data(), p + 8, 4 * n);
        if (h.event_index != n) {
          throw FormatError(path, offset + at + 8,
                            "the window's first restart point is not after its open frames");
        }
      }
    } else if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kTracingSwitched)) {
      if (h.data_bytes != 1 + sizeof(std::uint64_t) || payload[data] > 1) {
        throw FormatError(path, offset + at, "tracing-switch record of a bad size or state");
      }
      TracingSwitch sw;
      sw.event_index = h.event_index;
      sw.on = payload[data] == 1;
      std::memcpy(&sw.ns, payload.data() + data + 1, sizeof sw.ns);
      summary.switches.push_back(sw);
    } else if (h.kind == static_cast<std::uint8_t>(format::AuxKind::kMark)) {
      const auto* label = reinterpret_cast<const char*>(payload.data() + data);
      summary.marks.push_back({h.event_index, std::string(label, h.data_bytes)});
    }
    at = data + h.data_bytes;
  }
}

}  // namespace

ThreadEventReader::ThreadEventReader(const std::filesystem::path& path) {
  summary_.path = path;
  if (!detail::input_is_file(path)) throw FormatError(path, 0, "not a regular file");
  {
    const detail::OpenablePath file(path);
    in_.open(file.path(), std::ios::binary);
  }
  if (!in_) throw FormatError(path, 0, "cannot open file");
  in_.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in_.tellg());
  summary_.file_bytes = size;
  in_.seekg(0);
  format::TraceFileHeader h{};
  in_.read(reinterpret_cast<char*>(&h), sizeof h);
  if (static_cast<std::size_t>(in_.gcount()) != sizeof h) {
    throw FormatError(path, 0, "file shorter than the 64-byte trace header");
  }
  if (std::memcmp(h.magic, format::kTraceMagic, sizeof h.magic) != 0) {
    throw FormatError(path, 0, "bad magic (not a Parlot thread trace)");
  }
  if (h.version < format::kOldestVersion ||
      (h.version > format::kVersion && h.version != format::kFlightVersion)) {
    throw FormatError(path, 8,
                      "unsupported version " + std::to_string(h.version) +
                          " (this reader reads versions " + std::to_string(format::kOldestVersion) +
                          " to " + std::to_string(format::kVersion) + ")");
  }
  summary_.version = h.version;
  if (h.version == format::kFlightVersion) {
    // A flight window: version 5's stream, restart points in its side records.
    if ((h.flags & format::kTraceFlagFlightWindow) == 0) {
      throw FormatError(path, 8, "version 6 without the flight-window flag");
    }
    summary_.version = format::kVersion;
    summary_.flight_window = ThreadTraceSummary::FlightWindow{};
  }
  if (h.codec > static_cast<std::uint16_t>(format::Codec::kLzRank)) {
    throw FormatError(path, 10, "unknown codec " + std::to_string(h.codec));
  }
  if (h.header_bytes < sizeof h || h.header_bytes > 4096 || h.header_bytes > size) {
    throw FormatError(path, 12, "bad header size " + std::to_string(h.header_bytes));
  }
  summary_.tid = h.tid;
  summary_.pid = h.pid;
  summary_.thread_index = h.thread_index;
  summary_.codec = static_cast<format::Codec>(h.codec);
  summary_.start_ns = h.start_ns;

  header_flags_ = h.flags;
  scan_offset_ = h.header_bytes;
  scan_blocks(size);
  next_block_offset_ = h.header_bytes;
  // The decoder (codec 2: a 1 MiB model) and the batch are made by the
  // first next_batch(): opening a file for its summary costs neither.
}

void ThreadEventReader::scan_blocks(std::uint64_t size) {
  // Walk the block headers: structure first, data later.
  const std::filesystem::path& path = summary_.path;
  const std::uint16_t version = summary_.version;
  summary_.damage.clear();
  summary_.damage_offset = 0;
  summary_.ends_at_block_boundary = false;
  in_.clear();
  std::uint64_t& off = scan_offset_;
  std::uint64_t restarts_at_block = restarts_seen_;
  for (std::uint64_t& seq = scan_sequence_;; ++seq) {
    if (off == size) {
      summary_.damage = "file ends without a trailer (the trace was cut short)";
      summary_.damage_offset = off;
      summary_.ends_at_block_boundary = true;
      break;
    }
    format::BlockHeader b{};
    in_.seekg(static_cast<std::streamoff>(off));
    in_.read(reinterpret_cast<char*>(&b), sizeof b);
    if (static_cast<std::size_t>(in_.gcount()) != sizeof b) {
      summary_.damage = "block header cut short";
      summary_.damage_offset = off;
      break;
    }
    const bool side = b.magic == format::kAuxBlockMagic && version >= 2;
    if (b.magic != format::kBlockMagic && b.magic != format::kFinalBlockMagic &&
        b.magic != format::kTrailerMagic && !side) {
      throw FormatError(path, off, "bad block magic");
    }
    if (b.sequence != seq) {
      throw FormatError(
          path, off + 8,
          "block sequence " + std::to_string(b.sequence) + ", expected " + std::to_string(seq));
    }
    if (side) {
      if (summary_.final_events) throw FormatError(path, off, "side records after the final block");
      if (b.payload_bytes == 0 || b.payload_bytes > format::kMaxBlockPayload) {
        throw FormatError(path, off + 4, "bad block size " + std::to_string(b.payload_bytes));
      }
      if (off + sizeof b + b.payload_bytes > size) {
        summary_.damage = "block payload cut short";
        summary_.damage_offset = off;
        break;
      }
      std::vector<std::uint8_t> payload(b.payload_bytes);
      in_.read(reinterpret_cast<char*>(payload.data()), b.payload_bytes);
      parse_side_records(path, off + sizeof b, payload, summary_,
                         (header_flags_ & format::kTraceFlagAuxChecksums) != 0, &restarts_seen_);
      ++summary_.side_blocks;
      off += sizeof b + b.payload_bytes;
      continue;
    }
    if (b.magic == format::kTrailerMagic) {
      if (b.payload_bytes != sizeof(format::TrailerPayload)) {
        throw FormatError(path, off + 4, "bad trailer size");
      }
      if (!summary_.final_events) {
        throw FormatError(path, off, "trailer without a final data block");
      }
      format::TrailerPayload t{};
      in_.read(reinterpret_cast<char*>(&t), sizeof t);
      if (static_cast<std::size_t>(in_.gcount()) != sizeof t) {
        summary_.damage = "trailer cut short";
        summary_.damage_offset = off;
        break;
      }
      if (off + sizeof b + sizeof t != size) {
        throw FormatError(path, off + sizeof b + sizeof t, "data after the trailer");
      }
      if (t.events != *summary_.final_events) {
        throw FormatError(path, off + sizeof b,
                          "trailer counts " + std::to_string(t.events) +
                              " events, the final block " + std::to_string(*summary_.final_events));
      }
      if (t.payload_bytes != summary_.payload_bytes) {
        throw FormatError(path, off + sizeof b + 16,
                          "trailer counts " + std::to_string(t.payload_bytes) +
                              " payload bytes, the blocks hold " +
                              std::to_string(summary_.payload_bytes));
      }
      summary_.trailer = t;
      break;
    }
    if (summary_.final_events) {
      throw FormatError(path, off, "data block after the final block");
    }
    const bool final = b.magic == format::kFinalBlockMagic;
    const std::uint32_t min_payload = final ? sizeof(std::uint64_t) : 1;
    if (b.payload_bytes < min_payload || b.payload_bytes > format::kMaxBlockPayload) {
      throw FormatError(path, off + 4, "bad block size " + std::to_string(b.payload_bytes));
    }
    if (off + sizeof b + b.payload_bytes > size) {
      summary_.damage = "block payload cut short";
      summary_.damage_offset = off;
      break;
    }
    if (final) {
      std::uint64_t events = 0;
      in_.read(reinterpret_cast<char*>(&events), sizeof events);
      summary_.final_events = events;
    }
    if (summary_.flight_window && restarts_seen_ != restarts_at_block) {
      summary_.restart_blocks.push_back(summary_.blocks);  // after a restart point
    }
    restarts_at_block = restarts_seen_;
    ++summary_.blocks;
    summary_.payload_bytes += b.payload_bytes;
    off += sizeof b + b.payload_bytes;
  }
  // The runtime writes marks in event order; a damaged or foreign file may
  // not.
  std::stable_sort(summary_.marks.begin(), summary_.marks.end(),
                   [](const Mark& a, const Mark& b) { return a.event_index < b.event_index; });
  // Records are written in call order, a call's after the calls nested in
  // it: order them by entry event.
  const auto by_entry = [](const MpiCallArguments& a, const MpiCallArguments& b) {
    return a.event_index < b.event_index;
  };
  std::stable_sort(summary_.mpi_calls.begin(), summary_.mpi_calls.end(), by_entry);
  std::stable_sort(summary_.mpi_calls_begun.begin(), summary_.mpi_calls_begun.end(), by_entry);
}

bool ThreadEventReader::refresh() {
  if (summary_.trailer) return false;
  std::error_code ec;
  const std::uint64_t size = detail::input_file_size(summary_.path, ec);
  if (ec || size <= scan_offset_) return false;
  const std::uint64_t blocks = summary_.blocks;
  const std::uint64_t side_blocks = summary_.side_blocks;
  summary_.file_bytes = size;
  scan_blocks(size);
  if (summary_.blocks == blocks && summary_.side_blocks == side_blocks && !summary_.trailer) {
    return false;
  }
  done_ = false;
  return true;
}

ThreadEventReader::~ThreadEventReader() {
  if (decoder_) t_spare_decoder = std::move(decoder_);
}

bool ThreadEventReader::load_next_block() {
  if (blocks_read_ == summary_.blocks) return false;
  format::BlockHeader b{};
  in_.clear();
  for (;;) {  // side-record blocks were read at open
    in_.seekg(static_cast<std::streamoff>(next_block_offset_));
    in_.read(reinterpret_cast<char*>(&b), sizeof b);
    if (static_cast<std::size_t>(in_.gcount()) != sizeof b || b.magic != format::kAuxBlockMagic ||
        summary_.version < 2) {
      break;
    }
    next_block_offset_ += sizeof b + b.payload_bytes;
  }
  // The file was checked at open; recheck what is read in case it changed.
  const bool final = b.magic == format::kFinalBlockMagic;
  if (static_cast<std::size_t>(in_.gcount()) != sizeof b ||
      (b.magic != format::kBlockMagic && !final) ||
      b.payload_bytes < (final ? sizeof(std::uint64_t) : 1) ||
      b.payload_bytes > format::kMaxBlockPayload) {
    throw FormatError(summary_.path, next_block_offset_, "block changed while reading");
  }
  payload_.resize(b.payload_bytes);
  in_.read(reinterpret_cast<char*>(payload_.data()), b.payload_bytes);
  if (static_cast<std::uint32_t>(in_.gcount()) != b.payload_bytes) {
    throw FormatError(summary_.path, next_block_offset_, "block payload cut short");
  }
  block_payload_offset_ = next_block_offset_ + sizeof b;
  next_block_offset_ = block_payload_offset_ + b.payload_bytes;
  if (next_restart_ < summary_.restart_blocks.size() &&
      summary_.restart_blocks[next_restart_] == blocks_read_) {
    // A restart point (flight window): the block's codec starts afresh.
    ++next_restart_;
    decoder_->reset();
    decoder_->set_format_version(summary_.version);
  }
  ++blocks_read_;
  // The final block's event count was read at open.
  const std::size_t skip = final ? sizeof(std::uint64_t) : 0;
  decoder_->feed(payload_.data() + skip, payload_.size() - skip);
  block_payload_offset_ += skip;
  return true;
}

std::span<const std::uint32_t> ThreadEventReader::next_batch() {
  if (done_) return {};
  const std::uint64_t limit = summary_.trailer        ? summary_.trailer->events
                              : summary_.final_events ? *summary_.final_events
                                                      : ~std::uint64_t{0};
  if (!decoder_) {
    decoder_ = take_decoder(summary_.codec);
    decoder_->set_format_version(summary_.version);
    // A short thread (many processes of few events) gets a short batch.
    batch_.resize(static_cast<std::size_t>(std::clamp<std::uint64_t>(limit, 1, kBatch)));
  }
  if (summary_.flight_window && !window_emitted_) {
    // A flight window starts with the entries of the frames open at its start.
    window_emitted_ = true;
    const auto& frames = summary_.flight_window->open_frames;
    if (frames.size() > limit) {
      throw FormatError(summary_.path, 0, "the window's open frames exceed its event count");
    }
    if (!frames.empty()) {
      events_read_ += frames.size();
      window_frames_ = frames;
      return {window_frames_.data(), window_frames_.size()};
    }
  }
  for (;;) {
    const std::uint64_t left = limit - events_read_;
    if (left == 0) {
      done_ = true;
      return {};
    }
    const std::size_t cap = static_cast<std::size_t>(std::min<std::uint64_t>(left, batch_.size()));
    const std::size_t n = decoder_->next(batch_.data(), cap);
    if (decoder_->status() == codec::Decoder::Status::kError) {
      throw FormatError(summary_.path, block_payload_offset_ + decoder_->error_offset(),
                        std::string("corrupt event data: ") + decoder_->error());
    }
    if (n != 0) {
      events_read_ += n;
      g_events_decoded.fetch_add(n, std::memory_order_relaxed);
      return {batch_.data(), n};
    }
    if (!load_next_block()) {
      done_ = true;
      if (summary_.trailer || summary_.final_events) {
        throw FormatError(summary_.path, next_block_offset_,
                          "event data ends after " + std::to_string(events_read_) + " of " +
                              std::to_string(limit) + " events");
      }
      return {};
    }
  }
}

std::uint64_t events_decoded_so_far() {
  return g_events_decoded.load(std::memory_order_relaxed);
}

}  // namespace parlot
