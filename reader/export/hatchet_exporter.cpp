// hatchet: the merged call tree as Hatchet's "literal" JSON
// (hatchet.GraphFrame.from_literal): a list of root nodes, each
// {"frame": {"name", "type": "function", "file", "line"}, "metrics": {...},
// "children": [...]}. Metrics: "calls", "calls (inc)" (calls in the subtree)
// and the cost, exclusive and inclusive: "events"/"events (inc)" on the
// logical clock, "time (ns)"/"time (ns) (inc)" with time.
#include <string>
#include <vector>

#include "exporters.h"
#include "tree_exporter.h"

namespace parlot::exporter {
namespace {

class HatchetExporter final : public TreeExporter {
 public:
  using TreeExporter::TreeExporter;

 protected:
  void write(const CallTree& tree) override {
    const auto& nodes = tree.nodes();
    std::vector<std::uint64_t> subtree_calls(nodes.size());
    for (std::size_t i = nodes.size(); i-- > 1;) {  // children follow their parents
      subtree_calls[i] += nodes[i].cost.calls;
      subtree_calls[nodes[i].parent] += subtree_calls[i];
    }
    const bool logical = options().time.logical();
    const std::string cost = logical ? "events" : "time (ns)";
    std::vector<std::string> frames;
    for (const auto& f : tree.functions()) {
      frames.push_back(fmt::format("{{\"name\":{},\"type\":\"function\",\"file\":{},\"line\":{}}}",
                                   json_string(f.name), json_string(f.file), f.line));
    }
    struct Frame {
      std::uint32_t node;
      std::size_t next_child;
    };
    std::vector<Frame> stack{{CallTree::kRoot, 0}};
    out().print("[");
    while (!stack.empty()) {
      Frame& top = stack.back();
      const CallTree::Node& n = nodes[top.node];
      if (top.next_child < n.children.size()) {
        if (top.next_child != 0) out().write(",");
        const std::uint32_t c = n.children[top.next_child++];
        const CallTree::Node& child = nodes[c];
        out().print(
            "\n{{\"frame\":{},\"metrics\":{{\"calls\":{},\"calls (inc)\":{},\"{}\":{},\"{} "
            "(inc)\":{}}},\"children\":[",
            frames[child.function], child.cost.calls, subtree_calls[c], cost, child.cost.exclusive,
            cost, child.cost.inclusive);
        stack.push_back({c, 0});
        continue;
      }
      out().write(top.node == CallTree::kRoot ? "\n]\n" : "]}");
      stack.pop_back();
    }
  }
};

}  // namespace

std::unique_ptr<Exporter> make_hatchet_exporter(const std::string& output,
                                                const ExportOptions& options) {
  return std::make_unique<HatchetExporter>(output, options);
}

}  // namespace parlot::exporter
