// Reading Parlot trace directories (docs/FORMAT.md): process metadata, load
// maps, function tables and per-thread event streams. Every parser treats
// its input as untrusted: malformed input raises parlot::FormatError naming
// the file and the byte offset; nothing is allocated from an unchecked size.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "parlot/codec.h"
#include "parlot/format.h"
#include "parlot/load_map.h"

namespace parlot {

namespace codec {
class Decoder;  // codec/decoder.h
}

/// Malformed, truncated or unreadable trace input.
class FormatError : public std::runtime_error {
 public:
  /// `offset`: byte offset in `file` where the problem was found.
  FormatError(std::filesystem::path file, std::uint64_t offset, const std::string& what);
  const std::filesystem::path& file() const { return file_; }
  std::uint64_t offset() const { return offset_; }

 private:
  std::filesystem::path file_;
  std::uint64_t offset_;
};

/// Contents of a process directory's "crash" file: the fatal signal that
/// ended the process and the faulting thread's stack.
struct CrashRecord {
  int signal = 0;
  std::string name;                   ///< e.g. "SIGSEGV"
  int code = 0;                       ///< si_code
  std::uint64_t address = 0;          ///< si_addr: the faulting address, if any
  std::uint64_t tid = 0;              ///< the thread that received the signal
  bool in_tracer = false;             ///< the signal arrived inside a Parlot hook
  std::vector<std::uint64_t> frames;  ///< instruction addresses, innermost first
};

/// Parses a "crash" file. Throws FormatError.
CrashRecord read_crash_record(const std::filesystem::path& file);

/// Contents of a process directory's "process" file.
struct ProcessMetadata {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::string rank;  ///< MPI rank as the launcher gave it; empty if none
  std::string host;
  std::string executable;
  std::vector<std::string> arguments;  ///< argv[0], argv[1], ...
  std::uint64_t start_ns = 0;          ///< CLOCK_REALTIME, ns since the epoch
  std::uint64_t end_ns = 0;            ///< 0 if the process did not finish its trace
  bool compress = true;
  /// Recorded with PARLOT_DISCARD=1: counts only, no event data.
  bool discard = false;
  std::uint64_t threads = 0;    ///< thread traces started
  std::uint64_t functions = 0;  ///< function IDs assigned (0 while running)
  /// The errno of the write failure that stopped the process's trace (a
  /// full disk: ENOSPC), or 0: its thread files end at their last complete
  /// block.
  int write_error = 0;
  /// The runtime's clock settings (docs/DESIGN.md, "Time as side records"),
  /// absent in traces of runtimes that did not record them: a clock read
  /// every `clock_events` events (0: no clock samples; 1: every event timed),
  /// the swing-door tolerance `clock_tolerance_ns` (ns) and the clock tick's
  /// period `clock_tick_ns` (ns; 0: no tick ran) and the most any tick came
  /// late, `clock_tick_late_ns` (ns: the ticking thread descheduled). An
  /// event's time is then right to within clock_tick_ns + clock_tick_late_ns
  /// + clock_tolerance_ns (tick > 0), both ends of an MPI or library call to
  /// within clock_tolerance_ns.
  std::optional<std::uint64_t> clock_events;
  std::optional<std::uint64_t> clock_tolerance_ns;
  std::optional<std::uint64_t> clock_tick_ns;
  std::optional<std::uint64_t> clock_tick_late_ns;
};

/// Parses a "process" file. Throws FormatError.
ProcessMetadata read_process_metadata(const std::filesystem::path& file);

/// Parses a "loadmap" file; duplicate lines (the runtime writes the map at
/// start and at end) are kept once. Throws FormatError.
LoadMap read_load_map(const std::filesystem::path& file);

/// Parses a "functions" file: element i is the run-time address of
/// function ID i+1. A table whose header count is still 0 (the process did
/// not finish) holds the entries up to the end of the file. At most
/// `max_count` entries are accepted.
/// Throws FormatError.
std::vector<std::uint64_t> read_function_table(const std::filesystem::path& file,
                                               std::uint64_t max_count = 1ull << 30);

/// A clock sample of a thread (format version 2): the event with index
/// `event_index` happened at or just after CLOCK_MONOTONIC time `ns`.
struct ClockSample {
  std::uint64_t event_index = 0;
  std::uint64_t ns = 0;
};

/// A user mark of a thread (parlot_mark, side record kind 2, format version
/// 2): `label` sits just before the event with index `event_index` of the
/// thread's stream; an index at or beyond the stream's end places it after
/// the last event.
struct Mark {
  std::uint64_t event_index = 0;
  /// The label's bytes as the program gave them (at most 65535): untrusted
  /// text, escape it before printing (any byte may occur).
  std::string label;
};

/// The call site of an entry event (side record kind 6, PARLOT_CALL_SITES):
/// the entry event `event_index` was called from return address `address`
/// (run-time, in the caller's object; the call instruction ends at
/// `address`, so `address - 1` lies in it). Holds for later entries of the
/// same (caller, callee) pair too (CallSites, parlot/call_sites.h).
struct CallSite {
  std::uint64_t event_index = 0;
  std::uint64_t address = 0;
};

/// Arguments of one MPI call (side record kind 3, PARLOT_MPI_ARGS=1).
struct MpiCallArguments {
  /// A completed request of a Wait/Test call.
  struct Completion {
    std::int64_t index = 0;   ///< position in the call's request array
    std::int64_t source = 0;  ///< MPI_SOURCE of its status
    std::int64_t tag = 0;     ///< MPI_TAG of its status
    std::int64_t bytes = 0;   ///< bytes per its status (MPI_Get_count, MPI_BYTE)
  };
  std::uint64_t event_index = 0;                   ///< the call's entry event
  std::uint32_t mask = 0;                          ///< fields present: bit i = format::MpiField i
  std::int64_t value[format::kMpiFieldBits] = {};  ///< by field; kCompleted's unused
  std::vector<Completion> completed;

