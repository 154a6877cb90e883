// perfetto: Perfetto's protobuf trace (perfetto.dev/docs/reference/trace-packet-proto),
// encoded with protozero's pbf_writer (Debian's libprotozero-dev). One
// process track per process (named by rank, pid and executable), one thread
// track per thread, TrackEvent slice begin/end events with interned
// function names, and a TYPE_INSTANT event on the thread's track per user
// mark (its label as the event's inline name). Each thread is its own packet sequence (its own
// trusted_packet_sequence_id and interning state), as a Perfetto writer
// per thread would be. Timestamps are ns with time; on the logical clock
// they are event indices (1 ns = 1 event) and the track names say so.
//
// Field numbers, from Perfetto's published protos:
//   Trace.packet = 1
//   TracePacket: timestamp = 8, trusted_packet_sequence_id = 10,
//     track_event = 11, interned_data = 12, sequence_flags = 13,
//     track_descriptor = 60
//   TrackDescriptor: uuid = 1, name = 2, process = 3, thread = 4, parent_uuid = 5
//   ProcessDescriptor: pid = 1, process_name = 6
//   ThreadDescriptor: pid = 1, tid = 2, thread_name = 5
//   TrackEvent: type = 9 (SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3), name_iid = 10,
//     track_uuid = 11, name = 23
//   InternedData.event_names = 2; EventName: iid = 1, name = 2
#include <protozero/pbf_writer.hpp>

#include <string>
#include <unordered_map>

#include "exporters.h"
#include "output_file.h"

namespace parlot::exporter {
namespace {

namespace field {
constexpr protozero::pbf_tag_type kTracePacket = 1;
constexpr protozero::pbf_tag_type kTimestamp = 8;
constexpr protozero::pbf_tag_type kSequenceId = 10;
constexpr protozero::pbf_tag_type kTrackEvent = 11;
constexpr protozero::pbf_tag_type kInternedData = 12;
constexpr protozero::pbf_tag_type kSequenceFlags = 13;
constexpr protozero::pbf_tag_type kTrackDescriptor = 60;
constexpr protozero::pbf_tag_type kUuid = 1;
constexpr protozero::pbf_tag_type kTrackName = 2;
constexpr protozero::pbf_tag_type kProcess = 3;
constexpr protozero::pbf_tag_type kThread = 4;
constexpr protozero::pbf_tag_type kParentUuid = 5;
constexpr protozero::pbf_tag_type kPid = 1;
constexpr protozero::pbf_tag_type kProcessName = 6;
constexpr protozero::pbf_tag_type kTid = 2;
constexpr protozero::pbf_tag_type kThreadName = 5;
constexpr protozero::pbf_tag_type kEventType = 9;
constexpr protozero::pbf_tag_type kNameIid = 10;
constexpr protozero::pbf_tag_type kTrackUuid = 11;
constexpr protozero::pbf_tag_type kEventName = 23;
constexpr protozero::pbf_tag_type kEventNames = 2;
constexpr protozero::pbf_tag_type kIid = 1;
constexpr protozero::pbf_tag_type kName = 2;
}  // namespace field

constexpr std::int32_t kSliceBegin = 1;
constexpr std::int32_t kSliceEnd = 2;
constexpr std::int32_t kInstant = 3;
constexpr std::uint32_t kIncrementalStateCleared = 1;
constexpr std::uint32_t kNeedsIncrementalState = 2;

class PerfettoExporter final : public Exporter {
 public:
  PerfettoExporter(const std::string& output, ExportOptions options)
      : out_(output), options_(std::move(options)) {}

  void begin_process(const ProcessInfo& p) override {
    functions_ = p.functions;
    pid_ = p.pid;
    process_uuid_ = next_uuid_++;
    std::string name =
        (p.rank.empty() ? "" : "rank " + p.rank + " ") + "pid " + std::to_string(p.pid);
    if (!p.executable.empty()) name += " " + p.executable;
    if (options_.time.logical()) name += " (logical clock: 1 ns = 1 event)";
    const std::uint32_t sequence = ++sequence_;  // a sequence of its own
    packet([&](protozero::pbf_writer& packet) {
      packet.add_uint32(field::kSequenceId, sequence);
      protozero::pbf_writer track(packet, field::kTrackDescriptor);
      track.add_uint64(field::kUuid, process_uuid_);
      protozero::pbf_writer process(track, field::kProcess);
      process.add_int32(field::kPid, static_cast<std::int32_t>(p.pid));
      process.add_string(field::kProcessName, name);
    });
  }

