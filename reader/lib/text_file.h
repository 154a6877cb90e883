// Line-oriented reading of the runtime's text files ("process", "loadmap"):
// bounded line length, escapes undone, errors with file and offset.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace parlot::detail {

/// One line of a text file and the byte offset where it starts.
struct TextLine {
  std::uint64_t offset;
  std::string text;
};

/// Reads a whole text file of at most `max_bytes` bytes into lines and
/// checks that the first line is `magic`. Throws FormatError.
std::vector<TextLine> read_text_file(const std::filesystem::path& file, const char* magic,
                                     std::uint64_t max_bytes);

/// Reads a whole text file of at most `max_bytes` bytes into lines and
/// checks that the first line is one of `magics` (the versions the caller
/// reads); `which` is set to the index in `magics` of the one it is.
/// Throws FormatError (offset 0, naming the line and every expected one).
std::vector<TextLine> read_text_file(const std::filesystem::path& file,
                                     std::initializer_list<const char*> magics,
                                     std::uint64_t max_bytes, std::size_t& which);

/// A "key value" line of a metadata file; `at` is the value's byte offset.
struct KeyValue {
  std::string key;
  std::string value;
  std::uint64_t at;
};

/// Splits `line` at its first space. Throws FormatError when it has none.
KeyValue split_key_value(const TextLine& line, const std::filesystem::path& file);

/// Undoes the runtime's escapes (\\, \n, \r, \t, \xNN). Throws FormatError
/// (with `file`, `offset`) on a malformed escape.
std::string unescape(const std::string& s, const std::filesystem::path& file, std::uint64_t offset);

/// Parses an unsigned integer in `base`; throws FormatError when `s` is not one.
std::uint64_t parse_u64(const std::string& s, int base, const std::filesystem::path& file,
                        std::uint64_t offset, const char* what);

}  // namespace parlot::detail
