#include "loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

namespace parlot::analysis {
namespace {

using Item = LoopSummary::Item;

void append_bytes(std::string& key, const void* p, std::size_t n) {
  key.append(static_cast<const char*>(p), n);
}

std::string items_key(const std::vector<Item>& items) {
  std::string key;
  key.reserve(items.size() * 13);
  for (const Item& i : items) {
    const char loop = i.loop ? 1 : 0;
    append_bytes(key, &loop, 1);
    append_bytes(key, &i.id, sizeof i.id);
    append_bytes(key, &i.count, sizeof i.count);
  }
  return key;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

}  // namespace

LoopBuilder::LoopBuilder(std::size_t max_body) : max_body_(std::max<std::size_t>(1, max_body)) {
  frames_.push_back({0, {}});
}

std::uint32_t LoopBuilder::intern_call(FunctionKey function, bool open, std::vector<Item> body) {
  if (body.empty() && !open) {
    // A closed call without callees (most calls): keyed by its function
    // alone, without building a byte key.
    const auto [it, inserted] =
        leaf_ids_.try_emplace(function, static_cast<std::uint32_t>(summary_.calls_.size()));
    if (inserted) summary_.calls_.push_back({function, false, {}});
    return it->second;
  }
  std::string key = items_key(body);
  append_bytes(key, &function, sizeof function);
  key += open ? 'o' : 'c';
  const auto [it, inserted] =
      call_ids_.try_emplace(std::move(key), static_cast<std::uint32_t>(summary_.calls_.size()));
  if (inserted) summary_.calls_.push_back({function, open, std::move(body)});
  return it->second;
}

std::uint32_t LoopBuilder::intern_body(std::vector<Item> body) {
  const auto [it, inserted] =
      body_ids_.try_emplace(items_key(body), static_cast<std::uint32_t>(summary_.bodies_.size()));
  if (inserted) summary_.bodies_.push_back(std::move(body));
  return it->second;
}

void LoopBuilder::append(std::vector<Item>& s, Item item) {
  s.push_back(item);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t k = 1; k <= max_body_ && !changed; ++k) {
      // The k items on top repeat the body of the loop just before them.
      if (s.size() >= k + 1) {
        Item& prev = s[s.size() - k - 1];
        if (prev.loop) {
          const auto& body = summary_.bodies_[prev.id];
          if (body.size() == k && std::equal(body.begin(), body.end(), s.end() - k)) {
            ++prev.count;
            s.resize(s.size() - k);
            changed = true;
            break;
          }
        }
      }
      // The k items on top repeat the k before them: a new loop.
      if (s.size() >= 2 * k && std::equal(s.end() - 2 * k, s.end() - k, s.end() - k, s.end())) {
        const std::uint32_t body = intern_body(std::vector<Item>(s.end() - k, s.end()));
        s.resize(s.size() - 2 * k);
        s.push_back({true, body, 2});
        changed = true;
      }
    }
  }
}

void LoopBuilder::push(const Event& e) {
  if (e.enter) {
    frames_.push_back({e.function, {}});
    return;
  }
  if (frames_.size() == 1) return;  // unmatched exit: the tracker rejects these first
  Frame f = std::move(frames_.back());
  frames_.pop_back();
  append(frames_.back().items, {false, intern_call(f.function, false, std::move(f.items)), 1});
}

LoopSummary LoopBuilder::finish() {
  while (frames_.size() > 1) {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    // An open call is the last item of its caller: no folding across it.
    frames_.back().items.push_back({false, intern_call(f.function, true, std::move(f.items)), 1});
  }
  summary_.top_ = std::move(frames_.back().items);
  frames_.clear();
  call_ids_.clear();
  body_ids_.clear();
  leaf_ids_.clear();
  return std::move(summary_);
}

std::vector<Event> LoopSummary::expand() const {
  std::vector<Event> out;
  std::function<void(const std::vector<Item>&, std::uint32_t)> items;
  items = [&](const std::vector<Item>& list, std::uint32_t depth) {
    for (const Item& i : list) {
      for (std::uint64_t n = 0; n < i.count; ++n) {
        if (i.loop) {
          items(bodies_[i.id], depth);
          continue;
        }
        const Call& c = calls_[i.id];
        out.push_back({true, c.function, depth});
        items(c.body, depth + 1);
        if (!c.open) out.push_back({false, c.function, depth});
      }
    }
  };
  items(top_, 0);
  return out;
}

