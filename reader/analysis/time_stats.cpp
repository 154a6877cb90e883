#include "analysis/time_stats.h"

#include <algorithm>

namespace parlot::analysis {

std::uint64_t TimeProfile::total() const {
  std::uint64_t sum = 0;
  for (const std::uint64_t t : category) sum += t;
  return sum;
}

void TimeProfile::add(const TimeProfile& o) {
  for (std::size_t c = 0; c < kTimeCategories; ++c) category[c] += o.category[c];
  if (functions.size() < o.functions.size()) functions.resize(o.functions.size());
  for (std::size_t k = 0; k < o.functions.size(); ++k) functions[k].add(o.functions[k]);
}

void ThreadTimeBuilder::enter(std::uint32_t key, TimeCategory c, std::uint64_t time) {
  if (key >= profile_.functions.size()) {
    profile_.functions.resize(key + 1);
    active_.resize(key + 1);
  }
  ++profile_.functions[key].calls;
  ++active_[key];
  open_.push_back({key, c, time, 0});
}

void ThreadTimeBuilder::exit(std::uint64_t time) {
  if (open_.empty()) return;
  const Open o = open_.back();
  open_.pop_back();
  // Times never decrease in a checked trace; a clamp keeps a damaged one sane.
  const std::uint64_t span = time > o.entered ? time - o.entered : 0;
  const std::uint64_t self = span > o.callees ? span - o.callees : 0;
  FunctionTime& f = profile_.functions[o.key];
  f.exclusive += self;
  profile_.category[static_cast<std::size_t>(o.category)] += self;
  if (--active_[o.key] == 0) f.inclusive += span;
  if (!open_.empty()) open_.back().callees += span;
}

TimeProfile ThreadTimeBuilder::finish(std::uint64_t time) {
  while (!open_.empty()) exit(time);
  TimeProfile done = std::move(profile_);
  profile_ = {};
  active_.clear();
  return done;
}

std::uint32_t TimeStats::key(std::string_view name) {
  const auto [it, added] =
      keys_.try_emplace(std::string(name), static_cast<std::uint32_t>(names_.size()));
  if (added) names_.emplace_back(name);
  return it->second;
}

void TimeStats::begin_process(std::string name) {
  processes_.push_back({std::move(name), {}, {}, {}});
}

void TimeStats::add_thread(std::string name, TimeProfile profile) {
  ProcessTime& p = processes_.back();
  p.total.add(profile);
  p.thread_names.push_back(std::move(name));
  p.threads.push_back(std::move(profile));
}

TimeProfile TimeStats::program() const {
  TimeProfile all;
  for (const ProcessTime& p : processes_) all.add(p.total);
  return all;
}

std::vector<Imbalance> TimeStats::imbalance(const std::vector<const TimeProfile*>& members) {
  std::size_t functions = 0;
  for (const TimeProfile* m : members) functions = std::max(functions, m->functions.size());
  std::vector<Imbalance> out;
  for (std::size_t k = 0; k < functions; ++k) {
    Imbalance im;
    im.function = static_cast<std::uint32_t>(k);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (k >= members[i]->functions.size() || members[i]->functions[k].calls == 0) continue;
      const std::uint64_t t = members[i]->functions[k].exclusive;
      if (im.members == 0 || t > im.max) {
        im.max = t;
        im.slowest = i;
      }
      ++im.members;
      sum += t;
    }
    if (im.members == 0) continue;
    im.mean = static_cast<double>(sum) / static_cast<double>(im.members);
    out.push_back(im);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Imbalance& a, const Imbalance& b) { return a.excess() > b.excess(); });
  return out;
}

}  // namespace parlot::analysis
