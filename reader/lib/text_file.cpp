#include "text_file.h"

#include <charconv>
#include <fstream>
#include <iterator>

#include "input_files.h"
#include "parlot/trace_reader.h"

namespace parlot {

FormatError::FormatError(std::filesystem::path file, std::uint64_t offset, const std::string& what)
    : std::runtime_error(file.string() + ": offset " + std::to_string(offset) + ": " + what),
      file_(std::move(file)),
      offset_(offset) {}

}  // namespace parlot

namespace parlot::detail {

std::vector<TextLine> read_text_file(const std::filesystem::path& file, const char* magic,
                                     std::uint64_t max_bytes) {
  std::size_t which = 0;
  return read_text_file(file, {magic}, max_bytes, which);
}

std::vector<TextLine> read_text_file(const std::filesystem::path& file,
                                     std::initializer_list<const char*> magics,
                                     std::uint64_t max_bytes, std::size_t& which) {
  std::error_code ec;
  if (!input_is_file(file)) throw FormatError(file, 0, "not a regular file");
  const std::uint64_t size = input_file_size(file, ec);
  if (ec) throw FormatError(file, 0, "cannot read file size: " + ec.message());
  if (size > max_bytes) {
    throw FormatError(file, max_bytes, "file larger than " + std::to_string(max_bytes) + " bytes");
  }
  const std::unique_ptr<std::istream> in = open_input(file);
  if (!*in) throw FormatError(file, 0, "cannot open file");
  std::string data(static_cast<std::size_t>(size), '\0');
  in->read(data.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in->gcount()) != size) {
    throw FormatError(file, static_cast<std::uint64_t>(in->gcount()), "file shrank while reading");
  }
  std::vector<TextLine> lines;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) {
      throw FormatError(file, pos, "last line has no newline (file cut short)");
    }
    lines.push_back({pos, data.substr(pos, nl - pos)});
    pos = nl + 1;
  }
  if (lines.empty()) throw FormatError(file, 0, "empty file");
  std::string expected;
  which = 0;
  for (const char* magic : magics) {
    if (lines[0].text == magic) return lines;
    expected += (which++ == 0 ? "'" : " or '") + std::string(magic) + "'";
  }
  throw FormatError(file, 0,
                    "bad magic line '" + lines[0].text.substr(0, 40) + "', expected " + expected);
}

KeyValue split_key_value(const TextLine& line, const std::filesystem::path& file) {
  const std::size_t sp = line.text.find(' ');
  if (sp == std::string::npos) throw FormatError(file, line.offset, "line without a value");
  return {line.text.substr(0, sp), line.text.substr(sp + 1), line.offset + sp + 1};
}

std::string unescape(const std::string& s, const std::filesystem::path& file,
                     std::uint64_t offset) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) throw FormatError(file, offset + i, "dangling backslash");
    switch (s[i]) {
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'x': {
        unsigned v = 0;
        if (i + 2 >= s.size() ||
            std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3) {
          throw FormatError(file, offset + i, "bad \\x escape");
        }
        out += static_cast<char>(v);
        i += 2;
        break;
      }
      default:
        throw FormatError(file, offset + i, "unknown escape");
    }
  }
  return out;
}

std::uint64_t parse_u64(const std::string& s, int base, const std::filesystem::path& file,
                        std::uint64_t offset, const char* what) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    throw FormatError(file, offset, std::string("bad ") + what + " '" + s.substr(0, 40) + "'");
  }
  return v;
}

}  // namespace parlot::detail
