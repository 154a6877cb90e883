// The flight recorder's dumps (flight_dump.h): a directory per dump, the
// thread windows written into it (by the threads' finish, or by the idle
// flusher holding the threads), the process's metadata copied beside them.
#include "process/flight_dump.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "hot_path/current_trace.h"
#include "hot_path/hook_state.h"
#include "hot_path/thread_trace.h"
#include "hot_path/trace_writes.h"
#include "ignore_hooks.h"
#include "io/raw_io.h"
#include "io/trace_file.h"
#include "process/idle_flusher.h"
#include "process/process_state.h"
#include "process/thread_registry.h"

namespace parlot::runtime {

namespace {

std::atomic<bool> g_dumping{false};               // a dump is in progress
std::atomic<std::uint64_t> g_dumps{0};            // dumps begun by this process
char g_dump_dir[sizeof g_process_dir + 64] = "";  // the dump in progress's directory

constexpr const char* kMetadataFiles[] = {"process", "loadmap", "functions", "crash", "libcalls"};

// Copies file `name` of directory `from` into directory `to`; a file that
// does not exist is left out. Returns 0 or an errno.
int copy_file(const char* from, const char* to, const char* name) {
  char src[sizeof g_dump_dir + 32];
  char dst[sizeof g_dump_dir + 32];
  if (!join_path(src, sizeof src, from, name) || !join_path(dst, sizeof dst, to, name)) {
    return ENAMETOOLONG;
  }
  const int in = open_trace_file(src, O_RDONLY);
  if (in < 0) return -in == ENOENT ? 0 : -in;
  const int out = open_trace_file(dst, O_WRONLY | O_CREAT | O_TRUNC);
  if (out < 0) {
    close(in);
    return -out;
  }
  int err = 0;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    if (n <= 0) break;
    err = write_all(out, buf, static_cast<std::size_t>(n));
    if (err != 0) break;
  }
  close(in);
  close(out);
  return err;
}

int make_dir(const char* path) {
  return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : errno;
}

}  // namespace

const char* flight_dump_dir() {
  return g_dumping.load(std::memory_order_acquire) ? g_dump_dir : nullptr;
}

bool flight_mode() {
  return g_config.flight_bytes != 0;
}

int begin_flight_dump() {
  if (!flight_mode() || g_process_dir[0] == '\0') return ENOENT;
  if (g_dumping.exchange(true)) return EBUSY;
  const std::uint64_t n = g_dumps.fetch_add(1) + 1;
  char name[64];
  TextBuilder d(name, sizeof name);
  d.str("flight-").u64(n);
  char top[sizeof g_dump_dir];
  char process[128];
  TextBuilder p(process, sizeof process);
  if (const char* rank = rank_from_environment(); rank != nullptr) p.str("rank-").str(rank).ch('.');
  p.str("pid-").u64(static_cast<std::uint64_t>(getpid()));
  int err = join_path(top, sizeof top, g_trace_dir, d.c_str()) ? make_dir(top) : ENAMETOOLONG;
  if (err == 0) {
    err = join_path(g_dump_dir, sizeof g_dump_dir, top, p.c_str()) ? make_dir(g_dump_dir)
                                                                   : ENAMETOOLONG;
  }
  if (err != 0) {
    log_error("cannot make the flight recorder's dump directory", top, err);
    g_dumping.store(false);
  }
  return err;
}

void end_flight_dump() {
  if (!g_dumping.load()) return;
  for (const char* name : kMetadataFiles) {
    if (const int err = copy_file(g_process_dir, g_dump_dir, name); err != 0) {
      log_error("cannot copy the process metadata into", g_dump_dir, err);
      break;
    }
  }
  g_dumping.store(false, std::memory_order_release);
}

void remove_live_flight_dir() {
  if (g_process_dir[0] == '\0') return;
  for (const char* name : kMetadataFiles) {
    char path[sizeof g_dump_dir + 32];
    if (join_path(path, sizeof path, g_process_dir, name)) unlink(path);
  }
  rmdir(g_process_dir);
}

int flight_dump_now(unsigned long long timeout_ns) {
  if (!flight_mode() || g_state.load() != ProcessState::kReady || tracing_stopped()) return ENOENT;
  if (const int err = begin_flight_dump(); err != 0) return err;
  int err = 0;
  if (!flush_all_threads_now(timeout_ns)) {
    // No flusher to hold the others: the calling thread's window only.
    if (ThreadTrace* t = tls_thread_trace; t != nullptr) {
      const IgnoreHooksOnThisThread quiet;
      err = t->write_flight_window(g_dump_dir);
    }
    if (err == 0) err = ETIMEDOUT;
  }
  flush_process_metadata();
  // Under the metadata lock: a flush appending `load_bias` lines to the
  // process file meanwhile would append them to the file this replaces.
  bool locked = false;
  for (int spins = 0; spins <= 100000; ++spins) {
    if ((locked = !g_metadata_lock.test_and_set(std::memory_order_acquire))) break;
    sched_yield();
  }
  write_process_metadata(0);
  if (locked) g_metadata_lock.clear(std::memory_order_release);
  end_flight_dump();
  return err;
}

}  // namespace parlot::runtime
