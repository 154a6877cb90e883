// folded: Brendan Gregg's folded stacks ("main;f;g 42"), the input of
// flamegraph.pl, speedscope and inferno. One line per call path. Weight:
// self time in ns when the trace has time; calls along exactly that path on
// the logical clock (so a frame's width in a flame graph is the number of
// calls made in it and below it). The file has no room for a header: the
// weighting is stated on stderr by `parlot-read export` and in README.md.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "exporters.h"
#include "tree_exporter.h"

namespace parlot::exporter {
namespace {

/// A frame name that cannot break the line format: ';' separates frames
/// and the last space separates the weight.
std::string folded_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

class FoldedExporter final : public TreeExporter {
 public:
  using TreeExporter::TreeExporter;

 protected:
  void write(const CallTree& tree) override {
    // Folded stacks name frames only: functions of the same name (from
    // other files or lines) merge, so the tree is merged again by name.
    std::vector<std::string> names;
    std::vector<std::uint32_t> name_of(tree.functions().size());
    std::unordered_map<std::string, std::uint32_t> name_ids;
    for (std::size_t k = 0; k < tree.functions().size(); ++k) {
      const std::string name = folded_name(tree.functions()[k].name);
      auto [it, added] = name_ids.try_emplace(name, static_cast<std::uint32_t>(names.size()));
      if (added) names.push_back(name);
      name_of[k] = it->second;
    }
    struct NameNode {
      std::uint32_t name;
      std::uint64_t weight = 0;
      std::vector<std::uint32_t> children;
    };
    std::vector<NameNode> nodes{{0, 0, {}}};
    std::unordered_map<std::uint64_t, std::uint32_t> child_of;  // parent << 32 | name -> node
    std::vector<std::uint32_t> mapped(tree.nodes().size(), 0);
    const bool by_calls = options().time.logical();
    for (std::size_t i = 1; i < tree.nodes().size(); ++i) {  // parents precede children
      const CallTree::Node& n = tree.nodes()[i];
      const std::uint32_t parent = mapped[n.parent];
      const std::uint32_t name = name_of[n.function];
      auto [it, added] = child_of.try_emplace(static_cast<std::uint64_t>(parent) << 32 | name,
                                              static_cast<std::uint32_t>(nodes.size()));
      if (added) {
        nodes.push_back({name, 0, {}});
        nodes[parent].children.push_back(it->second);
      }
      nodes[it->second].weight += by_calls ? n.cost.calls : n.cost.exclusive;
      mapped[i] = it->second;
    }
    // Bytes of the output (nodes follow their parents), before writing any:
    // a path D frames deep is written in each of its D prefixes' lines.
    if (options().folded_max_bytes != 0) {
      std::vector<std::uint64_t> path_bytes(nodes.size(), 0);
      std::vector<std::uint32_t> depth(nodes.size(), 0);
      std::uint64_t total = 0;
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        const NameNode& n = nodes[k];
        for (const std::uint32_t c : n.children) {
          path_bytes[c] = path_bytes[k] + (k == 0 ? 0 : 1) + names[nodes[c].name].size();
          depth[c] = depth[k] + 1;
        }
        if (k != 0 && n.weight != 0)
          total += path_bytes[k] + 2 + fmt::formatted_size("{}", n.weight);
      }
      if (total > options().folded_max_bytes) {
        throw std::runtime_error(fmt::format(
            "a folded export would take {} bytes (call paths up to {} frames deep, each line "
            "repeats its whole path), over the limit of {} (--folded-limit); narrow it with "
            "--max-depth N, --tid T or --window BEGIN:END, or use --format speedscope",
            total, *std::max_element(depth.begin(), depth.end()), options().folded_max_bytes));
      }
    }
    // Depth-first with the path as one string, cut back on the way up.
    struct Frame {
      std::uint32_t node;
      std::size_t next_child;
      std::size_t path_length;  // path length before this node's name
    };
    std::string path;
    std::vector<Frame> stack{{0, 0, 0}};
    while (!stack.empty()) {
      Frame& top = stack.back();
      const NameNode& n = nodes[top.node];
      if (top.next_child == 0 && top.node != 0 && n.weight != 0) {
        out().print("{} {}\n", path, n.weight);
      }
      if (top.next_child < n.children.size()) {
        const std::uint32_t child = n.children[top.next_child++];
        const std::size_t before = path.size();
        if (!path.empty()) path += ';';
        path += names[nodes[child].name];
        stack.push_back({child, 0, before});
        continue;
      }
      path.resize(top.path_length);
      stack.pop_back();
    }
  }
};

}  // namespace

std::unique_ptr<Exporter> make_folded_exporter(const std::string& output,
                                               const ExportOptions& options) {
  return std::make_unique<FoldedExporter>(output, options);
}

}  // namespace parlot::exporter
