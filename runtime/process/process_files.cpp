// The process directory's own files (docs/FORMAT.md): the `process`
// metadata, the function table and the load map, created at the start,
// appended after each block a thread writes and sealed at the end.
#include "io/process_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "hot_path/current_trace.h"
#include "hot_path/trace_writes.h"
#include "io/own_fd.h"
#include "io/raw_io.h"
#include "io/trace_file.h"
#include "parlot/format.h"
#include "process/failure_reports.h"
#include "process/process_state.h"
#include "time/clock_tick.h"

namespace parlot::runtime {

namespace {

FileIdentity g_functions_id;  // "functions"
FileIdentity g_loadmap_id;    // "loadmap"
std::uint32_t g_functions_written = 0;

}  // namespace

// Path of file `name` of the process directory, in `out`.
bool process_file_path(char* out, std::size_t cap, const char* name) {
  return g_process_dir[0] != '\0' && join_path(out, cap, g_process_dir, name);
}

// Writes the "process" metadata file (docs/FORMAT.md); `end_ns` 0 = running.
int write_process_metadata(std::uint64_t end_ns) {
  static char buf[1 << 18];  // cold path, serialised by the callers
  TextBuilder t(buf, sizeof buf);
  t.str(format::kProcessMagicLine).ch('\n');
  t.str("pid ").u64(static_cast<std::uint64_t>(getpid())).ch('\n');
  t.str("ppid ").u64(static_cast<std::uint64_t>(getppid())).ch('\n');
  const char* rank = rank_from_environment();
  t.str("rank ").str(rank != nullptr ? rank : "-").ch('\n');
  utsname u;
  if (uname(&u) == 0) t.str("host ").escaped(u.nodename, std::strlen(u.nodename)).ch('\n');
  char exe[1024];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
  if (n > 0) t.str("executable ").escaped(exe, static_cast<std::size_t>(n)).ch('\n');
  const int cmd = open_own("/proc/self/cmdline", O_RDONLY);
  if (cmd >= 0) {
    static char args[32768];
    ssize_t got = 0, r;
    while (got < static_cast<ssize_t>(sizeof args) &&
           (r = read(cmd, args + got, sizeof args - static_cast<std::size_t>(got))) > 0) {
      got += r;
    }
    close(cmd);
    for (ssize_t i = 0; i < got;) {
      const std::size_t len = strnlen(args + i, static_cast<std::size_t>(got - i));
      t.str("arg ").escaped(args + i, len).ch('\n');
      i += static_cast<ssize_t>(len) + 1;
    }
  }
  t.str("start_ns ").u64(g_start_ns).ch('\n');
  t.str("end_ns ").u64(end_ns).ch('\n');
  t.str("compress ").u64(g_config.compress ? 1 : 0).ch('\n');
  if (g_config.discard) t.str("discard 1\n");
  t.str("threads ").u64(g_threads_started.load()).ch('\n');
  t.str("functions ").u64(g_function_ids.count()).ch('\n');
  // The clock settings, so that a reader can state its time bound: the tick
  // runs on the idle flusher's thread (none with PARLOT_FLUSH_MS=0).
  const bool ticking = g_config.flush_ms != 0;
  t.str("clock_events ").u64(g_config.clock_events).ch('\n');
  t.str("clock_tolerance_ns ")
      .u64(g_config.clock_events == 1 ? 0 : g_config.clock_tolerance_ns)
      .ch('\n');
  t.str("clock_tick_ns ")
      .u64(ticking ? g_clock_tick_period_ns.load(std::memory_order_relaxed) : 0)
      .ch('\n');
  t.str("clock_tick_late_ns ")
      .u64(g_clock_tick_late_max_ns.load(std::memory_order_relaxed))
      .ch('\n');
  // The per-process half of the load map: where each object of `loadmap`
  // was loaded.
  g_objects.append_load_biases(t);
  return write_process_file("process", t.data(), t.size());
}

// Creates the "functions" file: its header's count stays 0 (entries
// follow to the end of the file) until finish_process() writes the final
// count (docs/FORMAT.md).
int create_function_table() {
  char path[1300];
  if (!process_file_path(path, sizeof path, "functions")) return ENAMETOOLONG;
  format::FunctionsHeader h{};
  std::memcpy(h.magic, format::kFunctionsMagic, sizeof h.magic);
  h.version = format::kFunctionsVersion;
  h.count = 0;
  g_functions_written = 0;
  return create_trace_file(path, &h, sizeof h, g_functions_id);
}

// Appends the entries of the IDs assigned since the last append, up to the
// first one not yet published by the thread assigning it, or whose object
// is not yet in the load map (the load map is appended first).
int append_function_table() {
  const std::uint32_t count = g_function_ids.count();
  if (g_functions_written >= count) return 0;
  char path[1300];
  if (!process_file_path(path, sizeof path, "functions")) return ENAMETOOLONG;
  int err = 0;
  format::FunctionEntry chunk[256];
  std::size_t k = 0;
  std::uint32_t next = g_functions_written;  // entries resolved: next + k
  bool stop = false;
  const auto resolve = [&](std::uintptr_t a) {
    ObjectRef o = g_objects.object_of(a);
    if (!o.ready && (err = append_load_map()) == 0) o = g_objects.object_of(a);
    return o;
  };
  int fd = -1;
  while (err == 0 && !stop && next + k < count) {
    const std::uintptr_t a = g_function_ids.address_of(next + static_cast<std::uint32_t>(k) + 1);
    const ObjectRef o = a != 0 ? resolve(a) : ObjectRef{};
    if (err != 0) break;
    if (o.ready) {
      chunk[k++] = {o.index, 0, a - o.bias};
    } else {
      stop = true;
    }
    if (k == 256 || (k != 0 && (stop || next + k == count))) {
      if (fd < 0) fd = open_checked(path, g_functions_id, true);
      if (fd < 0) return -fd;
      err = write_all(fd, chunk, k * sizeof chunk[0]);
      if (err == 0) next += static_cast<std::uint32_t>(k);
      k = 0;
    }
  }
  g_functions_written = next;
  if (fd >= 0) close_trace_fd(fd);
  return err;
}

// Appends the objects recorded since the last append to the open load map
// `map_fd`, and their load biases to the process file.
int append_objects(int map_fd) {
  // The process file is replaced whole at the start and the end (rename),
  // so it has no identity to check: appended like a write error's line.
  char path[1300];
  if (!process_file_path(path, sizeof path, "process")) return ENAMETOOLONG;
  const int process_fd = open_trace_file(path, O_WRONLY | O_APPEND);
  if (process_fd < 0) return -process_fd;
  const int err = g_objects.append_new(map_fd, process_fd);
  close_trace_fd(process_fd);
  return err;
}

// Appends the objects recorded since the last append to the load map, and
// their load biases to the process file.
int append_load_map() {
  if (!g_objects.has_new()) return 0;
  char path[1300];
  if (!process_file_path(path, sizeof path, "loadmap")) return ENAMETOOLONG;
  const int fd = open_checked(path, g_loadmap_id, true);
  if (fd < 0) return -fd;
  const int err = append_objects(fd);
  close_trace_fd(fd);
  return err;
}

// Creates the load map with the objects recorded so far (numbered from 0;
// their biases are appended to the process file, which must exist).
int create_load_map() {
  char path[1300];
  if (!process_file_path(path, sizeof path, "loadmap")) return ENAMETOOLONG;
  const int fd = open_trace_file(path, O_WRONLY | O_CREAT | O_EXCL);
  if (fd < 0) return -fd;
  struct stat st;
  if (fstat(fd, &st) == 0) g_loadmap_id = {st.st_dev, st.st_ino};
  char buf[64];
  TextBuilder magic(buf, sizeof buf);
  magic.str(format::kLoadMapMagicLine).ch('\n');
  int err = write_all(fd, magic.data(), magic.size());
  if (err == 0) err = append_objects(fd);
  close_trace_fd(fd);
  return err;
}

// Writes the final count into the function table's header.
int seal_function_table() {
  const std::uint64_t count = g_functions_written;
  char path[1300];
  if (!process_file_path(path, sizeof path, "functions")) return ENAMETOOLONG;
  const int fd = open_checked(path, g_functions_id, false);
  if (fd < 0) return -fd;
  const int err =
      write_trace_fd_at(fd, &count, sizeof count, offsetof(format::FunctionsHeader, count));
  close_trace_fd(fd);
  return err;
}

void flush_process_metadata() {
  if (g_process_dir[0] == '\0' || g_failure_reported.load()) return;
  if (g_metadata_lock.test_and_set(std::memory_order_acquire)) return;  // another thread is at it
  int err = append_function_table();
  if (err == 0) err = append_load_map();
  g_metadata_lock.clear(std::memory_order_release);
  if (err != 0) report_write_failure(err);
}

int write_process_file(const char* name, const char* data, std::size_t n) {
  char path[1300];
  if (!process_file_path(path, sizeof path, name)) return EBADF;
  return replace_trace_file(path, data, n);
}

}  // namespace parlot::runtime
