#include "reduced_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "lib/text_file.h"
#include "parlot/trace_reader.h"

namespace parlot::tool {

namespace {

constexpr const char* kMagic = "parlot-reduced 1";
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 30;

std::vector<std::string> fields(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

/// "0,2-39,41" -> 0, 2, ..., 39, 41.
std::vector<std::uint64_t> parse_ranges(const std::string& text, const std::filesystem::path& file,
                                        std::uint64_t offset) {
  constexpr std::uint64_t kMaxMembers = std::uint64_t{1} << 26;
  std::vector<std::uint64_t> out;
  std::istringstream in(text);
  for (std::string range; std::getline(in, range, ',');) {
    const auto dash = range.find('-');
    const std::uint64_t lo =
        detail::parse_u64(range.substr(0, dash), 10, file, offset, "iteration");
    const std::uint64_t hi =
        dash == std::string::npos
            ? lo
            : detail::parse_u64(range.substr(dash + 1), 10, file, offset, "iteration");
    if (hi < lo || (!out.empty() && lo <= out.back()) || hi >= kMaxMembers ||
        out.size() + (hi - lo) >= kMaxMembers) {
      throw FormatError(file, offset, "bad iteration range '" + range + "'");
    }
    for (std::uint64_t k = lo; k <= hi; ++k) out.push_back(k);
  }
  return out;
}

/// The inverse of parse_ranges.
std::string ranges(const std::vector<std::uint64_t>& members) {
  std::string out;
  for (std::size_t i = 0; i < members.size();) {
    std::size_t j = i;
    while (j + 1 < members.size() && members[j + 1] == members[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(members[i]);
    if (j > i) out += "-" + std::to_string(members[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::optional<ReducedProcess> read_reduced(const std::filesystem::path& directory) {
  const auto file = directory / kReducedFileName;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::nullopt;
  const auto lines = detail::read_text_file(file, kMagic, kMaxBytes);
  ReducedProcess r;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& line = lines[i];
    const auto f = fields(line.text);
    if (f.empty()) continue;
    auto num = [&](std::size_t k, const char* what) {
      return detail::parse_u64(f[k], 10, file, line.offset, what);
    };
    if (f[0] == "metric" && f.size() == 3) {
      r.metric = f[1];
      try {
        r.threshold = std::stod(f[2]);
      } catch (const std::exception&) {
        throw FormatError(file, line.offset, "bad threshold '" + f[2] + "'");
      }
    } else if (f[0] == "segment" && f.size() == 5) {
      auto& list = r.threads[num(1, "thread index")];
      ReducedSegment s{num(2, "first event"), num(3, "end event"), {}};
      if (s.end < s.first) throw FormatError(file, line.offset, "segment ends before it starts");
      if (!list.empty() && s.first < list.back().end) {
        throw FormatError(file, line.offset, "segment overlaps the one before");
      }
      s.members = parse_ranges(f[4], file, line.offset);
      list.push_back(std::move(s));
    }  // other lines: keys added later, skipped
  }
  return r;
}

void write_reduced(const std::filesystem::path& directory, const ReducedProcess& r) {
  const auto file = directory / kReducedFileName;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << kMagic << '\n' << fmt::format("metric {} {}\n", r.metric, r.threshold);
  for (const auto& [index, segments] : r.threads) {
    for (const auto& s : segments) {
      out << fmt::format("segment {} {} {} {}\n", index, s.first, s.end, ranges(s.members));
    }
  }
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace parlot::tool
