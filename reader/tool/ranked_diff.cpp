#include "ranked_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/summary_bytes.h"
#include "analysis/thread_set.h"

namespace parlot::tool {

std::string write_pair_diffs(const std::vector<PairDiff>& pairs) {
  analysis::SummaryWriter out;
  out.number(pairs.size());
  for (const PairDiff& p : pairs) {
    out.number(p.id.rank);
    out.number(p.id.thread);
    out.number(p.id.fork);
    out.text(p.label);
    out.number((p.identical ? 1 : 0) | (p.one_sided ? 2 : 0));
    out.number(p.position);
    out.number(p.size);
    out.text(p.text);
  }
  return out.take();
}

std::vector<PairDiff> read_pair_diffs(std::string_view bytes) {
  analysis::SummaryReader in(bytes);
  std::vector<PairDiff> pairs(in.count(8));
  for (PairDiff& p : pairs) {
    p.id.rank = in.number();
    p.id.thread = in.number();
    p.id.fork = in.number();
    p.label = in.text();
    const std::uint64_t flags = in.number();
    p.identical = (flags & 1) != 0;
    p.one_sided = (flags & 2) != 0;
    p.position = in.number();
    p.size = in.number();
    p.text = in.text();
  }
  in.expect_done();
  return pairs;
}

namespace {

struct Group {
  std::vector<const PairDiff*> members;  // first: the smallest thread
  const PairDiff& first() const { return *members.front(); }
};

std::size_t count_lines(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

std::string ranked_diff_text(std::vector<PairDiff> pairs, const std::string& left_label,
                             const std::string& right_label, bool ranked,
                             const RankedDiffOptions& o) {
  std::sort(pairs.begin(), pairs.end(),
            [](const PairDiff& a, const PairDiff& b) { return a.id < b.id; });
  std::size_t identical = 0, one_sided = 0;
  std::map<std::string_view, std::size_t> by_text;  // report -> group
  std::vector<Group> groups;
  for (const PairDiff& p : pairs) {
    if (p.identical) {
      ++identical;
      continue;
    }
    one_sided += p.one_sided ? 1 : 0;
    const auto [it, added] = by_text.try_emplace(p.text, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].members.push_back(&p);
  }
  // Earliest divergence first, then the largest, then the most threads;
  // threads in one run only last.
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    const PairDiff &x = a.first(), &y = b.first();
    return std::make_tuple(x.one_sided, x.position, -static_cast<double>(x.size),
                           -static_cast<double>(a.members.size())) <
           std::make_tuple(y.one_sided, y.position, -static_cast<double>(y.size),
                           -static_cast<double>(b.members.size()));
  });
  std::string out = fmt::format(
      "{} vs {}: {} thread{} differ{} ({} group{}), {} identical{}\n", left_label, right_label,
      pairs.size() - identical, pairs.size() - identical == 1 ? "" : "s",
      pairs.size() - identical == 1 ? "s" : "", groups.size(), groups.size() == 1 ? "" : "s",
      identical, one_sided == 0 ? "" : fmt::format(", {} in one run only", one_sided));
  std::size_t lines = 1;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const Group& group = groups[g];
    std::string name = group.first().label;
    if (group.members.size() > 1) {
      analysis::ThreadSet set;
      for (const PairDiff* p : group.members) set.insert(p->id);
      name = fmt::format("{} ({} threads, the same difference)", set.to_string(ranked),
                         group.members.size());
    }
    std::string text = name + ": " + group.first().text;
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::size_t cap = o.max_group_lines == 0 ? SIZE_MAX : o.max_group_lines;
    if (o.max_lines != 0) {
      // Room for this group, and for the last line when more follow.
      if (lines + 3 > o.max_lines) {
        std::size_t rest_lines = 0;
        for (std::size_t r = g; r < groups.size(); ++r) {
          rest_lines += count_lines(groups[r].first().text) + 1;
        }
        out += fmt::format(
            "... {} more difference{} (use --all): {} more lines, {} more group{} "
            "of threads\n",
            groups.size() - g, groups.size() - g == 1 ? "" : "s", rest_lines, groups.size() - g,
            groups.size() - g == 1 ? "" : "s");
        return out;
      }
      cap = std::min(cap, o.max_lines - lines - 1);
    }
    const std::size_t n = count_lines(text);
    if (n > cap) {
      std::size_t pos = 0;
      for (std::size_t k = 0; k + 1 < cap; ++k) pos = text.find('\n', pos) + 1;
      const std::size_t cut = n - (cap - 1);
      text.resize(pos);
      text += fmt::format("  ... {} more line{} of this difference (use --all)\n", cut,
                          cut == 1 ? "" : "s");
    }
    lines += count_lines(text);
    out += text;
  }
  return out;
}

}  // namespace parlot::tool
