// dot: a Graphviz call graph. Nodes are functions (label: name and calls),
// edges caller -> callee labelled with their calls; with --top N only the N
// most called edges and the functions they join are kept.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "exporters.h"
#include "tree_exporter.h"

namespace parlot::exporter {
namespace {

/// `text` as the inside of a DOT double-quoted string.
std::string dot_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

class DotExporter final : public TreeExporter {
 public:
  using TreeExporter::TreeExporter;

 protected:
  void write(const CallTree& tree) override {
    const auto totals = tree.function_totals();
    auto arcs = tree.arcs();
    std::stable_sort(arcs.begin(), arcs.end(),
                     [](const auto& a, const auto& b) { return a.cost.calls > b.cost.calls; });
    const std::size_t all_edges = arcs.size();
    if (options().top_edges != 0 && arcs.size() > options().top_edges) {
      arcs.resize(options().top_edges);
    }
    std::map<FunctionKey, std::size_t> node_ids;  // functions shown, in key order
    for (const auto& arc : arcs) {
      node_ids.emplace(arc.caller, 0);
      node_ids.emplace(arc.callee, 0);
    }
    if (arcs.empty()) {  // no calls between functions: show the outermost ones
      for (FunctionKey k = 0; k < tree.functions().size(); ++k) node_ids.emplace(k, 0);
    }
    std::size_t next = 0;
    for (auto& [key, id] : node_ids) id = next++;

    out().print("digraph parlot {{\n");
    out().print("  // call graph: edges labelled with calls; {} of {} edges shown\n", arcs.size(),
                all_edges);
    out().print("  // {}\n", dot_escape(options().time.description));
    out().print("  node [shape=box, fontname=\"monospace\"];\n");
    for (const auto& [key, id] : node_ids) {
      const std::uint64_t calls = totals[key].calls;
      out().print("  f{} [label=\"{}\\n{} call{}\"];\n", id, dot_escape(tree.functions()[key].name),
                  calls, calls == 1 ? "" : "s");
    }
    for (const auto& arc : arcs) {
      out().print("  f{} -> f{} [label=\"{}\"];\n", node_ids[arc.caller], node_ids[arc.callee],
                  arc.cost.calls);
    }
    out().print("}}\n");
  }
};

}  // namespace

std::unique_ptr<Exporter> make_dot_exporter(const std::string& output,
                                            const ExportOptions& options) {
  return std::make_unique<DotExporter>(output, options);
}

}  // namespace parlot::exporter
