// On-disk layout of a Parlot trace directory. The normative description is
// docs/FORMAT.md; this header is its machine-readable half and is shared by
// the runtime (writer) and the reader. All integers are little-endian.
//
// Every struct here is trivially copyable, has no padding and a fixed size
// checked by static_assert, so the runtime can write it with one write(2) and
// the reader can read it with one read and validate every field.
#pragma once

#include <cstdint>

namespace parlot::format {

/// Version the runtime writes in thread trace and function table headers.
/// Version 2 adds side-record blocks (kAuxBlockMagic) to thread files;
/// version 3 codes codec 2's match lengths with length model 2
/// (codec/FORMAT.md), nothing else; version 4 keeps only the last
/// v2::kTableTail positions of codec 2's matches that do not repeat
/// themselves in the LZ context table (codec/FORMAT.md "Context table in
/// a match"), nothing else; version 5 adds codec 2's long context (a second
/// LZ table under the last 6 events, codec/FORMAT.md "Long context"),
/// nothing else. A reader accepts kOldestVersion..kVersion and
/// refuses others with an error naming the file.
inline constexpr std::uint16_t kVersion = 5;
/// Oldest binary version readers still read (version 1: no side records).
inline constexpr std::uint16_t kOldestVersion = 1;

// ---- Per-thread trace file: "thread-<tid>.trace" ---------------------------

/// First 8 bytes of a thread trace file.
inline constexpr char kTraceMagic[8] = {'P', 'A', 'R', 'L', 'O', 'T', 'T', 'R'};

/// How the event stream in a trace file's blocks is encoded.
enum class Codec : std::uint16_t {
  /// The word stream uncompressed (the paper's ParLoT-NC variant).
  kRawWords = 0,
  /// Context-hash word LZ followed by zero elimination (ParLoT paper §3.3;
  /// see codec/FORMAT.md).
  kLzZe = 1,
  /// Codec 1's match path, with lengths and literals range-coded and
  /// literals ranked by a call-structure context (codec/FORMAT.md
  /// "Codec 2").
  kLzRank = 2,
};

/// Header at offset 0 of a thread trace file (64 bytes).
struct TraceFileHeader {
  char magic[8];               ///< kTraceMagic
  std::uint16_t version;       ///< kVersion
  std::uint16_t codec;         ///< a Codec value
  std::uint32_t header_bytes;  ///< sizeof(TraceFileHeader); lets a reader skip a larger header
  std::uint64_t tid;           ///< kernel thread ID (gettid)
  std::uint64_t pid;           ///< process ID
  std::uint64_t start_ns;      ///< CLOCK_REALTIME at the thread's first event, ns since the epoch
  std::uint64_t thread_index;  ///< order in which the process's threads started tracing (0 = first)
  std::uint64_t flags;         ///< kTraceFlag* bits (zero in older files; a reader ignores others)
  std::uint64_t reserved;      ///< zero
};
static_assert(sizeof(TraceFileHeader) == 64);

/// TraceFileHeader::flags bit: every PAUX block of the file ends with a
/// block-checksum record (AuxKind::kBlockChecksum). Readers that know the
/// bit reject a PAUX block without one; older readers ignore the field (it
/// was reserved, zero) and skip the record as an unknown kind.
inline constexpr std::uint64_t kTraceFlagAuxChecksums = 1;

/// TraceFileHeader::flags bit: the file is a flight-recorder window
/// (PARLOT_MODE=flight; docs/FORMAT.md "Flight windows"), written with
/// version kFlightVersion. Its side records include restart points
/// (AuxKind::kRestart): the data block after each starts a fresh decoder,
/// and the first one names the frames open when the window starts.
inline constexpr std::uint64_t kTraceFlagFlightWindow = 2;

/// The version of a flight-window thread file (kTraceFlagFlightWindow):
/// version 5's format plus restart points. An older reader refuses the
/// file instead of decoding its blocks with the wrong model; the event
/// stream's bytes follow version 5 (codec 2's model of kVersion).
inline constexpr std::uint16_t kFlightVersion = 6;

/// Magic of a data block: "PBLK".
inline constexpr std::uint32_t kBlockMagic = 0x4b4c4250u;
/// Magic of the final data block: "PFIN". Its payload starts with the
/// stream's total event count (u64), then the stream's last bytes, which end
/// with the encoder's padding: the count tells a reader where the events end
/// even when the trailer is lost. Every finalised stream has exactly one.
inline constexpr std::uint32_t kFinalBlockMagic = 0x4e494650u;
/// Magic of the trailer block: "PEND".
inline constexpr std::uint32_t kTrailerMagic = 0x444e4550u;
/// Magic of a side-record block: "PAUX" (version 2). Its payload holds
/// out-of-band records (AuxRecordHeader + data), not events; data blocks and
/// side-record blocks share one sequence. Readers skip kinds they do not know.
inline constexpr std::uint32_t kAuxBlockMagic = 0x58554150u;

/// Header of one side record inside a PAUX block (16 bytes, unaligned in
/// the payload: read it with memcpy). `data_bytes` of data follow.
struct AuxRecordHeader {
  std::uint8_t kind;          ///< an AuxKind; unknown kinds are skipped
  std::uint8_t reserved0;     ///< zero
  std::uint16_t data_bytes;   ///< bytes of data after this header
  std::uint32_t reserved1;    ///< zero
  std::uint64_t event_index;  ///< absolute index in the thread's stream of the event it is about
};
static_assert(sizeof(AuxRecordHeader) == 16);

/// Kinds of side records.
enum class AuxKind : std::uint8_t {
  /// Clock samples: data = u64 CLOCK_MONOTONIC ns at `event_index` (the
  /// event with that index happened at or after that time), then zero or
  /// more pairs of LEB128 varints (event index delta >= 0, time delta ns >= 0),
  /// each one more sample relative to the previous one.
  kClockSamples = 1,
  /// A user mark (parlot_mark): data = the label's bytes (UTF-8 as given,
  /// no NUL, at most 1024 bytes); `event_index` = the index of the first
  /// event after the mark (the event count when none follows).
  kMark = 2,
  /// Arguments of one MPI call (PARLOT_MPI_ARGS=1): `event_index` = the
  /// call's entry event; data = a LEB128 presence mask (bit i = MpiField i),
  /// then each present field in bit order: a zigzag LEB128 varint, except
  /// kCompleted, a LEB128 count n then n x 4 zigzag varints (request index,
  /// source, tag, bytes). See docs/FORMAT.md "Kind 3, MPI call".
  kMpiCall = 3,
  /// Arguments of several MPI calls of one thread (what the runtime writes
  /// since kind 3 cost a 16-byte header per call): `event_index` = the
  /// first call's entry event; data = one or more entries, each a zigzag
  /// LEB128 entry-event delta (from the previous entry; the first from
  /// `event_index`), a LEB128 byte count n, then n bytes laid out as the
  /// data of a kind-3 record. See docs/FORMAT.md "Kind 4, MPI calls".
  kMpiCalls = 4,
  /// Checksum of the side-record block it ends (the last record of every
  /// PAUX block of a file whose header has kTraceFlagAuxChecksums): data =
  /// u32 CRC32C (crc32c.h) of the block's payload bytes before this
  /// record's header; `event_index`, `reserved0` and `reserved1` are 0 and
  /// `data_bytes` is 4. See docs/FORMAT.md "Kind 5, block checksum".
  kBlockChecksum = 5,
  /// A restart point of a flight window (only in files with
  /// kTraceFlagFlightWindow): the next data block starts a fresh decoder
  /// (codec state reset). `event_index` = the index of that block's first
  /// event; data = u64 events the thread recorded before it, then one u32
  /// function ID per frame open before that event, outermost first. See
  /// docs/FORMAT.md "Flight windows".
  kRestart = 7,
  /// Arguments of one MPI call that records results (a receive, a wait),
  /// written before the call is made (PARLOT_MPI_ARGS=1): data laid out as
  /// kMpiCall's, without the results; `event_index` = the call's entry
  /// event. A kMpiCall/kMpiCalls record of the same entry, written when
  /// the call returns, supersedes it: alone it tells the arguments of a
  /// call that never returned (a hung receive). See docs/FORMAT.md "Kind
  /// 8, MPI call begun".
  kMpiCallBegun = 8,
  /// Call sites of entry events (PARLOT_CALL_SITES, on by default):
  /// `event_index` = the entry event of the record's first site; data = one
  /// or more entries, each a LEB128 entry-event delta (from the previous
  /// entry; the first from `event_index`, so 0) then a zigzag LEB128 delta
  /// of the call site (the return address the entry hook was handed, a
  /// run-time address) from the previous entry's (the first from 0). A
  /// site holds for its entry and for every later entry of the same
  /// context (the caller entry's site, the callee, the site of the
  /// caller's previous callee) until another site of that context. See
  /// docs/FORMAT.md "Kind 6, call sites".
  kCallSites = 6,
};

/// Bytes of a block-checksum record (header and data).
inline constexpr std::uint32_t kBlockChecksumRecordBytes = sizeof(AuxRecordHeader) + 4;

/// Fields of a kind-3 record (AuxKind::kMpiCall), by presence-mask bit.
/// runtime/mpi/mpi_call_record.h numbers them the same way (C).
enum class MpiField : std::uint8_t {
  kDest = 0,          ///< peer rank a message goes to
  kSource = 1,        ///< peer rank a message comes from (argument, may be MPI_ANY_SOURCE)
  kTag = 2,           ///< tag (of the message sent, for MPI_Sendrecv)
  kBytes = 3,         ///< count x datatype size of the (send) buffer, bytes
  kComm = 4,          ///< communicator ID: 0 WORLD, 1 SELF, else agreed at creation
  kCommSize = 5,      ///< size of the communicator (local group), ranks
  kRoot = 6,          ///< root rank of a rooted collective
  kRecvTag = 7,       ///< tag of the message received (MPI_Sendrecv)
  kRecvBytes = 8,     ///< count x datatype size of the receive buffer, bytes
  kStatusSource = 9,  ///< MPI_SOURCE of the returned status
  kStatusTag = 10,    ///< MPI_TAG of the returned status
  kStatusBytes = 11,  ///< bytes received per the returned status
  kNewComm = 12,      ///< ID of the communicator the call created
  kNewCommSize = 13,  ///< its size, ranks
  kCompleted = 14,    ///< completed requests (a list, see kMpiCall)
  kRequests = 15,     ///< requests handed to a Wait/Test call
};
/// Presence-mask bits a reader accepts; bits above kCompleted it does not
/// know are single zigzag varints (later fields keep that shape).
inline constexpr unsigned kMpiFieldBits = 32;

/// Largest payload of a data block a reader accepts (bytes). Keeps every
/// allocation in the reader bounded whatever a file claims.
inline constexpr std::uint32_t kMaxBlockPayload = 16u << 20;

/// Header of every block (16 bytes). Data blocks follow the file header back
/// to back; a complete file ends with one final data block and one trailer.
struct BlockHeader {
  std::uint32_t magic;          ///< kBlockMagic, kFinalBlockMagic or kTrailerMagic
  std::uint32_t payload_bytes;  ///< bytes of payload after this header
  std::uint64_t sequence;       ///< 0, 1, 2, ... in file order (trailer included)
};
static_assert(sizeof(BlockHeader) == 16);

/// Payload of the trailer block (80 bytes). Present only when the thread's
/// stream was finalised (thread exit or process exit).
struct TrailerPayload {
  std::uint64_t events;           ///< events in the stream (enters + exits)
  std::uint64_t raw_bytes;        ///< bytes of the uncompressed word stream
  std::uint64_t payload_bytes;    ///< bytes of all data-block payloads (final block included)
  std::uint64_t end_ns;           ///< CLOCK_REALTIME at finalisation, ns since the epoch
  std::uint64_t dropped_events;   ///< hook calls not recorded (re-entered hook, after finalisation)
  std::uint64_t corrected_exits;  ///< exits synthesised by stack-pointer correction (paper §3.4)
  std::uint64_t unmatched_exits;  ///< exit hooks with no matching open frame (ignored)
  std::uint64_t closed_at_end;    ///< frames still open at finalisation, closed with exits
  std::uint64_t max_depth;        ///< deepest shadow-stack depth reached (frames)
  std::uint64_t reserved;         ///< zero
};
static_assert(sizeof(TrailerPayload) == 80);

// ---- Function table: "functions" --------------------------------------------

/// First 8 bytes of the function table file.
inline constexpr char kFunctionsMagic[8] = {'P', 'A', 'R', 'L', 'O', 'T', 'F', 'N'};

/// Header of the function table (24 bytes). It is followed by `count`
/// little-endian u64 run-time addresses: entry i is the address of function
/// ID i+1 (ID 0 is the exit event and has no entry).
struct FunctionsHeader {
  char magic[8];            ///< kFunctionsMagic
  std::uint16_t version;    ///< kVersion
  std::uint16_t reserved0;  ///< zero
  std::uint32_t reserved1;  ///< zero
  std::uint64_t count;      ///< number of function IDs assigned (IDs 1..count)
};
static_assert(sizeof(FunctionsHeader) == 24);

/// Largest function ID the codec can carry (31 bits, see codec/FORMAT.md "Words").
inline constexpr std::uint32_t kMaxFunctionId = 0x7fffffffu;

// ---- Text files ---------------------------------------------------------------

/// First line of the process metadata file "process".
inline constexpr const char* kProcessMagicLine = "parlot-process 1";
/// First line of the crash record "crash" (written when a fatal signal
/// arrives).
inline constexpr const char* kCrashMagicLine = "parlot-crash 1";
/// First line of the load map file "loadmap".
inline constexpr const char* kLoadMapMagicLine = "parlot-loadmap 1";
/// First line of the library-call record "libcalls" (PARLOT_LIBCALLS: how
/// many relocations were patched or left, and the name of each entry stub's
/// function address).
inline constexpr const char* kLibcallsMagicLine = "parlot-libcalls 1";

}  // namespace parlot::format
