#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "input_files.h"
#include "parlot/trace_reader.h"
#include "text_file.h"

namespace parlot {

ProcessMetadata read_process_metadata(const std::filesystem::path& file) {
  const auto lines = detail::read_text_file(file, format::kProcessMagicLine, 1 << 20);
  ProcessMetadata m;
  bool have_pid = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const detail::KeyValue kv = detail::split_key_value(lines[i], file);
    const std::string& key = kv.key;
    const std::string& value = kv.value;
    const std::uint64_t at = kv.at;
    auto number = [&] { return detail::parse_u64(value, 10, file, at, key.c_str()); };
    if (key == "pid") {
      m.pid = number();
      have_pid = true;
    } else if (key == "ppid") {
      m.ppid = number();
    } else if (key == "rank") {
      m.rank = value == "-" ? "" : detail::unescape(value, file, at);
    } else if (key == "host") {
      m.host = detail::unescape(value, file, at);
    } else if (key == "executable") {
      m.executable = detail::unescape(value, file, at);
    } else if (key == "arg") {
      m.arguments.push_back(detail::unescape(value, file, at));
    } else if (key == "start_ns") {
      m.start_ns = number();
    } else if (key == "end_ns") {
      m.end_ns = number();
    } else if (key == "compress") {
      m.compress = number() != 0;
    } else if (key == "discard") {
      m.discard = number() != 0;
    } else if (key == "threads") {
      m.threads = number();
    } else if (key == "functions") {
      m.functions = number();
    } else if (key == "clock_events") {
      m.clock_events = number();
    } else if (key == "clock_tolerance_ns") {
      m.clock_tolerance_ns = number();
    } else if (key == "clock_tick_ns") {
      m.clock_tick_ns = number();
    } else if (key == "clock_tick_late_ns") {
      m.clock_tick_late_ns = number();
    } else if (key == "load_bias") {
      // <index> <bias, hex>
      const std::size_t sp = value.find(' ');
      if (sp == std::string::npos) throw FormatError(file, at, "load_bias line without a bias");
      const std::uint64_t index =
          detail::parse_u64(value.substr(0, sp), 10, file, at, "object index");
      const std::uint64_t bias =
          detail::parse_u64(value.substr(sp + 1), 16, file, at + sp + 1, "load bias");
      if (index >= format::kNoObject) throw FormatError(file, at, "object index out of range");
      const auto [it, added] = m.load_biases.emplace(static_cast<std::uint32_t>(index), bias);
      if (!added && it->second != bias) {
        throw FormatError(file, at, "two load biases for object " + std::to_string(index));
      }
    } else if (key == "write_error") {
      m.write_error = static_cast<int>(std::min<std::uint64_t>(number(), 1u << 30));
    }  // unknown keys are skipped: later minor additions stay readable
  }
  if (!have_pid) throw FormatError(file, 0, "no pid line");
  return m;
}

CrashRecord read_crash_record(const std::filesystem::path& file) {
  const auto lines = detail::read_text_file(file, format::kCrashMagicLine, 1 << 20);
  CrashRecord c;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const detail::KeyValue kv = detail::split_key_value(lines[i], file);
    const std::string& key = kv.key;
    const std::string& value = kv.value;
    const std::uint64_t at = kv.at;
    auto number = [&](int base) { return detail::parse_u64(value, base, file, at, key.c_str()); };
    if (key == "signal") {
      c.signal = static_cast<int>(number(10) & 0xff);
    } else if (key == "name") {
      c.name = detail::unescape(value, file, at);
    } else if (key == "code") {
      // si_code may be negative (sent by kill/raise/abort).
      c.code =
          value.starts_with('-')
              ? -static_cast<int>(detail::parse_u64(value.substr(1), 10, file, at, "code") & 0xffff)
              : static_cast<int>(number(10) & 0xffff);
    } else if (key == "address") {
      c.address = number(16);
    } else if (key == "tid") {
      c.tid = number(10);
    } else if (key == "in_tracer") {
      c.in_tracer = number(10) != 0;
    } else if (key == "frame") {
      if (c.frames.size() < 1024) c.frames.push_back(number(16));
    }
  }
  return c;
}

