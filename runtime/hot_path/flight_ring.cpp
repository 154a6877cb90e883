#include "hot_path/flight_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace parlot::runtime {

bool FlightRing::map(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t n = (bytes + page - 1) & ~(page - 1);
  void* p =
      mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  base_ = static_cast<std::uint8_t*>(p);
  map_bytes_ = n;
  cap_ = bytes;
  tail_ = used_ = 0;
  return true;
}

void FlightRing::unmap() {
  if (base_ != nullptr) munmap(base_, map_bytes_);
  base_ = nullptr;
  cap_ = map_bytes_ = tail_ = used_ = 0;
}

void FlightRing::copy_out(std::size_t offset, void* out, std::size_t n) const {
  const std::size_t at = (tail_ + offset) % cap_;
  const std::size_t first = std::min(n, cap_ - at);
  std::memcpy(out, base_ + at, first);
  if (first < n) std::memcpy(static_cast<std::uint8_t*>(out) + first, base_, n - first);
}

void FlightRing::copy_in(const void* data, std::size_t n) {
  const std::size_t at = (tail_ + used_) % cap_;
  const std::size_t first = std::min(n, cap_ - at);
  std::memcpy(base_ + at, data, first);
  if (first < n) std::memcpy(base_, static_cast<const std::uint8_t*>(data) + first, n - first);
  used_ += n;
}

format::BlockHeader FlightRing::header_at(Position p) const {
  format::BlockHeader h{};
  copy_out(p, &h, sizeof h);
  return h;
}

FlightRing::Position FlightRing::next(Position p) const {
  return p + sizeof(format::BlockHeader) + header_at(p).payload_bytes;
}

void FlightRing::copy_payload(Position p, std::size_t skip, void* out, std::size_t n) const {
  copy_out(p + sizeof(format::BlockHeader) + skip, out, n);
}

void FlightRing::payload_pieces(Position p, const std::uint8_t** a, std::size_t* an,
                                const std::uint8_t** b, std::size_t* bn) const {
  const std::size_t n = header_at(p).payload_bytes;
  const std::size_t at = (tail_ + p + sizeof(format::BlockHeader)) % cap_;
  const std::size_t first = std::min(n, cap_ - at);
  *a = base_ + at;
  *an = first;
  *b = base_;
  *bn = n - first;
}

bool FlightRing::push(format::BlockHeader h, RingBlock what, const void* payload, std::size_t n) {
  const std::size_t need = sizeof h + n;
  if (base_ == nullptr || need > cap_) return false;
  while (cap_ - used_ < need) {  // drop the oldest blocks
    const std::size_t oldest = next(0);
    tail_ = (tail_ + oldest) % cap_;
    used_ -= oldest;
  }
  h.sequence = static_cast<std::uint64_t>(what);
  copy_in(&h, sizeof h);
  copy_in(payload, n);
  return true;
}

}  // namespace parlot::runtime