  bool has(format::MpiField f) const { return (mask >> static_cast<unsigned>(f)) & 1u; }
  std::int64_t get(format::MpiField f) const { return value[static_cast<unsigned>(f)]; }
};

/// Name of presence-mask bit `bit` as `trace` shows it ("dest", "tag",
/// "bytes", "comm", ...; "field<bit>" for a bit this reader does not know).
std::string mpi_field_name(unsigned bit);

/// Decodes the data of one kind-3 record about event `event_index`, found
/// at byte `offset` of `file` (for errors). Throws FormatError when the data
/// is cut short, a varint is longer than 10 bytes, the mask needs more than
/// 32 bits, the completion list is longer than its bytes allow, or bytes
/// are left over.
MpiCallArguments decode_mpi_call(const std::filesystem::path& file, std::uint64_t offset,
                                 std::uint64_t event_index, std::span<const std::uint8_t> data);

/// Structure of one thread trace file, from its header and block headers.
struct ThreadTraceSummary {
  std::filesystem::path path;
  std::uint16_t version = 0;  ///< format version of the file (1 .. format::kVersion)
  std::uint64_t tid = 0;
  std::uint64_t pid = 0;
  std::uint64_t thread_index = 0;
  format::Codec codec = format::Codec::kLzZe;
  std::uint64_t start_ns = 0;
  std::uint64_t file_bytes = 0;
  std::uint64_t blocks = 0;       ///< data blocks (final block included)
  std::uint64_t side_blocks = 0;  ///< side-record (PAUX) blocks
  /// Clock samples from the side records, by event index (empty for
  /// version-1 files and PARLOT_CLOCK_EVENTS=0).
  std::vector<ClockSample> clock_samples;
  /// User marks from the side records, sorted by event index (stable: marks
  /// at the same index keep their order in the file). Empty for version-1
  /// files and threads that made none.
  std::vector<Mark> marks;
  /// MPI call arguments from the side records, sorted by event index (empty
  /// unless recorded with PARLOT_MPI_ARGS=1).
  std::vector<MpiCallArguments> mpi_calls;
  /// Call-site records (kind 6) in stream order: the entry events whose
  /// site a reader could not infer from an earlier entry of the same
  /// (caller, callee) pair. Empty for traces recorded without call sites
  /// (PARLOT_CALL_SITES=0, earlier runtimes).
  std::vector<CallSite> call_sites;
  /// The arguments recorded for the entry event `event_index`, or null.
  const MpiCallArguments* mpi_call_at(std::uint64_t event_index) const;
  /// The arguments MPI calls with results (receives, waits) recorded before
  /// they were made (side record kind 8), sorted by event index: those
  /// without an entry in mpi_calls never returned (a hung receive).
  std::vector<MpiCallArguments> mpi_calls_begun;
  /// The arguments recorded for the entry event `event_index`: its whole
  /// record (mpi_call_at), else those recorded before the call (kind 8:
  /// a call that never returned), or null.
  const MpiCallArguments* mpi_call_or_begun_at(std::uint64_t event_index) const;
  std::uint64_t payload_bytes = 0;  ///< bytes of all data-block payloads
  /// Event count from the final data block, when the file has one (the
  /// stream was finalised; the trailer may still be missing).
  std::optional<std::uint64_t> final_events;
  /// The trailer, when the file has one (the thread's trace was finalised).
  std::optional<format::TrailerPayload> trailer;
  /// When there is no trailer: why the file ends early, and where.
  std::string damage;
  std::uint64_t damage_offset = 0;
  /// Without a trailer: the file ends exactly at a block boundary (after the
  /// header or a whole block), as a stream cut short by a killed process or
  /// still being written does; false when it ends inside a block.
  bool ends_at_block_boundary = false;
  /// A flight-recorder window (docs/FORMAT.md "Flight windows"): the
  /// thread's history before the window was dropped.
  struct FlightWindow {
    /// Events the thread recorded before the window (not in the file).
    std::uint64_t dropped_events = 0;
    /// Function IDs of the frames open when the window starts, outermost
    /// first: the stream's first events are their entries (synthesized by
    /// the reader, counted in the event count and the trailer).
    std::vector<std::uint32_t> open_frames;
  };
  /// Set for a flight-window file (header flag kTraceFlagFlightWindow).
  std::optional<FlightWindow> flight_window;
  /// Data blocks (0-based, in file order) that follow a restart point and
  /// so start a fresh decoder (flight windows only).
  std::vector<std::uint64_t> restart_blocks;
};

/// Streams the events of one thread trace file, a batch at a time, in
/// constant memory (one block plus the codec model).
class ThreadEventReader {
 public:
  /// Opens `path` and checks its header and block structure (reads block
  /// headers only). Throws FormatError on a bad header; a file cut short
  /// (no trailer) opens, with `summary().damage` saying where it ends.
  explicit ThreadEventReader(const std::filesystem::path& path);
  ~ThreadEventReader();
  ThreadEventReader(const ThreadEventReader&) = delete;
  ThreadEventReader& operator=(const ThreadEventReader&) = delete;

