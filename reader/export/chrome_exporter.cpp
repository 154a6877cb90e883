// chrome: the JSON trace_event format (Chrome's about:tracing, Perfetto UI,
// catapult's trace viewer): "B"/"E" duration events per thread, "M"
// metadata naming processes (rank, pid, executable) and threads, and an
// "i" instant event of thread scope per user mark (cat "mark"). "ts" is in
// microseconds by the format's definition: with time it is real time since
// the process's start; on the logical clock it is the event index, and
// "otherData" says so. Browsers cannot open much more than 10^7 events:
// `parlot-read export` refuses larger exports unless --window/--tid narrow
// them (kChromeMaxEvents).
#include <string>
#include <unordered_map>

#include "exporters.h"
#include "output_file.h"

namespace parlot::exporter {
namespace {

class ChromeExporter final : public Exporter {
 public:
  ChromeExporter(const std::string& output, ExportOptions options)
      : out_(output), options_(std::move(options)) {
    out_.print(
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"exporter\":\"parlot-read\",\"clock\":{},"
        "\"ts_unit\":\"{}\"}},\n\"traceEvents\":[",
        json_string(options_.time.description),
        options_.time.logical() ? "event index (logical clock, not microseconds)" : "microseconds");
  }

  void begin_process(const ProcessInfo& p) override {
    functions_ = p.functions;
    names_.clear();
    pid_ = p.pid;
    const std::string name = (p.rank.empty() ? "" : "rank " + p.rank + " ") + "pid " +
                             std::to_string(p.pid) + " " + p.executable;
    separator();
    out_.print(
        "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}",
        pid_, json_string(name));
    if (!p.rank.empty()) {
      separator();
      out_.print(
          "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"tid\":0,\"args\":{{"
          "\"sort_index\":{}}}}}",
          pid_, json_string(p.rank));
    }
  }

  void begin_thread(const ThreadInfo& t) override {
    tid_ = t.tid;
    separator();
    out_.print(
        "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":"
        "\"thread #{} (tid {})\"}}}}",
        pid_, tid_, t.index, t.tid);
  }

  void event(const CallEvent& e, std::uint64_t time) override {
    separator();
    if (e.kind == CallEvent::Kind::kEnter) {
      out_.print("{{\"ph\":\"B\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":", name(e.function_id),
                 pid_, tid_);
    } else {
      out_.print("{{\"ph\":\"E\",\"pid\":{},\"tid\":{},\"ts\":", pid_, tid_);
    }
    write_ts(time);
    out_.write("}");
  }

  void mark(std::string_view label, std::uint32_t, std::uint64_t time) override {
    separator();
    out_.print(
        "{{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mark\",\"name\":{},\"pid\":{},\"tid\":{},\"ts\":",
        json_string(label), pid_, tid_);
    write_ts(time);
    out_.write("}");
  }

  void end_thread(std::uint64_t) override {}

  void end() override {
    out_.write("\n]}\n");
    out_.close();
  }

 private:
  void separator() {
    out_.write(first_ ? "\n" : ",\n");
    first_ = false;
  }
  void write_ts(std::uint64_t time) {
    if (options_.time.logical()) {
      out_.print("{}", time);
    } else {  // ns -> µs with the ns kept as decimals
      out_.print("{}.{:03}", time / 1000, time % 1000);
    }
  }
  const std::string& name(std::uint32_t id) {
    auto [it, added] = names_.try_emplace(id);
    if (added) it->second = json_string(functions_->function(id).name);
    return it->second;
  }

  OutputFile out_;
  ExportOptions options_;
  FunctionSource* functions_ = nullptr;
  std::unordered_map<std::uint32_t, std::string> names_;  // JSON string per function ID
  std::uint64_t pid_ = 0;
  std::uint64_t tid_ = 0;
  bool first_ = true;
};

}  // namespace

std::unique_ptr<Exporter> make_chrome_exporter(const std::string& output,
                                               const ExportOptions& options) {
  return std::make_unique<ChromeExporter>(output, options);
}

}  // namespace parlot::exporter
