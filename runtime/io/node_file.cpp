#include "io/node_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "io/raw_io.h"
#include "io/trace_file.h"
#include "io/virtual_fd.h"
#include "parlot/crc32c.h"

namespace parlot::runtime {

namespace {

char g_node_path[1100] = "";
std::size_t g_node_path_len = 0;
std::atomic<std::uint64_t> g_start_ns{0};

// The node file's descriptor (-1: not open) and the file it was opened on:
// the program may close it or dup2 another file onto its number, so each
// record checks with fstat that it still names the node file.
std::atomic<int> g_fd{-1};
std::atomic<std::uint64_t> g_dev{0};
std::atomic<std::uint64_t> g_ino{0};

// Virtual descriptors: slot i is descriptor kVirtualFdBase + i.
constexpr int kSlots = 32;
struct Slot {
  std::atomic<bool> used{false};
  char name[format::kMaxNodeRecordName + 1];
};
Slot g_slots[kSlots];

// The node file's descriptor, opened (and created) when needed. Returns
// the descriptor or -errno.
int node_fd() {
  int fd = g_fd.load(std::memory_order_acquire);
  if (fd >= 0) {
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_dev == g_dev.load(std::memory_order_relaxed) &&
        st.st_ino == g_ino.load(std::memory_order_relaxed)) {
      return fd;
    }
    // Not ours any more (the program closed it, or reused the number):
    // forgotten, never closed.
    g_fd.compare_exchange_strong(fd, -1);
  }
  const int opened = open_trace_file(g_node_path, O_WRONLY | O_CREAT | O_APPEND);
  if (opened < 0) return opened;
  struct stat st;
  if (fstat(opened, &st) != 0) {
    const int err = errno;
    close(opened);
    return -err;
  }
  g_dev.store(st.st_dev, std::memory_order_relaxed);
  g_ino.store(st.st_ino, std::memory_order_relaxed);
  int expected = -1;
  if (!g_fd.compare_exchange_strong(expected, opened, std::memory_order_acq_rel)) {
    // Another thread opened it meanwhile: use that one.
    close(opened);
    return expected;
  }
  return opened;
}

Slot* slot_of(int fd) {
  if (!is_virtual_fd(fd) || fd - kVirtualFdBase >= kSlots) return nullptr;
  Slot& s = g_slots[fd - kVirtualFdBase];
  return s.used.load(std::memory_order_acquire) ? &s : nullptr;
}

}  // namespace

int node_layout_start(const char* node_path) {
  const std::size_t n = std::strlen(node_path);
  if (n + 1 > sizeof g_node_path) return ENAMETOOLONG;
  std::memcpy(g_node_path, node_path, n + 1);
  g_node_path_len = n;
  return 0;
}

bool node_layout_on() {
  return g_node_path_len != 0;
}

const char* node_file_path() {
  return g_node_path;
}

void node_set_process_start(std::uint64_t start_ns) {
  g_start_ns.store(start_ns, std::memory_order_relaxed);
}

const char* node_record_name(const char* path) {
  if (g_node_path_len == 0 || std::strncmp(path, g_node_path, g_node_path_len) != 0 ||
      path[g_node_path_len] != '/') {
    return nullptr;
  }
  return path + g_node_path_len + 1;
}

int node_write_record(format::NodeRecordKind kind, const char* name, const void* data,
                      std::size_t n, std::uint64_t offset) {
  const std::size_t name_bytes = std::strlen(name);
  if (name_bytes == 0 || name_bytes > format::kMaxNodeRecordName) return ENAMETOOLONG;
  const std::size_t total = sizeof(format::NodeRecordHeader) + name_bytes + n;
  if (total > format::kMaxNodeRecordBytes) return EFBIG;
  format::NodeRecordHeader h{};
  h.magic = format::kNodeRecordMagic;
  h.record_bytes = static_cast<std::uint32_t>(total);
  h.version = format::kNodeVersion;
  h.kind = static_cast<std::uint8_t>(kind);
  h.name_bytes = static_cast<std::uint16_t>(name_bytes);
  h.pid = static_cast<std::uint32_t>(getpid());
  h.start_ns = g_start_ns.load(std::memory_order_relaxed);
  h.offset = kind == format::NodeRecordKind::kWriteAt ? offset : 0;
  std::uint32_t crc = crc32c::of(reinterpret_cast<const std::uint8_t*>(&h), sizeof h);
  crc = format::crc32c_extend(crc, reinterpret_cast<const std::uint8_t*>(name), name_bytes);
  crc = format::crc32c_extend(crc, static_cast<const std::uint8_t*>(data), n);
  h.crc32c = crc;
  iovec parts[3] = {
      {&h, sizeof h}, {const_cast<char*>(name), name_bytes}, {const_cast<void*>(data), n}};
  const int fd = node_fd();
  if (fd < 0) return -fd;
  return write_record(fd, parts, n != 0 ? 3 : 2, total);
}

int node_open_virtual(const char* name, bool truncate) {
  if (std::strlen(name) > format::kMaxNodeRecordName) return -ENAMETOOLONG;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].used.load(std::memory_order_relaxed) ||
        !g_slots[i].used.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      continue;
    }
    std::strcpy(g_slots[i].name, name);
    if (truncate) {
      if (const int err = node_write_record(format::NodeRecordKind::kReplace, name, nullptr, 0);
          err != 0) {
        g_slots[i].used.store(false, std::memory_order_release);
        return -err;
      }
    }
    return kVirtualFdBase + i;
  }
  return -EMFILE;
}

void node_close_virtual(int fd) {
  if (Slot* s = slot_of(fd)) s->used.store(false, std::memory_order_release);
}

int virtual_fd_write(int fd, const void* data, std::size_t n) {
  Slot* s = slot_of(fd);
  if (s == nullptr) return EBADF;
  return n == 0 ? 0 : node_write_record(format::NodeRecordKind::kAppend, s->name, data, n);
}

int virtual_fd_write_at(int fd, const void* data, std::size_t n, std::uint64_t offset) {
  Slot* s = slot_of(fd);
  if (s == nullptr) return EBADF;
  return node_write_record(format::NodeRecordKind::kWriteAt, s->name, data, n, offset);
}

}  // namespace parlot::runtime