  const ThreadTraceSummary& summary() const { return summary_; }

  /// Next batch of events (function IDs, 0 = exit), empty at the end.
  /// A complete file yields exactly trailer->events events. Throws
  /// FormatError on corrupt data (offset of the block at fault).
  std::span<const std::uint32_t> next_batch();

  /// Events returned so far.
  std::uint64_t events_read() const { return events_read_; }

  /// For a file still being written (a live process): reads the block
  /// headers (and side records) the file gained since it was opened or last
  /// refreshed, from where the last scan stopped, updating summary(); after
  /// it, next_batch() goes on with the events of the new blocks, the
  /// decoder's state kept (no event is decoded twice). Returns true when
  /// blocks (or the trailer) were added. Does nothing once the file has
  /// its trailer.
  /// Throws FormatError as the constructor does.
  bool refresh();

 private:
  bool load_next_block();
  /// Walks block headers from scan_offset_ up to the file's end (size
  /// `size`), filling summary_; stops at a trailer, the end, or a block cut
  /// short (summary_.damage). Throws FormatError on a malformed block.
  void scan_blocks(std::uint64_t size);

  ThreadTraceSummary summary_;
  std::ifstream in_;
  std::uint64_t next_block_offset_ = 0;
  std::uint64_t block_payload_offset_ = 0;
  std::uint64_t blocks_read_ = 0;
  std::uint64_t events_read_ = 0;
  std::vector<std::uint8_t> payload_;
  std::vector<std::uint32_t> batch_;
  std::unique_ptr<codec::Decoder> decoder_;
  bool done_ = false;
  std::uint64_t scan_offset_ = 0;             ///< file offset of the next block header to scan
  std::uint64_t scan_sequence_ = 0;           ///< its expected sequence number
  std::uint64_t header_flags_ = 0;            ///< the file header's flags
  std::uint64_t restarts_seen_ = 0;           ///< restart records scanned (flight windows)
  std::size_t next_restart_ = 0;              ///< next entry of summary_.restart_blocks to reach
  bool window_emitted_ = false;               ///< the window's open frames were returned
  std::vector<std::uint32_t> window_frames_;  ///< their batch
};

/// One process directory: its metadata, load map, function table and thread
/// trace files (sorted by thread index).
/// Contents of a process directory's "libcalls" file (PARLOT_LIBCALLS):
/// what the runtime patched and left, and the name of each library call's
/// function address (an entry stub's).
struct LibraryCalls {
  /// One function as the program called it: its relocation's symbol.
  struct Function {
    std::string name;     ///< the symbol as written (mangled for C++), e.g. "memcpy"
    std::string version;  ///< the version the reference asked for, or empty
    std::string library;  ///< path of the object defining it
    /// As shown: `name`, or `name@version` when another function of the
    /// process has the same name with another version.
    std::string display;
  };
  std::uint64_t patched = 0;  ///< relocations patched (GOT entries)
  std::uint64_t objects = 0;  ///< objects with a relocation patched
  /// Relocations left unpatched, by reason key ("glob_dat", "audit", ...),
  /// in file order.
  std::vector<std::pair<std::string, std::uint64_t>> left;
  /// Function address (an entry stub's) -> function, by address.
  std::vector<std::pair<std::uint64_t, Function>> functions;

