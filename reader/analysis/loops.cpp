#include "loops.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "hash_mix.h"
#include "summary_events.h"

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
  // An explicit stack of the lists being expanded (no native recursion:
  // nesting can be as deep as the trace's call stack).
  struct Level {
    const std::vector<Item>* items;
    std::size_t next;       ///< item after the current one
    std::uint64_t repeats;  ///< repetitions of the current item still to expand
    std::uint32_t depth;    ///< of the calls in the list
    const Call* closes;     ///< the call whose body this is (nullptr: none)
  };
  std::vector<Event> out;
  std::vector<Level> todo{{&top_, 0, 0, 0, nullptr}};
  while (!todo.empty()) {
    Level& level = todo.back();
    if (level.repeats == 0) {
      if (level.next == level.items->size()) {
        const Call* c = level.closes;
        const std::uint32_t depth = level.depth;
        todo.pop_back();
        if (c != nullptr && !c->open) out.push_back({false, c->function, depth - 1});
        continue;
      }
      level.repeats = (*level.items)[level.next++].count;
      continue;
    }
    const Item& i = (*level.items)[level.next - 1];
    --level.repeats;
    const std::uint32_t depth = level.depth;
    if (i.loop) {
      todo.push_back({&bodies_[i.id], 0, 0, depth, nullptr});
      continue;
    }
    const Call& c = calls_[i.id];
    out.push_back({true, c.function, depth});
    todo.push_back({&c.body, 0, 0, depth + 1, &c});
  }
  return out;
}

std::uint64_t LoopSummary::event_count() const {
  // Events of each call (entry, body, exit unless open) and of one pass of
  // each loop body, post-order.
  const SummaryEvents events = summary_events(*this);
  std::uint64_t n = 0;
  for (const Item& i : top_) n += events.of(i);
  return n;
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

std::string LoopSummary::to_string(const NameTable& names, std::size_t max_chars, bool* cut) const {
  std::string out;
  const bool whole = write_items(top_, calls_, bodies_, names, max_chars, out);
  if (!whole) {
    // Cut between items (the last one written whole).
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += " ...";
  }
  if (cut != nullptr) *cut = !whole;
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
  auto done = [&](const Item& i) { return i.loop ? body_done[i.id] : call_done[i.id]; };
  auto hash_items = [&](const std::vector<Item>& items) {
    std::uint64_t h = 0x51ed27;
    for (const Item& i : items) h = mix(h, i.loop ? mix(0x100, body_hash[i.id]) : call_hash[i.id]);
    return h;
  };
  // Each call and body hashed once, post-order (no native recursion).
  auto finish = [&](const Item& owner) {
    if (owner.loop) {
      body_hash[owner.id] = hash_items(bodies_[owner.id]);
      body_done[owner.id] = true;
    } else {
      const Call& c = calls_[owner.id];
      call_hash[owner.id] = mix(mix(c.function, c.open ? 1 : 2), hash_items(c.body));
      call_done[owner.id] = true;
    }
  };
  for (const Item& i : top_) post_order(i, done, finish);
  return hash_items(top_);
}

}  // namespace parlot::analysis