namespace {

// The biases of the process file beside `file` (a process directory's
// loadmap or functions file).
LoadBiases biases_beside(const std::filesystem::path& file) {
  return read_process_metadata(file.parent_path() / "process").load_biases;
}

// The positions of the first four spaces of load-map line `text` (at byte
// `offset` of `file`) into `fields`: a line has five fields, the last (the
// path) may hold spaces. Throws FormatError when there are fewer.
void split_load_map_line(const std::filesystem::path& file, std::uint64_t offset,
                         const std::string& text, std::size_t (&fields)[4]) {
  std::size_t pos = 0;
  for (auto& f : fields) {
    f = text.find(' ', pos);
    if (f == std::string::npos) throw FormatError(file, offset, "load map line has too few fields");
    pos = f + 1;
  }
}

// A version-1 load map (run-time addresses; the runtime wrote the map at
// start and at end).
LoadMap read_load_map_v1(const std::filesystem::path& file,
                         const std::vector<detail::TextLine>& lines) {
  LoadMap map;
  // Keep each distinct line once (FORMAT.md), hashed: O(n) expected for n
  // lines.
  std::unordered_set<std::string_view> seen;
  seen.reserve(lines.size());
  const auto entry_hash = [&map](std::size_t i) {
    const LoadedObject& o = map[i];
    std::size_t h = std::hash<std::string>{}(o.path);
    for (const std::uint64_t v : {o.start, o.end, o.load_bias}) {
      h ^= std::hash<std::uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    }
    return h ^ std::hash<std::string>{}(o.build_id);
  };
  const auto entry_equal = [&map](std::size_t a, std::size_t b) {
    const LoadedObject& x = map[a];
    const LoadedObject& y = map[b];
    return x.start == y.start && x.end == y.end && x.load_bias == y.load_bias &&
           x.build_id == y.build_id && x.path == y.path;
  };
  std::unordered_set<std::size_t, decltype(entry_hash), decltype(entry_equal)> entries(
      lines.size(), entry_hash, entry_equal);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& [offset, text] = lines[i];
    if (!seen.insert(text).second) continue;
    // start end bias build-id path (the path may contain spaces)
    std::size_t fields[4];
    split_load_map_line(file, offset, text, fields);
    LoadedObject o;
    o.start = detail::parse_u64(text.substr(0, fields[0]), 16, file, offset, "start address");
    o.end = detail::parse_u64(text.substr(fields[0] + 1, fields[1] - fields[0] - 1), 16, file,
                              offset + fields[0] + 1, "end address");
    o.load_bias = detail::parse_u64(text.substr(fields[1] + 1, fields[2] - fields[1] - 1), 16, file,
                                    offset + fields[1] + 1, "load bias");
    o.build_id = text.substr(fields[2] + 1, fields[3] - fields[2] - 1);
    if (o.build_id == "-") o.build_id.clear();
    o.path = detail::unescape(text.substr(fields[3] + 1), file, offset + fields[3] + 1);
    if (o.end <= o.start) throw FormatError(file, offset, "empty address range");
    // Lines that differ as text can still be the same entry (leading zeros,
    // escapes): keep each distinct entry once too.
    map.push_back(std::move(o));
    if (!entries.insert(map.size() - 1).second) map.pop_back();
  }
  return map;
}

// A version-2 load map: `<index> <link start> <link end> <build id>
// <path>`, indices 0, 1, 2, ... in order; each object's run-time range is
// its link-time range moved by its bias.
LoadMap read_load_map_v2(const std::filesystem::path& file,
                         const std::vector<detail::TextLine>& lines, const LoadBiases& biases) {
  LoadMap map;
  map.reserve(lines.size() - 1);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& [offset, text] = lines[i];
    std::size_t fields[4];
    split_load_map_line(file, offset, text, fields);
    const std::uint64_t index =
        detail::parse_u64(text.substr(0, fields[0]), 10, file, offset, "object index");
    if (index != map.size()) {
      throw FormatError(file, offset,
                        "object index " + std::to_string(index) + " out of order (expected " +
                            std::to_string(map.size()) + ")");
    }
    const std::uint64_t start =
        detail::parse_u64(text.substr(fields[0] + 1, fields[1] - fields[0] - 1), 16, file,
                          offset + fields[0] + 1, "start address");
    const std::uint64_t end =
        detail::parse_u64(text.substr(fields[1] + 1, fields[2] - fields[1] - 1), 16, file,
                          offset + fields[1] + 1, "end address");
    if (end <= start) throw FormatError(file, offset, "empty address range");
    const auto bias = biases.find(static_cast<std::uint32_t>(index));
    if (bias == biases.end()) {
      throw FormatError(
          file, offset,
          "object " + std::to_string(index) + " has no load_bias line in the process file");
    }
    LoadedObject o;
    o.load_bias = bias->second;
    o.start = start + o.load_bias;
    o.end = end + o.load_bias;
    if (o.end <= o.start) throw FormatError(file, offset, "address range wraps with its load bias");
    o.build_id = text.substr(fields[2] + 1, fields[3] - fields[2] - 1);
    if (o.build_id == "-") o.build_id.clear();
    o.path = detail::unescape(text.substr(fields[3] + 1), file, offset + fields[3] + 1);
    map.push_back(std::move(o));
  }
  return map;
}

}  // namespace

