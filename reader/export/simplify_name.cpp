#include "simplify_name.h"

#include <array>

namespace parlot::exporter {
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

/// Length of the operator token starting at s[at] (just after "operator"),
/// for the operators spelled with '<' or '>'; 0 for others.
std::size_t angle_operator_length(const std::string& s, std::size_t at) {
  static constexpr std::array<std::string_view, 7> kOps = {"<=>", "<<=", ">>=", "<<",
                                                           "<=",  "->",  "<"};
  for (const auto op : kOps) {
    if (s.compare(at, op.size(), op) == 0) return op.size();
  }
  for (const auto op : {std::string_view(">="), std::string_view(">>"), std::string_view(">")}) {
    if (s.compare(at, op.size(), op) == 0) return op.size();
  }
  return 0;
}

}  // namespace

std::string simplify_name(std::string_view name) {
  std::string s(name);
  replace_all(s, "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
              "std::string");
  replace_all(s, "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
              "std::string");
  replace_all(s, "std::__cxx11::", "std::");
  replace_all(s, "std::__1::", "std::");
  replace_all(s, "[abi:cxx11]", "");
  std::string out;
  out.reserve(s.size());
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 8, "operator") == 0 && depth == 0) {
      std::size_t j = i + 8;
      while (j < s.size() && s[j] == ' ') ++j;
      const std::size_t n = angle_operator_length(s, j);
      out.append(s, i, j + n - i);
      i = j + n - 1;
      continue;
    }
    const char c = s[i];
    if (c == '<') {
      if (depth++ == 0) out += "<>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

}  // namespace parlot::exporter
