// A per-function-ID cache whose memory is bounded by what is cached, never
// by the magnitude of an ID read from a file: dense for IDs up to the
// function table's size, a hash map beyond it (IDs a damaged file may claim).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace parlot::tool {

template <class T>
class IdCache {
 public:
  /// `dense_ids`: IDs 0..dense_ids are stored in a vector.
  explicit IdCache(std::size_t dense_ids) : dense_(dense_ids + 1) {}

  /// The cached value of `id`, or nullptr. Pointers stay valid.
  T* find(std::uint32_t id) {
    if (id < dense_.size()) return dense_[id].get();
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }

  /// Stores `value` for `id` and returns a stable reference to it.
  T& put(std::uint32_t id, T value) {
    if (id < dense_.size()) {
      dense_[id] = std::make_unique<T>(std::move(value));
      return *dense_[id];
    }
    return sparse_.insert_or_assign(id, std::move(value)).first->second;
  }

 private:
  std::vector<std::unique_ptr<T>> dense_;
  std::unordered_map<std::uint32_t, T> sparse_;  // node-based: stable references
};

}  // namespace parlot::tool