  /// The function at `address`, or nullptr.
  const Function* find(std::uint64_t address) const;
};

/// Parses a "libcalls" file. Throws FormatError (file and offset) on a
/// malformed line; ignores lines of unknown kinds.
LibraryCalls read_library_calls(const std::filesystem::path& file);

struct ProcessTrace {
  std::filesystem::path directory;
  ProcessMetadata metadata;
  LoadMap load_map;
  std::vector<std::uint64_t> function_addresses;  ///< [id-1] -> run-time address
  std::vector<std::filesystem::path> thread_files;
  /// Present when the process died of a fatal signal.
  std::optional<CrashRecord> crash;
  /// Present when library calls were recorded (PARLOT_LIBCALLS); absent
  /// in traces of runtimes that did not write the file.
  std::optional<LibraryCalls> library_calls;
  /// Problems found while opening (missing function table, ...).
  std::vector<std::string> warnings;
  /// Damage found while opening, each message naming the file: a thread
  /// file that is not a regular file, or missing although the process file
  /// counts it (`threads`). The events of those threads are lost; a tool
  /// reports each and exits with the damage status.
  std::vector<std::string> errors;
};

/// One process directory as list_trace_directory() finds it: where it is and
/// its "process" file, nothing else read yet.
struct ProcessListing {
  std::filesystem::path directory;
  ProcessMetadata metadata;
};

/// A process directory of a run whose "process" file could not be read
/// (list_trace_directory with `unreadable`).
struct UnreadableProcess {
  std::filesystem::path directory;
  /// "<file>: offset N: what" (FormatError::what() of the process file).
  std::string message;
};

/// Lists a trace directory (either one process directory, it holds a
/// "process" file, or a run directory holding process directories) reading
/// only each process's "process" file, so that a reader can then open just
/// the processes it needs (a member of an mpirun'd parlot-read opens its
/// share). Sorted by rank (none first), then start time (ns), then pid: the
/// order of open_trace_directory(). Throws FormatError when `dir` is not a
/// directory or cannot be listed. Without `unreadable` it also throws when
/// `dir` holds no process directory or a process file is malformed. With
/// `unreadable`, a process directory whose "process" file is malformed,
/// empty or not a regular file (or, in a run directory, a `pid-*` /
/// `rank-*` directory without one) is appended there and left out of the
/// listing, the others are listed; the result may then be empty (nothing
/// readable) without an exception when `unreadable` is not.
std::vector<ProcessListing> list_trace_directory(
    const std::filesystem::path& dir, std::vector<UnreadableProcess>* unreadable = nullptr);

/// Opens one listed process: its load map, function table, crash record
/// and thread file listing (sorted by thread index). A missing load map or
/// function table is a warning, a missing or irregular thread file an error
/// (ProcessTrace::warnings, ::errors). When the load map, function table or
/// crash record is malformed it throws FormatError (file and offset), or,
/// with `keep_going`, adds the error to ProcessTrace::errors and goes on
/// without that file (as if it were missing).
ProcessTrace open_process_directory(ProcessListing listed, bool keep_going = false);

/// Opens a trace directory: list_trace_directory(), then
/// open_process_directory() of every process, in that order. Throws
/// FormatError as those do.
std::vector<ProcessTrace> open_trace_directory(const std::filesystem::path& dir);

}  // namespace parlot
