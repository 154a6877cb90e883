// The node file's records (docs/FORMAT.md, "Node files"): the container in
// which the node layout keeps the files of every process of a node. The
// per-process formats inside (parlot/format.h) are unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "parlot/crc32c.h"

namespace parlot::format {

// ---- Node files: "node-<name>.parlot" ------------------------------------------

/// First 4 bytes of every record of a node file ("PNRC" little-endian). A
/// node file is a sequence of records that the processes of one node
/// append, each with one write(2); it has no file header (docs/FORMAT.md,
/// "Node files").
inline constexpr std::uint32_t kNodeRecordMagic = 0x43524e50u;
/// Version of the node-file record layout.
inline constexpr std::uint8_t kNodeVersion = 1;
/// Largest record (header, name and payload) a reader accepts: 64 MiB.
inline constexpr std::uint32_t kMaxNodeRecordBytes = 64u << 20;
/// Longest "<process>/<file>" name of a record.
inline constexpr std::uint16_t kMaxNodeRecordName = 512;

/// What a node-file record does to its logical file.
enum class NodeRecordKind : std::uint8_t {
  kAppend = 1,     ///< payload appended at the logical file's end
  kWriteAt = 2,    ///< payload written at `offset` (the file grows if needed)
  kReplace = 3,    ///< the logical file becomes the payload (created if absent)
  kPublish = 4,    ///< no payload: the process's first files are whole; the
                   ///< reader lists a process only once this record is seen
  kReference = 5,  ///< payload: NodeReference; the logical file becomes the
                   ///< bytes of an earlier kReplace record of this node file
};

/// Header of a node-file record (40 bytes). It is followed by `name_bytes`
/// bytes of name ("<process directory>/<file>", e.g.
/// "rank-3.pid-1234/thread-0-1234.trace") and then the payload, up to
/// `record_bytes`. Records start at any byte offset (no padding).
struct NodeRecordHeader {
  std::uint32_t magic;         ///< kNodeRecordMagic
  std::uint32_t record_bytes;  ///< header + name + payload
  std::uint32_t crc32c;        ///< CRC32C of the whole record with this field zero
  std::uint8_t version;        ///< kNodeVersion
  std::uint8_t kind;           ///< NodeRecordKind
  std::uint16_t name_bytes;    ///< 1..kMaxNodeRecordName
  std::uint32_t pid;           ///< the writing process
  std::uint32_t reserved;      ///< zero
  std::uint64_t start_ns;      ///< the process's trace start (CLOCK_REALTIME ns): with the
                               ///< name, tells apart two images of one pid (exec)
  std::uint64_t offset;        ///< kWriteAt: logical offset; else zero
};
static_assert(sizeof(NodeRecordHeader) == 40);

/// Payload of a kReference record (24 bytes): the content is that of the
/// earliest kReplace record before it in the same node file whose payload
/// has this length and hash.
struct NodeReference {
  std::uint64_t bytes;    ///< payload length
  std::uint64_t hash[2];  ///< 128-bit content hash (docs/FORMAT.md)
};
static_assert(sizeof(NodeReference) == 24);

/// CRC32C of the bytes of a previous call (`crc`, its result) followed by
/// the `n` bytes at `data`: crc32c_extend(crc32c::of(a, na), b, nb) is the
/// CRC32C of a then b; crc32c_extend(0, d, n) == crc32c::of(d, n). For a
/// record's checksum over its header, name and payload.
constexpr std::uint32_t crc32c_extend(std::uint32_t crc, const std::uint8_t* data, std::size_t n) {
  std::uint32_t c = crc ^ 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = crc32c::detail::kTable[(c ^ data[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

}  // namespace parlot::format