  void begin_thread(const ThreadInfo& t) override {
    thread_uuid_ = next_uuid_++;
    ++sequence_;
    names_.clear();
    first_packet_ = true;
    packet([&](protozero::pbf_writer& packet) {
      packet.add_uint32(field::kSequenceId, sequence_);
      protozero::pbf_writer track(packet, field::kTrackDescriptor);
      track.add_uint64(field::kUuid, thread_uuid_);
      track.add_uint64(field::kParentUuid, process_uuid_);
      protozero::pbf_writer thread(track, field::kThread);
      thread.add_int32(field::kPid, static_cast<std::int32_t>(pid_));
      thread.add_int32(field::kTid, static_cast<std::int32_t>(t.tid));
      thread.add_string(field::kThreadName, "thread #" + std::to_string(t.index));
    });
  }

  void event(const CallEvent& e, std::uint64_t time) override {
    const bool enter = e.kind == CallEvent::Kind::kEnter;
    std::uint64_t iid = 0;
    bool new_name = false;
    if (enter) {
      auto [it, added] = names_.try_emplace(e.function_id, names_.size() + 1);
      iid = it->second;
      new_name = added;
    }
    packet([&](protozero::pbf_writer& packet) {
      sequence_header(packet, time);
      {
        protozero::pbf_writer event(packet, field::kTrackEvent);
        event.add_enum(field::kEventType, enter ? kSliceBegin : kSliceEnd);
        if (enter) event.add_uint64(field::kNameIid, iid);
        event.add_uint64(field::kTrackUuid, thread_uuid_);
      }
      if (new_name) {
        protozero::pbf_writer interned(packet, field::kInternedData);
        protozero::pbf_writer name(interned, field::kEventNames);
        name.add_uint64(field::kIid, iid);
        name.add_string(field::kName, functions_->function(e.function_id).name);
      }
    });
  }

  // A TracePacket's time and sequence fields; the first packet of the
  // sequence also clears the interned names.
  void sequence_header(protozero::pbf_writer& packet, std::uint64_t time) {
    packet.add_uint64(field::kTimestamp, time);
    packet.add_uint32(field::kSequenceId, sequence_);
    packet.add_uint32(field::kSequenceFlags, first_packet_
                                                 ? kIncrementalStateCleared | kNeedsIncrementalState
                                                 : kNeedsIncrementalState);
    first_packet_ = false;
  }

  void mark(std::string_view label, std::uint32_t, std::uint64_t time) override {
    packet([&](protozero::pbf_writer& packet) {
      sequence_header(packet, time);
      protozero::pbf_writer event(packet, field::kTrackEvent);
      event.add_enum(field::kEventType, kInstant);
      event.add_uint64(field::kTrackUuid, thread_uuid_);
      event.add_string(field::kEventName, label.data(), label.size());
    });
  }

  void end_thread(std::uint64_t) override {}

  void end() override { out_.close(); }

 private:
  /// Writes one Trace.packet, filled in by `fill`.
  template <class Fill>
  void packet(Fill&& fill) {
    buffer_.clear();
    {
      protozero::pbf_writer trace(buffer_);
      protozero::pbf_writer packet(trace, field::kTracePacket);
      fill(packet);
    }
    out_.write(buffer_);
  }

  OutputFile out_;
  ExportOptions options_;
  FunctionSource* functions_ = nullptr;
  std::string buffer_;
  std::unordered_map<std::uint32_t, std::uint64_t> names_;  // function ID -> iid, per sequence
  std::uint64_t pid_ = 0;
  std::uint64_t next_uuid_ = 1;
  std::uint64_t process_uuid_ = 0;
  std::uint64_t thread_uuid_ = 0;
  std::uint32_t sequence_ = 0;
  bool first_packet_ = true;
};

}  // namespace

std::unique_ptr<Exporter> make_perfetto_exporter(const std::string& output,
                                                 const ExportOptions& options) {
  return std::make_unique<PerfettoExporter>(output, options);
}

}  // namespace parlot::exporter
