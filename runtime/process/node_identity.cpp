#include "process/node_identity.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "io/raw_io.h"

namespace parlot::runtime {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

// A non-negative whole number in `s`, or -1.
long long whole_number(const char* s) {
  if (s == nullptr) return -1;
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  return *end == '\0' && v >= 0 ? v : -1;
}

// Copies `s` into `out` with bytes outside [A-Za-z0-9._-] made '_'.
void copy_name(const char* s, char* out, std::size_t cap) {
  std::size_t i = 0;
  for (; s[i] != '\0' && i + 1 < cap; ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    out[i] = ok ? c : '_';
  }
  out[i] = '\0';
  // "." and ".." are no names for a file.
  if (std::strcmp(out, ".") == 0 || std::strcmp(out, "..") == 0) out[0] = '_';
}

}  // namespace

void node_name_from_environment(char* out, std::size_t cap) {
  if (const char* n = env("PARLOT_NODE")) return copy_name(n, out, cap);
  const long long k = whole_number(env("PARLOT_NODE_RANKS"));
  if (k > 0) {
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
      const long long rank = whole_number(env(name));
      if (rank < 0) continue;
      char buf[64];
      TextBuilder t(buf, sizeof buf);
      t.str("ranks-").u64(static_cast<unsigned long long>(rank / k * k));
      return copy_name(t.c_str(), out, cap);
    }
  }
  if (const char* n = env("SLURMD_NODENAME")) return copy_name(n, out, cap);
  utsname u;
  if (uname(&u) == 0 && u.nodename[0] != '\0') return copy_name(u.nodename, out, cap);
  copy_name("localhost", out, cap);
}

bool node_layout_from_environment() {
  if (const char* l = env("PARLOT_LAYOUT")) {
    if (std::strcmp(l, "node") == 0) return true;
    if (std::strcmp(l, "process") == 0) return false;
    char buf[200];
    TextBuilder msg(buf, sizeof buf);
    msg.str("ignoring PARLOT_LAYOUT='").str(l).str("': expected node or process");
    log_line(msg.c_str());
  }
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (whole_number(env(name)) > 1) return true;
  }
  return false;
}

}  // namespace parlot::runtime
