// Hand-made version-2 thread files holding side records, for the reader's
// tests of PAUX blocks (side_records_test.cpp, mpi_call_records_test.cpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <vector>

#include "parlot/format.h"
#include "temp_dir.h"

namespace parlot::test {

template <class T>
void append(std::vector<std::uint8_t>& b, const T& v) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof v);
}

/// LEB128 of `v`.
inline std::vector<std::uint8_t> varint(std::uint64_t v) {
  std::vector<std::uint8_t> out;
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
  return out;
}

/// Zigzag LEB128 of `v`.
inline std::vector<std::uint8_t> zigzag(std::int64_t v) {
  return varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

/// Concatenation of byte strings.
inline std::vector<std::uint8_t> cat(std::initializer_list<std::vector<std::uint8_t>> parts) {
  std::vector<std::uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline void append_record(std::vector<std::uint8_t>& b, std::uint8_t kind, std::uint64_t index,
                          const std::vector<std::uint8_t>& data) {
  format::AuxRecordHeader h{};
  h.kind = kind;
  h.data_bytes = static_cast<std::uint16_t>(data.size());
  h.event_index = index;
  append(b, h);
  b.insert(b.end(), data.begin(), data.end());
}

/// A complete version-2 file with no events: header, one PAUX block with
/// `side` as payload, the final block (count 0) and the trailer.
inline std::vector<std::uint8_t> file_with(const std::vector<std::uint8_t>& side) {
  std::vector<std::uint8_t> b;
  format::TraceFileHeader h{};
  std::memcpy(h.magic, format::kTraceMagic, sizeof h.magic);
  h.version = 2;
  h.codec = 1;
  h.header_bytes = sizeof h;
  append(b, h);
  append(b,
         format::BlockHeader{format::kAuxBlockMagic, static_cast<std::uint32_t>(side.size()), 0});
  b.insert(b.end(), side.begin(), side.end());
  append(b, format::BlockHeader{format::kFinalBlockMagic, 8, 1});
  append(b, std::uint64_t{0});
  append(b, format::BlockHeader{format::kTrailerMagic, sizeof(format::TrailerPayload), 2});
  format::TrailerPayload t{};
  t.payload_bytes = 8;
  append(b, t);
  return b;
}

inline std::filesystem::path write(const TempDir& dir, const std::vector<std::uint8_t>& b) {
  const auto path = dir.path() / "thread-0-1.trace";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return path;
}

/// File offset of the first side record's header in file_with()'s files.
inline constexpr std::uint64_t kFirstRecordOffset =
    sizeof(format::TraceFileHeader) + sizeof(format::BlockHeader);

}  // namespace parlot::test