std::uint64_t LoopSummary::event_count() const {
  std::vector<std::uint64_t> call_events(calls_.size(), 0), body_events(bodies_.size(), 0);
  std::vector<bool> call_done(calls_.size(), false), body_done(bodies_.size(), false);
  std::function<std::uint64_t(const std::vector<Item>&)> count_items;
  std::function<std::uint64_t(const Item&)> count_item = [&](const Item& i) -> std::uint64_t {
    if (i.loop) {
      if (!body_done[i.id]) body_events[i.id] = count_items(bodies_[i.id]), body_done[i.id] = true;
      return i.count * body_events[i.id];
    }
    if (!call_done[i.id]) {
      call_events[i.id] = (calls_[i.id].open ? 1 : 2) + count_items(calls_[i.id].body);
      call_done[i.id] = true;
    }
    return call_events[i.id];
  };
  count_items = [&](const std::vector<Item>& list) {
    std::uint64_t n = 0;
    for (const Item& i : list) n += count_item(i);
    return n;
  };
  return count_items(top_);
}

namespace {

/// Writes items as LoopSummary::to_string() does, stopping once `out` is
/// longer than `max_chars` (returns false then). An explicit stack of the
/// lists being written, no recursion: nesting can be as deep as the trace's
/// stack (10^5-10^6 frames after a stack overflow).
bool write_items(const std::vector<Item>& top, const std::vector<LoopSummary::Call>& calls,
                 const std::vector<std::vector<Item>>& bodies, const NameTable& names,
                 std::size_t max_chars, std::string& out) {
  struct Level {
    const std::vector<Item>* list;
    std::size_t next;
    const char* close;  ///< written after the list (nullptr: none)
  };
  std::vector<Level> todo{{&top, 0, nullptr}};
  while (!todo.empty()) {
    Level& level = todo.back();
    if (level.next == level.list->size()) {
      if (level.close != nullptr) out += level.close;
      todo.pop_back();
      continue;
    }
    const Item& i = (*level.list)[level.next++];
    if (out.size() > max_chars) return false;
    if (!out.empty() && out.back() != ' ') out += ' ';
    if (i.loop) {
      out += fmt::format("{} x [ ", i.count);
      todo.push_back({&bodies[i.id], 0, " ]"});
      continue;
    }
    const LoopSummary::Call& c = calls[i.id];
    out += names.name(c.function);
    if (!c.body.empty()) {
      out += " { ";
      todo.push_back({&c.body, 0, c.open ? " ..." : " }"});
    } else if (c.open) {
      out += " ...";
    }
  }
  return true;
}

}  // namespace

std::string LoopSummary::to_string(const NameTable& names) const {
  std::string out;
  write_items(top_, calls_, bodies_, names, SIZE_MAX, out);
  return out;
}

std::string LoopSummary::item_to_string(const Item& item, const NameTable& names,
                                        std::size_t max_chars) const {
  std::string out;
  if (!write_items({item}, calls_, bodies_, names, max_chars, out)) {
    out.resize(std::min(out.size(), max_chars));
    out += " ...";
  }
  return out;
}

std::uint64_t LoopSummary::structure_hash() const {
  std::vector<std::uint64_t> call_hash(calls_.size(), 0), body_hash(bodies_.size(), 0);
  std::vector<bool> call_done(calls_.size(), false), body_done(bodies_.size(), false);
  // Post-order over the lists with an explicit stack, each call and body
  // hashed once: nesting as deep as the trace's stack (10^5-10^6 frames
  // after a stack overflow) takes no native stack.
  struct List {
    const std::vector<Item>* items;
    std::size_t next = 0;
    std::uint64_t h = 0x51ed27;
    bool top = false;  ///< the summary's top list, else the list of `owner`
    Item owner{};
  };
  std::vector<List> todo;
  todo.push_back({&top_, 0, 0x51ed27, true, {}});
  std::uint64_t result = 0;
  while (!todo.empty()) {
    List& l = todo.back();
    if (l.next < l.items->size()) {
      const Item i = (*l.items)[l.next];
      if (i.loop && !body_done[i.id]) {
        todo.push_back({&bodies_[i.id], 0, 0x51ed27, false, i});
        continue;
      }
      if (!i.loop && !call_done[i.id]) {
        todo.push_back({&calls_[i.id].body, 0, 0x51ed27, false, i});
        continue;
      }
      l.h = mix(l.h, i.loop ? mix(0x100, body_hash[i.id]) : call_hash[i.id]);
      ++l.next;
      continue;
    }
    const List done = l;
    todo.pop_back();
    if (done.top) {
      result = done.h;
    } else if (done.owner.loop) {
      body_hash[done.owner.id] = done.h;
      body_done[done.owner.id] = true;
    } else {
      const Call& c = calls_[done.owner.id];
      call_hash[done.owner.id] = mix(mix(c.function, c.open ? 1 : 2), done.h);
      call_done[done.owner.id] = true;
    }
  }
  return result;
}

}  // namespace parlot::analysis
