#include "library_calls_text.h"

#include <fmt/core.h>

#include <utility>

#include "visible_text.h"

namespace parlot::tool {
namespace {

// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string reason_text(const std::string& key) {
  static const std::pair<const char*, const char*> kReasons[] = {
      {"glob_dat", "GLOB_DAT (function pointers, -fno-plt calls)"},
      {"returns_twice", "returns twice (setjmp, vfork, *context)"},
      {"reads_caller", "reads its caller (dlopen, dlsym)"},
      {"never_patched", "never patched (C library start, TLS resolver)"},
      {"interposed", "interposed by Parlot (sigaction, exit, ...)"},
      {"no_stub", "no entry stub left"},
      {"not_writable", "GOT not writable"},
      {"audit", "an audit module binds them (LD_AUDIT)"},
  };
  for (const auto& [k, text] : kReasons)
    if (key == k) return text;
  return visible_text(key);
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return grouped(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string describe_library_calls(const LibraryCalls& calls) {
  std::string text = fmt::format("library calls: {} patched in {}, {}",
                                 plural(calls.patched, "relocation", "relocations"),
                                 plural(calls.objects, "object", "objects"),
                                 plural(calls.functions.size(), "function", "functions"));
  std::uint64_t left = 0;
  std::string reasons;
  for (const auto& [key, n] : calls.left) {
    left += n;
    reasons += fmt::format("{}{} {}", reasons.empty() ? "" : ", ", grouped(n), reason_text(key));
  }
  if (left == 0) return text + "; none left";
  return text + fmt::format("; {} left: {}", grouped(left), reasons);
}

}  // namespace parlot::tool
