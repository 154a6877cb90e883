// Reading a process directory's "libcalls" file (docs/FORMAT.md).
#include <algorithm>
#include <map>
#include <set>

#include "parlot/trace_reader.h"
#include "text_file.h"

namespace parlot {

const LibraryCalls::Function* LibraryCalls::find(std::uint64_t address) const {
  const auto it = std::lower_bound(
      functions.begin(), functions.end(), address,
      [](const std::pair<std::uint64_t, Function>& f, std::uint64_t a) { return f.first < a; });
  return it != functions.end() && it->first == address ? &it->second : nullptr;
}

namespace {

// A field of a line and its byte offset in the line.
struct Field {
  std::string text;
  std::size_t at;
};

// The space-separated fields of `text` (at most `n`; the last takes the rest
// of the line, spaces included).
std::vector<Field> fields(const std::string& text, std::size_t n) {
  std::vector<Field> out;
  std::size_t at = 0;
  while (out.size() + 1 < n) {
    const std::size_t space = text.find(' ', at);
    if (space == std::string::npos) break;
    out.push_back({text.substr(at, space - at), at});
    at = space + 1;
  }
  out.push_back({text.substr(at), at});
  return out;
}

}  // namespace

LibraryCalls read_library_calls(const std::filesystem::path& file) {
  const auto lines = detail::read_text_file(file, format::kLibcallsMagicLine, 64 << 20);
  LibraryCalls calls;
  std::map<std::uint64_t, LibraryCalls::Function> functions;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const detail::TextLine& line = lines[i];
    const std::uint64_t at = line.offset;
    const auto number = [&](const Field& f, int base, const char* what) {
      return detail::parse_u64(f.text, base, file, at + f.at, what);
    };
    const auto text = [&](const Field& f) { return detail::unescape(f.text, file, at + f.at); };
    if (line.text.starts_with("patched ")) {
      const auto f = fields(line.text, 3);
      if (f.size() != 3) throw FormatError(file, at, "patched: expected 2 counts");
      calls.patched = number(f[1], 10, "patched");
      calls.objects = number(f[2], 10, "objects");
    } else if (line.text.starts_with("left ")) {
      const auto f = fields(line.text, 3);
      if (f.size() != 3) throw FormatError(file, at, "left: expected a reason and a count");
      calls.left.emplace_back(f[1].text, number(f[2], 10, "left"));
    } else if (line.text.starts_with("stub ")) {
      const auto f = fields(line.text, 6);
      if (f.size() != 6) throw FormatError(file, at, "stub: expected 5 fields");
      LibraryCalls::Function fn;
      fn.name = text(f[3]);
      if (fn.name.empty()) throw FormatError(file, at + f[3].at, "stub: empty name");
      fn.version = f[4].text == "-" ? std::string() : text(f[4]);
      fn.library = text(f[5]);
      functions[number(f[1], 16, "stub address")] = std::move(fn);
    }
  }
  // A name shows its version only where the process has it in two versions.
  std::map<std::string, std::set<std::string>> versions;
  for (const auto& [address, fn] : functions) versions[fn.name].insert(fn.version);
  calls.functions.reserve(functions.size());
  for (auto& [address, fn] : functions) {
    fn.display =
        versions[fn.name].size() > 1 && !fn.version.empty() ? fn.name + "@" + fn.version : fn.name;
    calls.functions.emplace_back(address, std::move(fn));
  }
  return calls;
}

}  // namespace parlot
