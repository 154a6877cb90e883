#include "mpi_arguments_text.h"

#include <fmt/format.h>

#include "parlot/mpi_op.h"

namespace parlot::tool {
namespace {

constexpr unsigned kCompleted = static_cast<unsigned>(format::MpiField::kCompleted);
constexpr unsigned kOp = kMpiOpField;

}  // namespace

std::string mpi_arguments_text(const MpiCallArguments& a) {
  std::string out;
  for (unsigned bit = 0; bit < format::kMpiFieldBits; ++bit) {
    if (((a.mask >> bit) & 1u) == 0) continue;
    if (!out.empty()) out += ", ";
    out += mpi_field_name(bit);
    out += '=';
    if (bit == kOp) {
      out += mpi_op_name(a.value[bit]);
      continue;
    }
    if (bit != kCompleted) {
      out += std::to_string(a.value[bit]);
      continue;
    }
    out += '[';
    for (std::size_t i = 0; i < a.completed.size(); ++i) {
      const auto& c = a.completed[i];
      out += fmt::format("{}{}: source={} tag={} bytes={}", i ? ", " : "", c.index, c.source, c.tag,
                         c.bytes);
    }
    out += ']';
  }
  return out;
}

std::string mpi_arguments_json(const MpiCallArguments& a) {
  std::string out = "{";
  for (unsigned bit = 0; bit < format::kMpiFieldBits; ++bit) {
    if (((a.mask >> bit) & 1u) == 0) continue;
    if (out.size() > 1) out += ',';
    out += fmt::format("\"{}\":", mpi_field_name(bit));
    if (bit != kCompleted) {
      out += std::to_string(a.value[bit]);
      continue;
    }
    out += '[';
    for (std::size_t i = 0; i < a.completed.size(); ++i) {
      const auto& c = a.completed[i];
      out += fmt::format("{}{{\"index\":{},\"source\":{},\"tag\":{},\"bytes\":{}}}", i ? "," : "",
                         c.index, c.source, c.tag, c.bytes);
    }
    out += ']';
  }
  return out + "}";
}

std::string mpi_call_text(const std::string& display_name, const MpiCallArguments& a) {
  std::string name = display_name;
  if (name.size() >= 2 && name.compare(name.size() - 2, 2, "()") == 0) {
    name.resize(name.size() - 2);
  }
  return name + "(" + mpi_arguments_text(a) + ")";
}

}  // namespace parlot::tool
