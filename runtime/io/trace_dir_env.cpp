#include "io/trace_dir_env.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errno_keeper.h"
#include "io/raw_io.h"

extern char** environ;

namespace parlot::runtime {
namespace {

constexpr char kName[] = "PARLOT_DIR=";
constexpr std::size_t kNameBytes = sizeof kName - 1;

// The current directory when the runtime was loaded; "" when unknown.
char g_start_dir[1024] = "";
// "PARLOT_DIR=<absolute>": the process's own entry, when it was relative.
char g_environ_entry[kNameBytes + 1024] = "";

bool is_relative_trace_dir_entry(const char* entry) {
  return std::strncmp(entry, kName, kNameBytes) == 0 && entry[kNameBytes] != '\0' &&
         entry[kNameBytes] != '/';
}

// Builds "PARLOT_DIR=<absolute>" for the entry `entry` into `out`.
bool absolute_entry(const char* entry, char* out, std::size_t cap) {
  if (cap <= kNameBytes) return false;
  std::memcpy(out, kName, kNameBytes);
  return absolute_trace_dir(entry + kNameBytes, out + kNameBytes, cap - kNameBytes) == 0;
}

// Before the program's constructors: the directory it was started in, and
// its own PARLOT_DIR entry made absolute in place (the pointer in environ
// replaced; the program's strings untouched), so that what it starts with
// its environment (system(), popen(), posix_spawn(), exec) writes its
// trace where this process does.
[[gnu::constructor(101)]] void capture_start_directory() {
  const ErrnoKeeper keep;
  if (syscall(SYS_getcwd, g_start_dir, sizeof g_start_dir) <= 0 || g_start_dir[0] != '/') {
    g_start_dir[0] = '\0';
    return;
  }
  if (environ == nullptr) return;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!is_relative_trace_dir_entry(*e)) continue;
    if (absolute_entry(*e, g_environ_entry, sizeof g_environ_entry)) *e = g_environ_entry;
    break;  // getenv takes the first
  }
}

}  // namespace

int absolute_trace_dir(const char* dir, char* out, std::size_t cap) {
  TextBuilder text(out, cap);
  if (dir[0] != '/') {
    char cwd[1024];
    const char* base = g_start_dir;
    if (base[0] == '\0') {
      if (syscall(SYS_getcwd, cwd, sizeof cwd) <= 0) return errno;
      base = cwd;
    }
    while (dir[0] == '.' && dir[1] == '/') dir += 2;
    text.str(base);
    if (std::strcmp(base, "/") != 0) text.ch('/');
  }
  text.str(dir).c_str();
  return text.truncated() ? ENAMETOOLONG : 0;
}

ExecEnvironment::ExecEnvironment(char* const* envp) : envp_(envp) {
  if (envp == nullptr) return;
  const ErrnoKeeper keep;  // the exec's errno is the program's
  std::size_t n = 0, relative = ~std::size_t{0};
  for (; envp[n] != nullptr; ++n) {
    if (relative == ~std::size_t{0} && is_relative_trace_dir_entry(envp[n])) relative = n;
  }
  if (relative == ~std::size_t{0}) return;
  // The pointers, then the new entry.
  const std::size_t pointers = (n + 1) * sizeof(char*);
  const std::size_t bytes = pointers + sizeof g_environ_entry;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return;  // passed on as it is
  auto** copy = static_cast<char**>(m);
  char* entry = static_cast<char*>(m) + pointers;
  if (!absolute_entry(envp[relative], entry, sizeof g_environ_entry)) {
    munmap(m, bytes);
    return;
  }
  std::memcpy(copy, envp, pointers);  // the terminating null included
  copy[relative] = entry;
  envp_ = copy;
  mapped_ = m;
  mapped_bytes_ = bytes;
}

ExecEnvironment::~ExecEnvironment() {
  if (mapped_ != nullptr) {
    const ErrnoKeeper keep;
    munmap(mapped_, mapped_bytes_);
  }
}

}  // namespace parlot::runtime
