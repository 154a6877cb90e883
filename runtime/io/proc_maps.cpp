#include "io/proc_maps.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errno_keeper.h"
#include "io/own_fd.h"
#include "io/raw_io.h"

namespace parlot::runtime {
namespace {

// Parses a lowercase hex number at `p`, advancing it.
std::uintptr_t parse_hex(const char*& p, const char* end) {
  std::uintptr_t v = 0;
  for (; p < end; ++p) {
    const char c = *p;
    if (c >= '0' && c <= '9') {
      v = v * 16 + static_cast<std::uintptr_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v = v * 16 + static_cast<std::uintptr_t>(c - 'a' + 10);
    } else {
      break;
    }
  }
  return v;
}

// Copies the path name of the maps line [p, end) (after its start-end,
// perms, offset, dev and inode fields) into `out`.
void copy_path_field(const char* p, const char* end, char* out, std::size_t cap) {
  for (int field = 0; field < 5 && p < end; ++field) {
    while (p < end && *p != ' ') ++p;
    while (p < end && *p == ' ') ++p;
  }
  const auto n = static_cast<std::size_t>(end - p);
  if (n >= cap) {
    out[0] = '\0';
    return;
  }
  std::memcpy(out, p, n);
  out[n] = '\0';
}

}  // namespace

bool find_mapping(std::uintptr_t address, Mapping& out, char* path, std::size_t cap) {
  const ErrnoKeeper keep;
  const int fd = open_own("/proc/self/maps", O_RDONLY);
  if (fd < 0) return false;
  // A line is at most about 80 bytes plus its path name: one longer than
  // the buffer (a path of over 4000 bytes) is skipped.
  char buf[4096];
  std::size_t have = 0;   // bytes in buf
  bool skipping = false;  // inside a line longer than buf
  bool eof = false, found = false;
  std::uintptr_t prev_end = 0;
  while (!found) {
    if (!eof && have < sizeof buf) {
      const long n = syscall(SYS_read, fd, buf + have, sizeof buf - have);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
      } else {
        have += static_cast<std::size_t>(n);
      }
    }
    std::size_t used = 0;  // bytes of whole lines handled
    while (!found) {
      const char* line = buf + used;
      const char* stop = buf + have;
      const char* nl = static_cast<const char*>(std::memchr(line, '\n', stop - line));
      if (nl == nullptr) {
        if (!eof || line == stop) break;  // a partial line: read more
        nl = stop;                        // the last line, without its newline
      }
      if (skipping) {
        skipping = false;  // the end of a line too long for the buffer
      } else {
        const char* p = line;
        const std::uintptr_t start = parse_hex(p, nl);
        if (p < nl && *p == '-') ++p;
        const std::uintptr_t end = parse_hex(p, nl);
        if (address >= start && address < end) {
          found = true;
          out = {start, end, prev_end};
          if (path != nullptr && cap != 0) copy_path_field(p, nl, path, cap);
        }
        prev_end = end;
      }
      used = static_cast<std::size_t>(nl - buf) + (nl < stop ? 1 : 0);
    }
    if (found) break;
    if (used == 0 && have == sizeof buf) {
      used = have;  // a line longer than buf: drop what there is of it
      skipping = true;
    }
    std::memmove(buf, buf + used, have - used);
    have -= used;
    if (eof && have == 0) break;
  }
  syscall(SYS_close, fd);
  return found;
}

bool absolute_object_path(const char* name, std::uintptr_t address, char* out, std::size_t cap) {
  const ErrnoKeeper keep;
  if (cap == 0) return false;
  out[0] = '\0';
  TextBuilder text(out, cap);
  if (name[0] == '/') {
    text.str(name).c_str();
    return !text.truncated();
  }
  Mapping m;
  if (find_mapping(address, m, out, cap)) {
    // The kernel's name for the mapping: a file's absolute path, or no file
    // at all ("[vdso]", anonymous memory), which no directory can make one.
    if (out[0] == '/') return true;
    out[0] = '\0';
    return false;
  }
  // No /proc: the current directory, which is right unless the process
  // moved since it loaded the object.
  char cwd[1024];
  if (syscall(SYS_getcwd, cwd, sizeof cwd) <= 0 || cwd[0] != '/') {
    out[0] = '\0';
    return false;
  }
  while (name[0] == '.' && name[1] == '/') name += 2;
  TextBuilder joined(out, cap);
  joined.str(cwd);
  if (std::strcmp(cwd, "/") != 0) joined.ch('/');
  joined.str(name).c_str();
  if (joined.truncated()) out[0] = '\0';
  return !joined.truncated();
}

}  // namespace parlot::runtime