LoadMap read_load_map(const std::filesystem::path& file, const LoadBiases& biases) {
  std::size_t version = 0;
  const auto lines = detail::read_text_file(
      file, {format::kLoadMapMagicLine, format::kLoadMapV1MagicLine}, 64 << 20, version);
  return version == 0 ? read_load_map_v2(file, lines, biases) : read_load_map_v1(file, lines);
}

LoadMap read_load_map(const std::filesystem::path& file) {
  std::size_t version = 0;
  const auto lines = detail::read_text_file(
      file, {format::kLoadMapMagicLine, format::kLoadMapV1MagicLine}, 64 << 20, version);
  return version == 0 ? read_load_map_v2(file, lines, biases_beside(file))
                      : read_load_map_v1(file, lines);
}

namespace {

// The function table's header, checked; `size` is the file's size.
format::FunctionsHeader read_functions_header(const std::filesystem::path& file,
                                              std::unique_ptr<std::istream>& input,
                                              std::uint64_t& size) {
  if (!detail::input_is_file(file)) throw FormatError(file, 0, "not a regular file");
  input = detail::open_input(file);
  std::istream& in = *input;
  if (!in) throw FormatError(file, 0, "cannot open file");
  format::FunctionsHeader h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  if (in.gcount() != sizeof h) throw FormatError(file, 0, "file shorter than its header");
  if (std::memcmp(h.magic, format::kFunctionsMagic, sizeof h.magic) != 0) {
    throw FormatError(file, 0, "bad magic (not a Parlot function table)");
  }
  if (h.version < format::kOldestVersion || h.version > format::kFunctionsVersion) {
    throw FormatError(file, 8, "unsupported version " + std::to_string(h.version));
  }
  in.seekg(0, std::ios::end);
  size = static_cast<std::uint64_t>(in.tellg());
  return h;
}

std::vector<std::uint64_t> read_function_entries(const std::filesystem::path& file,
                                                 std::istream& in, format::FunctionsHeader h,
                                                 std::uint64_t size, const LoadBiases* biases,
                                                 std::uint64_t max_count) {
  const bool relative = h.version > format::kFunctionsAddressVersion;
  const std::uint64_t entry = relative ? sizeof(format::FunctionEntry) : 8;
  const std::uint64_t present = (size - sizeof h) / entry;
  // count 0: the process did not finish; the entries written so far run to
  // the end of the file (a last entry cut short is left out).
  const std::uint64_t count = h.count == 0 ? present : h.count;
  if (count > max_count || (h.count != 0 && (h.count > (size - sizeof h) / entry ||
                                             size != sizeof h + h.count * entry))) {
    throw FormatError(file, 16,
                      "function count " + std::to_string(h.count) +
                          " does not match the file size " + std::to_string(size));
  }
  std::vector<std::uint64_t> addresses(count);
  in.seekg(sizeof h);
  if (!relative) {
    in.read(reinterpret_cast<char*>(addresses.data()), static_cast<std::streamsize>(count * 8));
    if (static_cast<std::uint64_t>(in.gcount()) != count * 8) {
      throw FormatError(file, sizeof h, "cannot read the address table");
    }
    return addresses;
  }
  std::vector<format::FunctionEntry> entries(count);
  in.read(reinterpret_cast<char*>(entries.data()), static_cast<std::streamsize>(count * entry));
  if (static_cast<std::uint64_t>(in.gcount()) != count * entry) {
    throw FormatError(file, sizeof h, "cannot read the function entries");
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const format::FunctionEntry& e = entries[i];
    if (e.object == format::kNoObject) {
      addresses[i] = e.offset;
      continue;
    }
    const auto bias = biases->find(e.object);
    if (bias == biases->end()) {
      throw FormatError(file, sizeof h + i * entry,
                        "function ID " + std::to_string(i + 1) + ": object " +
                            std::to_string(e.object) +
                            " has no load_bias line in the process file");
    }
    addresses[i] = bias->second + e.offset;
  }
  return addresses;
}

}  // namespace

std::vector<std::uint64_t> read_function_table(const std::filesystem::path& file,
                                               const LoadBiases& biases, std::uint64_t max_count) {
  std::unique_ptr<std::istream> in;
  std::uint64_t size = 0;
  const format::FunctionsHeader h = read_functions_header(file, in, size);
  return read_function_entries(file, *in, h, size, &biases, max_count);
}

std::vector<std::uint64_t> read_function_table(const std::filesystem::path& file,
                                               std::uint64_t max_count) {
  std::unique_ptr<std::istream> in;
  std::uint64_t size = 0;
  const format::FunctionsHeader h = read_functions_header(file, in, size);
  LoadBiases biases;
  if (h.version > format::kFunctionsAddressVersion) biases = biases_beside(file);
  return read_function_entries(file, *in, h, size, &biases, max_count);
}

}  // namespace parlot
