// speedscope: speedscope's file format
// (https://www.speedscope.app/file-format-schema.json), one "evented"
// profile per thread ("O" open / "C" close frame events), frames shared by
// all profiles and identified by name, file and line. Unit "none" on the
// logical clock (the values are event indices), "nanoseconds" with time.
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters.h"
#include "output_file.h"

namespace parlot::exporter {
namespace {

class SpeedscopeExporter final : public Exporter {
 public:
  SpeedscopeExporter(const std::string& output, ExportOptions options)
      : out_(output), options_(std::move(options)) {
    out_.print(
        "{{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
        "\"exporter\":{},\"activeProfileIndex\":0,\n\"profiles\":[",
        json_string("parlot-read; " + options_.time.description));
  }

  void begin_process(const ProcessInfo& p) override {
    functions_ = p.functions;
    frame_of_id_.clear();
    process_label_ =
        (p.rank.empty() ? "" : "rank " + p.rank + " ") + "pid " + std::to_string(p.pid);
  }

  void begin_thread(const ThreadInfo& t) override {
    out_.write(profiles_ == 0 ? "\n" : ",\n");
    ++profiles_;
    out_.print("{{\"type\":\"evented\",\"name\":{},\"unit\":\"{}\",\"events\":[",
               json_string(process_label_ + " thread #" + std::to_string(t.index) + " (tid " +
                           std::to_string(t.tid) + ")"),
               options_.time.logical() ? "none" : "nanoseconds");
    first_event_ = true;
    start_ = 0;
    have_start_ = false;
  }

  void event(const CallEvent& e, std::uint64_t time) override {
    if (!have_start_) {
      start_ = time;
      have_start_ = true;
    }
    out_.print("{}{{\"type\":\"{}\",\"frame\":{},\"at\":{}}}", first_event_ ? "" : ",",
               e.kind == CallEvent::Kind::kEnter ? 'O' : 'C', frame(e.function_id), time);
    first_event_ = false;
  }

  void end_thread(std::uint64_t end_time) override {
    out_.print("],\"startValue\":{},\"endValue\":{}}}", start_, end_time);
  }

  void end() override {
    out_.write("\n],\n\"shared\":{\"frames\":[");
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      out_.print("{}\n{}", i == 0 ? "" : ",", frames_[i]);
    }
    out_.write("\n]}}\n");
    out_.close();
  }

 private:
  std::size_t frame(std::uint32_t id) {
    auto [it, added] = frame_of_id_.try_emplace(id);
    if (!added) return it->second;
    const FunctionInfo& f = functions_->function(id);
    std::string json = "{\"name\":" + json_string(f.name);
    if (!f.file.empty()) {
      json += ",\"file\":" + json_string(f.file) + ",\"line\":" + std::to_string(f.line);
    }
    json += "}";
    auto [shared, new_frame] = frame_index_.try_emplace(json, frames_.size());
    if (new_frame) frames_.push_back(json);
    it->second = shared->second;
    return it->second;
  }

  OutputFile out_;
  ExportOptions options_;
  FunctionSource* functions_ = nullptr;
  std::string process_label_;
  std::unordered_map<std::uint32_t, std::size_t> frame_of_id_;  // this process's IDs
  std::unordered_map<std::string, std::size_t> frame_index_;    // frame JSON -> index
  std::vector<std::string> frames_;
  std::size_t profiles_ = 0;
  bool first_event_ = true;
  bool have_start_ = false;
  std::uint64_t start_ = 0;
};

}  // namespace

std::unique_ptr<Exporter> make_speedscope_exporter(const std::string& output,
                                                   const ExportOptions& options) {
  return std::make_unique<SpeedscopeExporter>(output, options);
}

}  // namespace parlot::exporter
