#include "summary_events.h"

namespace parlot::analysis {

SummaryEvents summary_events(const LoopSummary& summary) {
  using Item = LoopSummary::Item;
  const auto& calls = summary.calls();
  const auto& bodies = summary.bodies();
  SummaryEvents out{std::vector<std::uint64_t>(calls.size(), 0),
                    std::vector<std::uint64_t>(bodies.size(), 0)};
  std::vector<bool> call_done(calls.size(), false), body_done(bodies.size(), false);
  auto done = [&](const Item& i) { return i.loop ? body_done[i.id] : call_done[i.id]; };
  auto sum = [&](const std::vector<Item>& items) {
    std::uint64_t n = 0;
    for (const Item& i : items) n += out.of(i);
    return n;
  };
  auto finish = [&](const Item& owner) {
    if (owner.loop) {
      out.body[owner.id] = sum(bodies[owner.id]);
      body_done[owner.id] = true;
    } else {
      out.call[owner.id] = (calls[owner.id].open ? 1 : 2) + sum(calls[owner.id].body);
      call_done[owner.id] = true;
    }
  };
  for (const Item& i : summary.top()) summary.post_order(i, done, finish);
  return out;
}

}  // namespace parlot::analysis
