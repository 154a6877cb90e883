// otf2: an OTF2 archive (Score-P's format, read by Vampir, Scalasca,
// otf2-print) written through Debian's OTF2 library. One location (CPU
// thread) per thread, one location group per process named by rank and pid
// under a system-tree node per host, one region per function (by name,
// source file and line), Enter/Leave events. User marks go to the archive's
// marker file (OTF2's annotations for tools, shown by Vampir and
// `otf2-marker`): one marker definition (group "Parlot", category "mark"),
// and one marker per mark, of location scope (the thread), with the label as
// text. Clock properties: 10^9 ticks
// per second with time; on the logical clock 1 tick = 1 event, and the
// archive's description and its property PARLOT::TIME_AXIS say so.
//
// The archive is written into a temporary sibling directory and renamed to
// the output's name once it is complete: an export that fails (a write
// error, a full disk) leaves nothing behind, as the other formats do.
#include <otf2/otf2.h>
#include <unistd.h>

#include <filesystem>

#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters.h"

namespace parlot::exporter {
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

void check(OTF2_ErrorCode status, const char* what) {
  if (status != OTF2_SUCCESS) {
    throw std::runtime_error(std::string("otf2: ") + what + ": " +
                             OTF2_Error_GetDescription(status));
  }
}

namespace fs = std::filesystem;

/// The temporary sibling of `output` the archive is written into:
/// "<dir>/.<name>.parlot-tmp-<pid>".
fs::path temporary_sibling(const fs::path& output) {
  const fs::path parent = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  return parent / ("." + output.filename().string() + ".parlot-tmp-" + std::to_string(::getpid()));
}

class Otf2Exporter final : public Exporter {
 public:
  Otf2Exporter(const std::string& output, ExportOptions options)
      : options_(std::move(options)), output_(output), temporary_(temporary_sibling(output_)) {
    std::error_code ec;
    if (output_.filename().empty()) throw std::runtime_error("otf2: no archive name in " + output);
    if (fs::exists(fs::symlink_status(output_, ec))) {
      throw std::runtime_error("otf2: " + output + " already exists");
    }
    fs::remove_all(temporary_, ec);  // a leftover of an earlier run of this pid
    archive_ = OTF2_Archive_Open(temporary_.c_str(), "traces", OTF2_FILEMODE_WRITE, 1 << 20,
                                 4 << 20, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (archive_ == nullptr) throw std::runtime_error("otf2: cannot create archive in " + output);
    check(OTF2_Archive_SetFlushCallbacks(archive_, &flush_callbacks, nullptr), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(archive_), "collective callbacks");
    check(OTF2_Archive_SetCreator(archive_, "parlot-read"), "creator");
    check(OTF2_Archive_SetDescription(archive_, options_.time.description.c_str()), "description");
    check(OTF2_Archive_SetProperty(archive_, "PARLOT::TIME_AXIS", options_.time.description.c_str(),
                                   true),
          "property");
    check(OTF2_Archive_OpenEvtFiles(archive_), "open event files");
  }

  /// Without a successful end(): the partial archive is closed and
  /// removed.
  ~Otf2Exporter() override {
    if (archive_ != nullptr) OTF2_Archive_Close(archive_);
    if (!renamed_) {
      std::error_code ec;
      fs::remove_all(temporary_, ec);
    }
  }

  void begin_process(const ProcessInfo& p) override {
    functions_ = p.functions;
    regions_of_id_.clear();
    const std::string name =
        (p.rank.empty() ? "" : "rank " + p.rank + " ") + "pid " + std::to_string(p.pid);
    auto [host, added] = hosts_.try_emplace(p.host, hosts_.size() + 1);
    groups_.push_back({name, host->second});
  }

  void begin_thread(const ThreadInfo& t) override {
    const auto location = static_cast<OTF2_LocationRef>(locations_.size());
    locations_.push_back(
        {"thread #" + std::to_string(t.index) + " (tid " + std::to_string(t.tid) + ")",
         groups_.size() - 1, 0});
    writer_ = OTF2_Archive_GetEvtWriter(archive_, location);
    if (writer_ == nullptr) throw std::runtime_error("otf2: cannot open an event writer");
  }

  void event(const CallEvent& e, std::uint64_t time) override {
    const OTF2_RegionRef region = region_of(e.function_id);
    if (e.kind == CallEvent::Kind::kEnter) {
      check(OTF2_EvtWriter_Enter(writer_, nullptr, time, region), "enter");
    } else {
      check(OTF2_EvtWriter_Leave(writer_, nullptr, time, region), "leave");
    }
    ++locations_.back().events;
    if (time > last_time_) last_time_ = time;
  }

  void mark(std::string_view label, std::uint32_t, std::uint64_t time) override {
    std::string text;  // a C string: a NUL byte in a damaged label becomes "\x00"
    for (const char c : label) {
      if (c == '\0') {
        text += "\\x00";
      } else {
        text += c;
      }
    }
    marks_.push_back({locations_.size() - 1, time, std::move(text)});
    if (time > last_time_) last_time_ = time;
  }

  void end_thread(std::uint64_t end_time) override {
    check(OTF2_Archive_CloseEvtWriter(archive_, writer_), "close event writer");
    writer_ = nullptr;
    if (end_time > last_time_) last_time_ = end_time;
  }

  void end() override {
    check(OTF2_Archive_CloseEvtFiles(archive_), "close event files");
    check(OTF2_Archive_OpenDefFiles(archive_), "open definition files");
    for (std::size_t l = 0; l < locations_.size(); ++l) {
      OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(archive_, static_cast<OTF2_LocationRef>(l));
      check(OTF2_Archive_CloseDefWriter(archive_, d), "close definition writer");
    }
    check(OTF2_Archive_CloseDefFiles(archive_), "close definition files");
    write_global_definitions();
    write_marks();
    const OTF2_ErrorCode closed = OTF2_Archive_Close(archive_);
    archive_ = nullptr;
    check(closed, "close archive");
    std::error_code ec;
    fs::rename(temporary_, output_, ec);
    if (ec) {
      throw std::runtime_error("otf2: cannot move the archive to " + output_.string() + ": " +
                               ec.message());
    }
    renamed_ = true;
  }

 private:
  struct Group {
    std::string name;
    std::size_t host_node;
  };
  struct Location {
    std::string name;
    std::size_t group;
    std::uint64_t events;
  };
  struct Region {
    std::string name;
    std::string file;
    std::uint32_t line;
  };
  struct Mark {
    std::size_t location;
    std::uint64_t time;
    std::string text;
  };

  void write_marks() {
    if (marks_.empty()) return;
    OTF2_MarkerWriter* w = OTF2_Archive_GetMarkerWriter(archive_);
    if (w == nullptr) throw std::runtime_error("otf2: cannot open the marker writer");
    check(OTF2_MarkerWriter_WriteDefMarker(w, 0, "Parlot", "mark", OTF2_SEVERITY_NONE),
          "marker definition");
    for (const Mark& m : marks_) {
      check(OTF2_MarkerWriter_WriteMarker(w, m.time, 0, 0, OTF2_MARKER_SCOPE_LOCATION, m.location,
                                          m.text.c_str()),
            "marker");
    }
    check(OTF2_Archive_CloseMarkerWriter(archive_, w), "close marker writer");
  }

  OTF2_RegionRef region_of(std::uint32_t id) {
    auto [it, added] = regions_of_id_.try_emplace(id);
    if (!added) return it->second;
    const FunctionInfo& f = functions_->function(id);
    const std::string key = f.name + '\0' + f.file + '\0' + std::to_string(f.line);
    auto [r, new_region] = region_index_.try_emplace(key, regions_.size());
    if (new_region) regions_.push_back({f.name, f.file, f.line});
    it->second = static_cast<OTF2_RegionRef>(r->second);
    return it->second;
  }

  void write_global_definitions() {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive_);
    if (g == nullptr) throw std::runtime_error("otf2: cannot open the global definition writer");
    const bool logical = options_.time.logical();
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, logical ? 1 : 1'000'000'000, 0,
                                                    last_time_ + 1, OTF2_UNDEFINED_TIMESTAMP),
          "clock properties");
    std::unordered_map<std::string, OTF2_StringRef> strings;
    auto string = [&](const std::string& s) {
      auto [it, added] = strings.try_emplace(s, static_cast<OTF2_StringRef>(strings.size()));
      if (added) check(OTF2_GlobalDefWriter_WriteString(g, it->second, s.c_str()), "string");
      return it->second;
    };
    for (std::size_t r = 0; r < regions_.size(); ++r) {
      const Region& region = regions_[r];
      const OTF2_StringRef name = string(region.name);
      check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(r), name, name,
                                             string(""), OTF2_REGION_ROLE_FUNCTION,
                                             OTF2_PARADIGM_COMPILER, OTF2_REGION_FLAG_NONE,
                                             string(region.file), region.line, region.line),
            "region");
    }
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, string("parlot run"), string("machine"),
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    for (const auto& [host, node] : hosts_) {
      check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, static_cast<OTF2_SystemTreeNodeRef>(node),
                                                     string(host), string("node"), 0),
            "system tree node");
    }
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      check(OTF2_GlobalDefWriter_WriteLocationGroup(
                g, static_cast<OTF2_LocationGroupRef>(i), string(groups_[i].name),
                OTF2_LOCATION_GROUP_TYPE_PROCESS,
                static_cast<OTF2_SystemTreeNodeRef>(groups_[i].host_node),
                OTF2_UNDEFINED_LOCATION_GROUP),
            "location group");
    }
    for (std::size_t l = 0; l < locations_.size(); ++l) {
      check(OTF2_GlobalDefWriter_WriteLocation(
                g, static_cast<OTF2_LocationRef>(l), string(locations_[l].name),
                OTF2_LOCATION_TYPE_CPU_THREAD, locations_[l].events,
                static_cast<OTF2_LocationGroupRef>(locations_[l].group)),
            "location");
    }
    check(OTF2_Archive_CloseGlobalDefWriter(archive_, g), "close global definitions");
  }

  ExportOptions options_;
  fs::path output_;     // the archive directory the user named
  fs::path temporary_;  // where it is written until end() renames it
  bool renamed_ = false;
  OTF2_Archive* archive_ = nullptr;
  OTF2_EvtWriter* writer_ = nullptr;
  FunctionSource* functions_ = nullptr;
  std::unordered_map<std::uint32_t, OTF2_RegionRef> regions_of_id_;  // this process's IDs
  std::unordered_map<std::string, std::size_t> region_index_;
  std::vector<Region> regions_;
  std::map<std::string, std::size_t> hosts_;  // host -> system tree node
  std::vector<Group> groups_;
  std::vector<Location> locations_;
  std::vector<Mark> marks_;  // every thread's, written at the end
  std::uint64_t last_time_ = 0;
};

}  // namespace

std::unique_ptr<Exporter> make_otf2_exporter(const std::string& output,
                                             const ExportOptions& options) {
  return std::make_unique<Otf2Exporter>(output, options);
}

}  // namespace parlot::exporter
