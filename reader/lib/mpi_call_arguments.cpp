// Kind-3 side records: the arguments of one MPI call (docs/FORMAT.md
// "Kind 3, MPI call"). Never trusts its input.
#include <algorithm>
#include <array>
#include <string>

#include "parlot/mpi_op.h"
#include "parlot/trace_reader.h"
#include "varint.h"

namespace parlot {
namespace {

using detail::read_varint;

std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

}  // namespace

std::string mpi_field_name(unsigned bit) {
  static constexpr std::array<const char*, 17> kNames{
      "dest",     "source",        "tag",        "bytes",         "comm",       "comm_size",
      "root",     "recv_tag",      "recv_bytes", "status_source", "status_tag", "status_bytes",
      "new_comm", "new_comm_size", "completed",  "requests",      "op"};
  if (bit < kNames.size()) return kNames[bit];
  return "field" + std::to_string(bit);
}

std::string mpi_op_name(std::int64_t code) {
  static constexpr std::array<const char*, 15> kOps{
      "user-defined", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
      "MPI_LAND",     "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
      "MPI_BXOR",     "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
  if (code >= 0 && code < static_cast<std::int64_t>(kOps.size())) return kOps[code];
  return "op" + std::to_string(code);
}

MpiCallArguments decode_mpi_call(const std::filesystem::path& file, std::uint64_t offset,
                                 std::uint64_t event_index, std::span<const std::uint8_t> data) {
  MpiCallArguments a;
  a.event_index = event_index;
  const std::uint8_t* const begin = data.data();
  const std::uint8_t* p = begin;
  const std::uint8_t* const end = begin + data.size();
  auto fail = [&](const std::string& what) -> FormatError {
    return FormatError(file, offset + static_cast<std::uint64_t>(p - begin),
                       "MPI call record: " + what);
  };
  std::uint64_t mask = 0;
  if (!read_varint(p, end, mask)) throw fail("presence mask cut short");
  if (mask >> format::kMpiFieldBits != 0) throw fail("presence mask has more than 32 bits");
  a.mask = static_cast<std::uint32_t>(mask);
  constexpr unsigned kCompleted = static_cast<unsigned>(format::MpiField::kCompleted);
  for (unsigned bit = 0; bit < format::kMpiFieldBits; ++bit) {
    if (((mask >> bit) & 1u) == 0) continue;
    if (bit != kCompleted) {
      std::uint64_t v = 0;
      if (!read_varint(p, end, v)) throw fail("field " + mpi_field_name(bit) + " cut short");
      a.value[bit] = unzigzag(v);
      continue;
    }
    std::uint64_t n = 0;
    if (!read_varint(p, end, n)) throw fail("completion count cut short");
    // Each completion takes at least 4 bytes: no allocation beyond the data.
    if (n > static_cast<std::uint64_t>(end - p) / 4) {
      throw fail("completion count " + std::to_string(n) + " exceeds the record");
    }
    a.completed.resize(static_cast<std::size_t>(n));
    for (auto& c : a.completed) {
      std::int64_t* fields[] = {&c.index, &c.source, &c.tag, &c.bytes};
      for (std::int64_t* f : fields) {
        std::uint64_t v = 0;
        if (!read_varint(p, end, v)) throw fail("completion cut short");
        *f = unzigzag(v);
      }
    }
  }
  if (p != end) throw fail(std::to_string(end - p) + " bytes left over");
  return a;
}

const MpiCallArguments* ThreadTraceSummary::mpi_call_at(std::uint64_t event_index) const {
  const auto it = std::lower_bound(
      mpi_calls.begin(), mpi_calls.end(), event_index,
      [](const MpiCallArguments& a, std::uint64_t i) { return a.event_index < i; });
  return it != mpi_calls.end() && it->event_index == event_index ? &*it : nullptr;
}

const MpiCallArguments* ThreadTraceSummary::mpi_call_or_begun_at(std::uint64_t event_index) const {
  if (const MpiCallArguments* done = mpi_call_at(event_index)) return done;
  const auto it = std::lower_bound(
      mpi_calls_begun.begin(), mpi_calls_begun.end(), event_index,
      [](const MpiCallArguments& a, std::uint64_t i) { return a.event_index < i; });
  return it != mpi_calls_begun.end() && it->event_index == event_index ? &*it : nullptr;
}

}  // namespace parlot
