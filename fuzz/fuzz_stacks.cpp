// libFuzzer target: `parlot-read stacks` (issue 9 §3) and the leader's
// parse of the partial results of an mpirun'd parlot-read (issue 9 §7).
//
// Byte 0 picks the mode.
// - byte 0 % 4 != 3: call streams of K threads (fuzz_streams.h; bit 2 of
//   byte 0: malformed streams) -> OpenStack per thread -> StackTree, as the
//   command does (reader/tool/stacks_command.cpp), also as two trees of
//   half the threads each merged. Checks: every thread's stack is a path
//   from the root whose nodes all hold the thread, ending where its stack
//   ends; every node's thread set is exactly the threads whose stack passes
//   through it (so its count is their number), its `ending` set exactly
//   those whose stack ends there; the merged tree prints as the whole one;
//   the text and the DOT output are produced, the same on a second call,
//   and the DOT has balanced braces outside its (closed) quoted strings.
// - byte 0 % 4 == 3: bytes from another rank: the rest of the input is a
//   stacks (byte 0 >> 2 % 3 == 0), classes (1) or stats (2) partial result,
//   byte 1 the run's process count. read_*_partial() must return or throw
//   std::runtime_error (anything else, a crash or an allocation beyond
//   libFuzzer's malloc limit is a finding). A parsed result writes back to
//   bytes that parse to the same result, and goes through the leader's
//   merge (StackTree, Classes, NamedCallStats::merge).
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "classes.h"
#include "fuzz_streams.h"
#include "fuzz_support.h"
#include "partial_results.h"
#include "stack_tree.h"

namespace {

using namespace parlot::analysis;
using parlot::fuzz::FuzzThreads;

/// Whether `dot` has balanced braces outside quoted strings and every
/// string closed (backslash escapes inside strings).
bool dot_is_balanced(const std::string& dot) {
  long depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < dot.size(); ++i) {
    const char c = dot[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else if (c == '\n') {
        return false;  // a string never spans lines in what to_dot writes
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth < 0) return false;
    }
  }
  return depth == 0 && !quoted;
}

/// Checks `tree` against the stacks it was made of: walks each stack from
/// the root, then compares every node's sets with the expected ones.
void check_tree(const StackTree& tree, const std::vector<ThreadId>& ids,
                const std::vector<std::vector<FunctionKey>>& stacks) {
  std::map<const StackTree::Node*, ThreadSet> through, ending;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const StackTree::Node* n = &tree.root();
    through[n].insert(ids[i]);
    for (const FunctionKey f : stacks[i]) {
      const auto it = n->children.find(f);
      PARLOT_FUZZ_CHECK(it != n->children.end());
      n = &it->second;
      through[n].insert(ids[i]);
    }
    ending[n].insert(ids[i]);
  }
  // Every node (iteratively: stacks may be deep).
  std::vector<const StackTree::Node*> todo{&tree.root()};
  while (!todo.empty()) {
    const StackTree::Node* n = todo.back();
    todo.pop_back();
    PARLOT_FUZZ_CHECK(n->threads == through[n]);
    PARLOT_FUZZ_CHECK(n->ending == ending[n]);
    for (const auto& [key, child] : n->children) todo.push_back(&child);
  }
}

void fuzz_stacks(const FuzzThreads& in) {
  const std::size_t n = in.ids.size();
  std::vector<std::vector<FunctionKey>> stacks(n);
  StackTree whole, first_half, second_half;
  for (std::size_t i = 0; i < n; ++i) {
    OpenStack stack;
    for (const Event& e : in.streams[i]) stack.push(e);
    stacks[i] = stack.frames();
    PARLOT_FUZZ_CHECK(stacks[i] == parlot::fuzz::final_stack(in.streams[i]));
    whole.add(in.ids[i], stacks[i]);
    (i < n / 2 ? first_half : second_half).add(in.ids[i], stacks[i]);
  }
  check_tree(whole, in.ids, stacks);
  first_half.merge(second_half);
  check_tree(first_half, in.ids, stacks);

  const std::string text = whole.to_text(in.names);
  PARLOT_FUZZ_CHECK(!text.empty() && text.back() == '\n');
  PARLOT_FUZZ_CHECK(text == whole.to_text(in.names));
  PARLOT_FUZZ_CHECK(text == first_half.to_text(in.names));
  const std::string dot = whole.to_dot(in.names);
  PARLOT_FUZZ_CHECK(dot.starts_with("digraph ") && dot.ends_with("}\n"));
  PARLOT_FUZZ_CHECK(dot_is_balanced(dot));
  PARLOT_FUZZ_CHECK(dot == first_half.to_dot(in.names));
  // Without MPI ranks ("process"/"processes").
  PARLOT_FUZZ_CHECK(!whole.to_text(in.names, false).empty());
  PARLOT_FUZZ_CHECK(dot_is_balanced(whole.to_dot(in.names, false)));
}

void fuzz_partial(int kind, std::uint64_t process_count, std::string_view bytes) {
  try {
    if (kind == 0) {
      const StacksPartial p = read_stacks_partial(bytes);
      PARLOT_FUZZ_CHECK(read_stacks_partial(write_stacks_partial(p)) == p);
      StackTree tree;
      NameTable names;
      for (const auto& t : p.threads) tree.add(t.id, t.stack);
      for (const auto& [key, name] : p.names) names.add(key, name);
      PARLOT_FUZZ_CHECK(!tree.to_text(names).empty());
      PARLOT_FUZZ_CHECK(dot_is_balanced(tree.to_dot(names)));
    } else if (kind == 1) {
      const ClassesPartial p = read_classes_partial(bytes, process_count);
      PARLOT_FUZZ_CHECK(read_classes_partial(write_classes_partial(p), process_count) == p);
      Classes classes;
      for (const auto& t : p.threads) {
        PARLOT_FUZZ_CHECK(t.process < process_count);
        classes.add(t.id, t.hash);
      }
      (void)classes.ordered();
    } else {
      const StatsPartial p = read_stats_partial(bytes, process_count);
      PARLOT_FUZZ_CHECK(read_stats_partial(write_stats_partial(p), process_count) == p);
      NamedCallStats all;
      for (const auto& u : p.units) {
        PARLOT_FUZZ_CHECK(u.process < process_count);
        all.merge(u.stats);
      }
    }
  } catch (const std::runtime_error&) {
    // The clean error the leader reports.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  if (data[0] % 4 == 3) {
    fuzz_partial((data[0] >> 2) % 3, data[1], {reinterpret_cast<const char*>(data + 2), size - 2});
  } else {
    fuzz_stacks(parlot::fuzz::threads_of({data + 1, size - 1}, (data[0] & 4) != 0));
  }
  return 0;
}
