// callgrind: Callgrind's profile format (valgrind.org/docs/manual/cl-format.html)
// for KCachegrind and callgrind_annotate. One event type: "Events" on the
// logical clock (cost of a call = exit index - entry index), "ns" with time.
// Per function its exclusive cost at its first line; per caller -> callee arc
// the calls and the inclusive cost of the callee along that arc. Functions
// are merged by name, file and line over every exported thread and process.
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "exporters.h"
#include "tree_exporter.h"

namespace parlot::exporter {
namespace {

/// Name compression (cl-format "Name compression"): "(id) name" the first
/// time, "(id)" after.
class CompressedNames {
 public:
  std::string operator()(const std::string& name) {
    auto [it, added] = ids_.try_emplace(name, ids_.size() + 1);
    // fmt rather than "(" + std::to_string(...): GCC 12 at -O3 warns falsely
    // (-Wrestrict) inside std::string's operator+, which breaks Release builds.
    return added ? fmt::format("({}) {}", it->second, name) : fmt::format("({})", it->second);
  }

 private:
  std::map<std::string, std::size_t> ids_;
};

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

class CallgrindExporter final : public TreeExporter {
 public:
  using TreeExporter::TreeExporter;

  void begin_process(const ProcessInfo& process) override {
    TreeExporter::begin_process(process);
    if (command_.empty()) command_ = process.executable;
  }

 protected:
  void write(const CallTree& tree) override {
    const auto totals = tree.function_totals();
    const auto arcs = tree.arcs();
    const auto& functions = tree.functions();
    std::vector<std::vector<const CallTree::Arc*>> calls_of(functions.size());
    for (const auto& arc : arcs) calls_of[arc.caller].push_back(&arc);
    std::uint64_t total = 0;
    for (const auto& t : totals) total += t.exclusive;

    const bool logical = options().time.logical();
    const char* event = logical ? "Events" : "ns";
    out().print("# callgrind format\nversion: 1\ncreator: parlot-read\n");
    out().print("# time axis: {}\n", one_line(options().time.description));
    out().print("cmd: {}\npositions: line\nevent: {} : {}\nevents: {}\n", one_line(command_), event,
                logical ? "events (logical clock: exit index - entry index)" : "time in ns", event);
    CompressedNames files;
    CompressedNames names;
    auto file_of = [&](const FunctionInfo& f) {
      return files(f.file.empty() ? std::string("???") : one_line(f.file));
    };
    for (FunctionKey k = 0; k < functions.size(); ++k) {
      const FunctionInfo& f = functions[k];
      out().print("\nfl={}\nfn={}\n{} {}\n", file_of(f), names(one_line(f.name)), f.line,
                  totals[k].exclusive);
      for (const CallTree::Arc* arc : calls_of[k]) {
        const FunctionInfo& callee = functions[arc->callee];
        out().print("cfi={}\ncfn={}\ncalls={} {}\n{} {}\n", file_of(callee),
                    names(one_line(callee.name)), arc->cost.calls, callee.line, f.line,
                    arc->cost.inclusive);
      }
    }
    out().print("\ntotals: {}\n", total);
  }

 private:
  std::string command_;
};

}  // namespace

std::unique_ptr<Exporter> make_callgrind_exporter(const std::string& output,
                                                  const ExportOptions& options) {
  return std::make_unique<CallgrindExporter>(output, options);
}

}  // namespace parlot::exporter
