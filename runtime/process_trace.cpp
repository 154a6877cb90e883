#include "process_trace.h"

#include "idle_flusher.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "clock_tick.h"
#include "config.h"
#include "function_filter.h"
#include "libcall_patcher.h"
#include "load_map_writer.h"
#include "monotonic_clock.h"
#include "object_table.h"
#include "own_fd.h"
#include "parlot/format.h"
#include "raw_io.h"
#include "signal_handlers.h"
#include "thread_index.h"
#include "trace_dir_env.h"
#include "trace_file.h"

namespace parlot::runtime {

FunctionIds g_function_ids;
constinit thread_local ThreadTrace* tls_thread_trace __attribute__((tls_model("initial-exec"))) =
    nullptr;

namespace {

enum class ProcessState : int { kUninitialised, kInitialising, kReady, kOff };
enum class ThreadState : unsigned char { kNone, kAttaching, kAttached, kEnded };

std::atomic<ProcessState> g_state{ProcessState::kUninitialised};
Config g_config;
char g_trace_dir[1024] = "";    // PARLOT_DIR made absolute at initialisation
char g_process_dir[1200] = "";  // this process's directory (absolute); "" = none
FileIdentity g_functions_id;    // "functions"
FileIdentity g_loadmap_id;      // "loadmap"
std::atomic<int> g_failed_threads{0};
std::atomic<std::uint64_t> g_events_written{0};  // events in blocks written, all threads
std::uint64_t g_start_ns = 0;
// When the parent forked (CLOCK_REALTIME ns): the child's start time, so
// that children forked one after another are ordered as forked, whichever
// makes its first event first.
std::uint64_t g_fork_ns = 0;
std::atomic<pid_t> g_traced_pid{0};
// A word in a page the kernel hands a child that does not share this
// process's memory zeroed (MADV_WIPEONFORK): 1 in a process the runtime set
// up (a fork child sets it again) and in a vfork child, which shares its
// parent's memory; 0 in a raw clone without CLONE_VM. nullptr where the
// kernel has no MADV_WIPEONFORK (before 4.14).
volatile std::uint32_t* g_own_memory = nullptr;
std::atomic<std::uint64_t> g_threads_started{0};  // thread traces started (indices: thread_index.h)
std::atomic<bool> g_fork_child_pending{false};
std::atomic<bool> g_failure_reported{false};
std::atomic<bool> g_finished{false};
bool g_membarrier_ready = false;
ObjectTable g_objects;
FunctionFilter g_function_filter;  // PARLOT_INCLUDE, PARLOT_EXCLUDE
std::uint32_t g_functions_written = 0;
std::atomic_flag g_metadata_lock = ATOMIC_FLAG_INIT;
pthread_key_t g_thread_key;
pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
ThreadTrace* g_registry = nullptr;  // live thread traces, under g_registry_lock

thread_local ThreadState tls_state __attribute__((tls_model("initial-exec"))) = ThreadState::kNone;
// In a fork child: the forking thread's trace, waiting for the child's next event.
thread_local ThreadTrace* tls_forked_trace __attribute__((tls_model("initial-exec"))) = nullptr;

std::uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void log_error(const char* what, const char* path, int error) {
  char buf[1400];
  TextBuilder msg(buf, sizeof buf);
  msg.str(what);
  if (path != nullptr) msg.str(" '").str(path).ch('\'');
  msg.str(": ").str(strerrordesc_np(error)).str("; tracing is off, the program runs on");
  log_line(msg.c_str());
}

void link_trace(ThreadTrace* t) {
  t->prev = nullptr;
  t->next = g_registry;
  if (g_registry != nullptr) g_registry->prev = t;
  g_registry = t;
}

void unlink_trace(ThreadTrace* t) {
  if (t->prev != nullptr) t->prev->next = t->next;
  if (t->next != nullptr) t->next->prev = t->prev;
  if (g_registry == t) g_registry = t->next;
  t->prev = t->next = nullptr;
}

// Length of the prefix of g_trace_dir that this process found in place:
// the directories below it are the ones make_dirs() created (0 = none).
std::size_t g_created_below = 0;

// Calls `f` with each directory of absolute `path` that ends after byte
// `from`, outermost first ("/a", "/a/b", ... for from 0); stops at the
// first nonzero result and returns it (ENAMETOOLONG for a path of 1 KiB).
template <class F>
int for_each_directory(const char* path, std::size_t from, F f) {
  char buf[1024];
  const std::size_t n = std::strlen(path);
  if (n >= sizeof buf) return ENAMETOOLONG;
  std::memcpy(buf, path, n + 1);
  for (std::size_t i = from + 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    const char saved = buf[i];
    buf[i] = '\0';
    if (const int err = f(buf); err != 0) return err;
    buf[i] = saved;
  }
  return 0;
}

// mkdir -p for the trace directory (mode 0700 for what it creates).
int make_dirs(const char* path) {
  const int err = for_each_directory(path, 0, [](const char* dir) {
    if (mkdir(dir, 0700) == 0) {
      if (g_created_below == 0) g_created_below = std::strrchr(dir, '/') - dir;
      return 0;
    }
    return errno == EEXIST ? 0 : errno;
  });
  if (err != 0) return err;
  struct stat st;
  if (stat(path, &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

const char* rank_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return nullptr;
}

// Makes PARLOT_DIR absolute, once, against the directory the process was
// started in (a relative directory followed by a chdir and a fork or an
// exec must not move the new process's trace).
int resolve_trace_dir() {
  return absolute_trace_dir(g_config.dir, g_trace_dir, sizeof g_trace_dir);
}

// Makes a fresh directory for this process's first files under a name no
// reader takes for a process ("<dir>/.pid-P.K.tmp") and names it in
// g_process_dir; publish_process_dir() gives it its real name once the
// files are written, so a process directory is never seen half made.
int make_staging_process_dir() {
  for (unsigned k = 0; k < 1000; ++k) {
    char name[128];
    TextBuilder n(name, sizeof name);
    n.str(".pid-").u64(static_cast<std::uint64_t>(getpid())).ch('.').u64(k).str(".tmp");
    if (!join_path(g_process_dir, sizeof g_process_dir, g_trace_dir, n.c_str())) {
      g_process_dir[0] = '\0';
      return ENAMETOOLONG;
    }
    if (mkdir(g_process_dir, 0700) == 0) return 0;
    const int err = errno;
    if (err != EEXIST) {
      g_process_dir[0] = '\0';
      return err;
    }
  }
  g_process_dir[0] = '\0';
  return EEXIST;
}

// Gives the staging directory in g_process_dir its name,
// "<dir>/[rank-R.]pid-P[.K]" (K counts up if an earlier image of this pid,
// before an exec, already made one), atomically, and names it in
// g_process_dir.
int publish_process_dir() {
  const char* rank = rank_from_environment();
  char staging[sizeof g_process_dir];
  std::memcpy(staging, g_process_dir, sizeof staging);
  for (unsigned k = 0; k < 1000; ++k) {
    char name[128];
    TextBuilder n(name, sizeof name);
    if (rank != nullptr) n.str("rank-").str(rank).ch('.');
    n.str("pid-").u64(static_cast<std::uint64_t>(getpid()));
    if (k != 0) n.ch('.').u64(k);
    char path[sizeof g_process_dir];
    if (!join_path(path, sizeof path, g_trace_dir, n.c_str())) return ENAMETOOLONG;
    const int err = rename_no_replace(staging, path);
    if (err == 0) {
      std::memcpy(g_process_dir, path, sizeof path);
      return 0;
    }
    if (err != EEXIST) return err;
  }
  return EEXIST;
}

// Removes the staging directory in g_process_dir and what it holds (its
// first files, no subdirectory), after a failure to publish it.
void remove_staging_process_dir() {
  for (const char* name : {"process", "loadmap", "functions"}) {
    char path[1300];
    if (join_path(path, sizeof path, g_process_dir, name)) unlink(path);
  }
  rmdir(g_process_dir);
  g_process_dir[0] = '\0';
}

}  // namespace

void give_trace_to(uid_t uid, gid_t gid) {
  if (g_process_dir[0] == '\0') return;
  // The trace directories this process created, outermost first (each
  // must let the new user through).
  if (g_created_below != 0) {
    for_each_directory(g_trace_dir, g_created_below, [&](const char* dir) {
      (void)!chown(dir, uid, gid);
      return 0;
    });
  }
  const int dir = open_own(g_process_dir, O_RDONLY | O_DIRECTORY);
  if (dir < 0) return;
  (void)!fchown(dir, uid, gid);
  alignas(8) char entries[4096];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, entries, sizeof entries);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
      unsigned short reclen;
      std::memcpy(&reclen, entries + off + 16, sizeof reclen);
      const char* name = entries + off + 19;
      if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) {
        (void)!fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW);
      }
      off += reclen;
    }
  }
  close(dir);
}

namespace {

// Path of file `name` of the process directory, in `out`.
bool process_file_path(char* out, std::size_t cap, const char* name) {
  return g_process_dir[0] != '\0' && join_path(out, cap, g_process_dir, name);
}

// Writes the "process" metadata file (docs/FORMAT.md); `end_ns` 0 = running.
int write_process_metadata(std::uint64_t end_ns) {
  static char buf[65536];  // cold path, serialised by the callers
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
  h.version = format::kVersion;
  h.count = 0;
  g_functions_written = 0;
  return create_trace_file(path, &h, sizeof h, g_functions_id);
}

// Appends the addresses of the IDs assigned since the last append, up to
// the first one not yet published by the thread assigning it.
int append_function_table() {
  const std::uint32_t count = g_function_ids.count();
  if (g_functions_written >= count) return 0;
  char path[1300];
  if (!process_file_path(path, sizeof path, "functions")) return ENAMETOOLONG;
  const int fd = open_checked(path, g_functions_id, true);
  if (fd < 0) return -fd;
  int err = 0;
  std::uint64_t chunk[512];
  while (err == 0 && g_functions_written < count) {
    std::size_t k = 0;
    while (k < 512 && g_functions_written + k < count) {
      const std::uintptr_t a = g_function_ids.address_of(g_functions_written + 1 + k);
      if (a == 0) break;
      chunk[k++] = a;
    }
    if (k == 0) break;
    err = write_all(fd, chunk, k * sizeof chunk[0]);
    if (err == 0) g_functions_written += static_cast<std::uint32_t>(k);
  }
  close(fd);
  return err;
}

// Appends the objects recorded since the last append to the load map.
int append_load_map() {
  if (!g_objects.has_new()) return 0;
  char path[1300];
  if (!process_file_path(path, sizeof path, "loadmap")) return ENAMETOOLONG;
  const int fd = open_checked(path, g_loadmap_id, true);
  if (fd < 0) return -fd;
  const int err = g_objects.append_new(fd);
  close(fd);
  return err;
}

// Writes the whole load map (`append`: after what is there).
int write_whole_load_map(bool append) {
  char path[1300];
  if (!process_file_path(path, sizeof path, "loadmap")) return ENAMETOOLONG;
  int fd;
  if (append) {
    fd = open_checked(path, g_loadmap_id, true);
  } else {
    fd = open_trace_file(path, O_WRONLY | O_CREAT | O_EXCL);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) g_loadmap_id = {st.st_dev, st.st_ino};
  }
  if (fd < 0) return -fd;
  const int err = write_load_map(fd, !append);
  close(fd);
  return err;
}

// Writes the final count into the function table's header.
int seal_function_table() {
  const std::uint64_t count = g_functions_written;
  char path[1300];
  if (!process_file_path(path, sizeof path, "functions")) return ENAMETOOLONG;
  const int fd = open_checked(path, g_functions_id, false);
  if (fd < 0) return -fd;
  int err = 0;
  if (pwrite(fd, &count, sizeof count, offsetof(format::FunctionsHeader, count)) !=
      static_cast<ssize_t>(sizeof count)) {
    err = errno != 0 ? errno : EIO;
  }
  close(fd);
  return err;
}

void on_new_function(std::uintptr_t address) {
  g_objects.note_code_address(address);
}

// Opens this process's directory and writes its first files.
bool start_process_directory() {
  int err = make_dirs(g_trace_dir);
  if (err != 0) {
    log_error("cannot create trace directory", g_trace_dir, err);
    return false;
  }
  err = make_staging_process_dir();
  if (err != 0) {
    log_error("cannot create a process directory in", g_trace_dir, err);
    return false;
  }
  g_start_ns = g_fork_child_pending.load() && g_fork_ns != 0 ? g_fork_ns : realtime_ns();
  g_traced_pid.store(getpid());
  err = write_process_metadata(0);
  if (err == 0) err = write_whole_load_map(false);
  if (err == 0) err = create_function_table();
  // A fork child writes every object known so far into its own map.
  g_objects.mark_none_written();
  if (err != 0) {
    log_error("cannot write the process metadata in", g_process_dir, err);
    remove_staging_process_dir();
    return false;
  }
  // Only now does the directory appear under its name, with its first
  // files whole: a SIGKILL before this leaves no process directory.
  err = publish_process_dir();
  if (err != 0) {
    log_error("cannot name the process directory", g_process_dir, err);
    remove_staging_process_dir();
    return false;
  }
  write_libcall_record();
  return true;
}

void on_thread_exit(void* p) {
  auto* t = static_cast<ThreadTrace*>(p);
  tls_thread_trace = nullptr;
  tls_state = ThreadState::kEnded;
  pthread_mutex_lock(&g_registry_lock);
  if (!t->finished() && t->finish() != 0) report_thread_failure(*t);
  unlink_trace(t);
  pthread_mutex_unlock(&g_registry_lock);
  ThreadTrace::destroy(t);
}

void before_fork() {
  pthread_mutex_lock(&g_registry_lock);
  g_fork_ns = realtime_ns();
}
void after_fork_in_parent() {
  pthread_mutex_unlock(&g_registry_lock);
}

// Only the forking thread lives on in the child. Other threads' traces are
// dropped (their data belongs to the parent's files); the forking thread's
// trace is parked until the child's next event starts its own directory.
void after_fork_in_child() {
  pthread_mutex_init(&g_registry_lock, nullptr);
  if (g_own_memory != nullptr) *g_own_memory = 1;  // wiped by the fork: this process is known
  if (g_state.load() != ProcessState::kReady || tracing_stopped()) return;
  ThreadTrace* self = tls_thread_trace;
  for (ThreadTrace* t = g_registry; t != nullptr;) {
    ThreadTrace* next = t->next;
    if (t != self) ThreadTrace::destroy(t);
    t = next;
  }
  g_registry = nullptr;
  g_process_dir[0] = '\0';  // the child makes its own; no descriptor to close
  g_metadata_lock.clear();
  g_threads_started.store(0);
  g_fork_child_pending.store(true);
  idle_flusher_after_fork_in_child();
  if (self != nullptr) {
    self->abandon_file();
    tls_forked_trace = self;
    tls_thread_trace = nullptr;
    tls_state = ThreadState::kNone;
  }
}

// Maps the page of g_own_memory and sets its word.
void mark_own_memory() {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  if (madvise(p, page, MADV_WIPEONFORK) != 0) {
    munmap(p, page);
    return;
  }
  g_own_memory = static_cast<volatile std::uint32_t*>(p);
  *g_own_memory = 1;
}

void initialise_process() {
  g_config = read_config();
  mark_own_memory();
  // Before any thread's trace exists (each maps its library-call shadow at
  // creation), whatever the order of constructors.
  patch_library_calls_at_first_event();
  if (const int err = resolve_trace_dir(); err != 0) {
    log_error("cannot resolve the trace directory", g_config.dir, err);
    stop_tracing();
    g_state.store(ProcessState::kOff);
    return;
  }
  bool ok = g_function_ids.init(g_config.max_functions) && g_objects.init(4096);
  if (!ok) log_error("cannot map the function table", nullptr, ENOMEM);
  g_function_ids.on_new_function = on_new_function;
  g_function_filter.names_stub = libcall_stub_names;
  if (g_function_filter.init(g_config.include, g_config.exclude) && g_function_filter.active()) {
    g_function_ids.records = [](std::uintptr_t a) { return g_function_filter.records(a); };
  }
  ok = ok && start_process_directory();
  if (ok) {
    ok = pthread_key_create(&g_thread_key, on_thread_exit) == 0 &&
         pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
    if (!ok) log_error("cannot register thread and fork handlers", nullptr, EAGAIN);
  }
  g_membarrier_ready = ok && register_membarrier();
  if (ok) install_signal_handlers();
  // The flusher's handshake needs an exact fence (membarrier): where the
  // kernel has none, fence_all_threads() only sleeps, which is enough at
  // process end but not for writing a live thread's data.
  set_clock_tick_period(g_config.clock_tick_us, g_config.clock_events);  // the flusher ticks
  if (ok && g_membarrier_ready && g_config.flush_ms != 0) enable_idle_flush_rounds();
  if (ok && g_membarrier_ready && !start_idle_flusher(g_config.flush_ms)) {
    log_line("cannot start the idle flusher thread: SIGKILL may lose an idle thread's last events");
  }
  if (!ok) stop_tracing();
  g_state.store(ok ? ProcessState::kReady : ProcessState::kOff);
}

// A new trace for the calling thread, linked into the registry (its lock
// held). Returns nullptr, said on stderr, when it cannot be had: this
// thread goes untraced, the others go on.
ThreadTrace* create_thread_trace() {
  ThreadTrace* t = nullptr;
  int err = 0;
  const auto codec = !g_config.compress    ? format::Codec::kRawWords
                     : g_config.codec == 1 ? format::Codec::kLzZe
                                           : format::Codec::kLzRank;
  g_threads_started.fetch_add(1);
  t = ThreadTrace::create(g_process_dir, current_thread_index(), codec, g_config.buffer_bytes,
                          g_config.stack_frames, std::uint64_t{g_config.flush_ms} * 1000000u,
                          g_config.discard, static_cast<std::uint32_t>(g_config.clock_events), err);
  if (t != nullptr) {
    t->set_record_depth(g_config.record_depth);
    t->set_clock_tolerance_ns(g_config.clock_events == 1 ? 0 : g_config.clock_tolerance_ns);
    link_trace(t);
  } else if (is_process_wide_write_error(err)) {
    report_write_failure(err);  // said once for the process
  } else {
    char buf[1400];
    TextBuilder msg(buf, sizeof buf);
    msg.str("cannot create the trace of thread ")
        .u64(static_cast<std::uint64_t>(syscall(SYS_gettid)))
        .str(" in '")
        .str(g_process_dir)
        .str("': ")
        .str(strerrordesc_np(err))
        .str("; this thread is not traced, the others go on");
    log_line(msg.c_str());
  }
  return t;
}

// First event of a fork child: its own directory, then the parked trace.
ThreadTrace* resume_in_fork_child() {
  pthread_mutex_lock(&g_registry_lock);
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load()) {
    if (!start_process_directory()) {
      stop_tracing();
    } else {
      g_fork_child_pending.store(false);
      if (g_membarrier_ready) start_idle_flusher(g_config.flush_ms);
    }
  }
  if (!tracing_stopped() && tls_forked_trace == nullptr) {
    // A thread that made no event before the fork (or one the child
    // started): a trace of its own, as in any process.
    t = create_thread_trace();
  } else if (!tracing_stopped()) {
    t = tls_forked_trace;
    g_threads_started.fetch_add(1);
    const int err = t->restart_in_child(g_process_dir, current_thread_index(), g_function_ids);
    if (err != 0 && is_process_wide_write_error(err)) {
      report_write_failure(err);
      ThreadTrace::destroy(t);
      t = nullptr;
    } else if (err != 0) {
      log_error("cannot create a thread trace in", g_process_dir, err);
      ThreadTrace::destroy(t);
      t = nullptr;
    } else {
      link_trace(t);
    }
  }
  tls_forked_trace = nullptr;
  pthread_mutex_unlock(&g_registry_lock);
  return t;
}

}  // namespace

bool register_membarrier() {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Makes every thread's earlier stores visible and later loads see
// g_hooks_off (the slow half of an asymmetric fence; the hooks only
// use a compiler fence).
void fence_all_threads() {
  if (g_membarrier_ready && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  const timespec pause{0, 20 * 1000 * 1000};
  nanosleep(&pause, nullptr);
}

ThreadTrace* lock_thread_registry() {
  pthread_mutex_lock(&g_registry_lock);
  return g_registry;
}

void unlock_thread_registry() {
  pthread_mutex_unlock(&g_registry_lock);
}

void ignore_hooks_on_this_thread_for_good() {
  tls_state = ThreadState::kEnded;
}

void flush_process_metadata() {
  if (g_process_dir[0] == '\0' || g_failure_reported.load()) return;
  if (g_metadata_lock.test_and_set(std::memory_order_acquire)) return;  // another thread is at it
  int err = append_function_table();
  if (err == 0) err = append_load_map();
  g_metadata_lock.clear(std::memory_order_release);
  if (err != 0) report_write_failure(err);
}

void note_events_written(std::uint64_t events) {
  g_events_written.fetch_add(events, std::memory_order_relaxed);
}

bool is_process_wide_write_error(int error) {
  return error == ENOENT || error == ENOTDIR || error == EROFS || error == EACCES ||
         error == ENOSPC || error == EDQUOT;
}

void report_write_failure(int error) {
  stop_tracing();
  if (g_failure_reported.exchange(true)) return;
  // The trace says it was cut, and why: one short line appended to the
  // "process" file, which usually fits in the block the file already has
  // (a full disk has none to give). Best effort.
  char path[1300];
  if (process_file_path(path, sizeof path, "process")) {
    const int fd = open_trace_file(path, O_WRONLY | O_APPEND);
    if (fd >= 0) {
      char line[64];
      TextBuilder l(line, sizeof line);
      l.str("write_error ").u64(static_cast<std::uint64_t>(error)).ch('\n');
      (void)write_all(fd, l.data(), l.size());
      close(fd);
    }
  }
  char buf[1600];
  TextBuilder msg(buf, sizeof buf);
  msg.str("cannot write the trace in '").str(g_process_dir).str("': ").str(strerrordesc_np(error));
  msg.str("; tracing is off for the whole process from ");
  const std::uint64_t now = realtime_ns();
  const std::uint64_t ms = now > g_start_ns ? (now - g_start_ns) / 1000000 : 0;
  msg.u64(ms / 1000).ch('.').ch(static_cast<char>('0' + ms / 100 % 10));
  msg.ch(static_cast<char>('0' + ms / 10 % 10)).ch(static_cast<char>('0' + ms % 10));
  msg.str(" s after its start (about ").u64(g_events_written.load(std::memory_order_relaxed));
  msg.str(
      " events written; each thread's file ends at its last complete block), the program "
      "runs on");
  log_line(msg.c_str());
}

void report_thread_failure(ThreadTrace& t) {
  if (t.failure_reported) return;
  t.failure_reported = true;
  const int err = t.write_error();
  if (is_process_wide_write_error(err)) {
    // The directory itself is gone or closed to us, or the file system is
    // full: no thread can write. One line for the process, not one per
    // thread.
    report_write_failure(err);
    return;
  }
  if (g_failure_reported.load()) return;  // tracing is off already, said once
  // Capped: a full disk fails every thread in turn.
  const int n = g_failed_threads.fetch_add(1);
  if (n >= 16) return;
  char buf[1600];
  TextBuilder msg(buf, sizeof buf);
  msg.str("cannot write '").str(t.path()).str("': ").str(strerrordesc_np(t.write_error()));
  msg.str("; this thread's trace ends at its last complete block (").u64(t.events());
  msg.str(" events recorded, the later ones lost); the other threads go on");
  if (n == 15) msg.str(" (further thread failures not shown)");
  log_line(msg.c_str());
}

ThreadTrace* attach_current_thread() {
  // A hook re-entered on this thread while it attaches (a signal handler)
  // drops its event.
  if (tls_state == ThreadState::kAttaching) return nullptr;
  ProcessState s = g_state.load(std::memory_order_acquire);
  if (s != ProcessState::kReady) {
    if (s == ProcessState::kOff) return nullptr;
    if (s == ProcessState::kUninitialised &&
        g_state.compare_exchange_strong(s, ProcessState::kInitialising)) {
      tls_state = ThreadState::kAttaching;
      initialise_process();
      tls_state = ThreadState::kNone;
    } else {
      // Another thread is initialising the process (a few system calls):
      // wait for it rather than lose this thread's first events.
      while (g_state.load(std::memory_order_acquire) == ProcessState::kInitialising) {
        sched_yield();
      }
      if (g_state.load(std::memory_order_acquire) != ProcessState::kReady) return nullptr;
    }
  }
  if (hooks_off_for_process() || tls_state != ThreadState::kNone)
    return nullptr;  // stopped, paused
  // A process that a raw clone started (no atfork handler ran) must not
  // add a thread file to its parent's directory.
  if (!g_fork_child_pending.load() && is_untraced_copy(g_traced_pid.load())) return nullptr;
  tls_state = ThreadState::kAttaching;  // a hook re-entered from here drops its event
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load() || tls_forked_trace != nullptr) {
    t = resume_in_fork_child();
  } else {
    pthread_mutex_lock(&g_registry_lock);
    t = create_thread_trace();
    pthread_mutex_unlock(&g_registry_lock);
  }
  if (t == nullptr) {
    tls_state = ThreadState::kEnded;
    return nullptr;
  }
  if (tls_hook_state.pause_depth > 0) t->busy.store(ThreadTrace::kPaused);
  pthread_setspecific(g_thread_key, t);
  tls_state = ThreadState::kAttached;
  tls_thread_trace = t;
  return t;
}

IgnoreHooksOnThisThread::IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    saved_ = t->busy.exchange(ThreadTrace::kInHook);  // a busy thread's hooks drop their events
    if ((saved_ & ThreadTrace::kInHook) == 0) wait_while_flusher_holds(t);
  } else {
    saved_ = static_cast<int>(tls_state);
    tls_state = ThreadState::kAttaching;  // an attaching thread's hooks record nothing
  }
}

IgnoreHooksOnThisThread::~IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    t->busy.store(saved_);
    if ((saved_ & ThreadTrace::kInHook) == 0 && t->deferred_signals.load() != 0) {
      raise_deferred_signals(t);
    }
  } else {
    tls_state = static_cast<ThreadState>(saved_);
  }
}

void mark_stack_cut_of(pthread_t thread) {
  pthread_mutex_lock(&g_registry_lock);
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    if (pthread_equal(t->thread, thread)) {
      t->cancel_requested.store(true, std::memory_order_relaxed);
      t->resync_pending.store(true, std::memory_order_relaxed);
    }
  }
  pthread_mutex_unlock(&g_registry_lock);
}

bool current_thread_in_hook() {
  const ThreadTrace* t = tls_thread_trace;
  return t != nullptr && (t->busy.load(std::memory_order_relaxed) & ThreadTrace::kInHook) != 0;
}

bool is_traced_process() {
  return g_traced_pid.load() == getpid();
}

bool is_untraced_copy(std::uint64_t owner_pid) {
  if (static_cast<std::uint64_t>(getpid()) == owner_pid) return false;
  // A vfork child runs in its (suspended) parent's memory: it records as
  // its parent, as before the exec it is about to make.
  if (g_own_memory != nullptr && *g_own_memory == 1) return false;
  stop_tracing();  // in this copy of the memory only
  return true;
}

int write_process_file(const char* name, const char* data, std::size_t n) {
  char path[1300];
  if (!process_file_path(path, sizeof path, name)) return EBADF;
  return replace_trace_file(path, data, n);
}

namespace {

std::atomic<bool> g_finish_done{false};
std::atomic<long> g_finishing_tid{0};

long current_tid() {
  return syscall(SYS_gettid);
}

// How long the finishing thread waits for threads still inside a hook, in
// all (ns): a thread that has not left by then and is not waiting for a CPU
// is frozen (stopped by a debugger, stuck in I/O) and its file stays at its
// last complete block. A thread that is runnable (preempted on a loaded
// machine) is waited for longer.
constexpr std::uint64_t kBusyWaitNs = 100ull * 1000 * 1000;
constexpr std::uint64_t kRunnableWaitNs = 3ull * 1000 * 1000 * 1000;

// True when thread `tid` of this process is running or waiting for a CPU
// (state R in /proc/self/task/<tid>/stat). Async-signal-safe.
bool thread_runnable(std::uint64_t tid) {
  char path[64];
  TextBuilder p(path, sizeof path);
  p.str("/proc/self/task/").u64(tid).str("/stat");
  const int fd = open_own(p.c_str(), O_RDONLY);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  // "pid (comm) S ...": the state follows the last ')'.
  for (ssize_t i = n - 1; i > 0; --i) {
    if (buf[i] == ')') return i + 2 < n && buf[i + 2] == 'R';
  }
  return false;
}

// Waits for thread trace `t` to leave its hook: 100 ms in all, up to 3 s
// while it is runnable. Returns true when it left.
bool wait_out_of_hook(const ThreadTrace* t, std::uint64_t start_ns) {
  for (int spins = 0; (t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) != 0;
       ++spins) {
    const std::uint64_t waited = monotonic_ns() - start_ns;
    if (waited >= kBusyWaitNs &&
        (waited >= kRunnableWaitNs || (spins % 64 == 0 && !thread_runnable(t->tid())))) {
      return (t->busy.load(std::memory_order_acquire) & ThreadTrace::kInHook) == 0;
    }
    if (spins < 1000) {
      sched_yield();
    } else {
      const timespec pause{0, 100 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
  return true;
}
// How long another thread that wants the process to end (a termination
// signal's handler, _exit, exec) waits for a finish in progress (ns).
constexpr std::uint64_t kFinishWaitNs = 10ull * 1000 * 1000 * 1000;

// Every signal but the synchronous ones (a fault of the finishing thread
// must still reach the crash handler); SIGKILL and SIGSTOP stay unblockable.
void block_asynchronous_signals(sigset_t& saved) {
  sigset_t set;
  sigfillset(&set);
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) sigdelset(&set, sig);
  pthread_sigmask(SIG_BLOCK, &set, &saved);
}

}  // namespace

void wait_for_finish_in_progress() {
  if (!g_finished.load() || g_finish_done.load() || g_finishing_tid.load() == current_tid()) {
    return;
  }
  const std::uint64_t deadline = monotonic_ns() + kFinishWaitNs;
  while (!g_finish_done.load() && monotonic_ns() < deadline) {
    const timespec pause{0, 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

void finish_process(FinishReason reason) {
  if (g_state.load() != ProcessState::kReady || !is_traced_process()) return;
  if (g_finished.exchange(true)) {
    // Another thread is finishing: the process must not end under it.
    wait_for_finish_in_progress();
    return;
  }
  g_finishing_tid.store(current_tid());
  // A termination signal arriving now waits until the trace is written.
  sigset_t saved_mask;
  block_asynchronous_signals(saved_mask);
  const bool in_signal = reason == FinishReason::kSignal;
  const bool write = !g_fork_child_pending.load() && !g_failure_reported.load();
  stop_tracing();
  fence_all_threads();
  // The idle flusher stops at its next thread; a round stuck in a write
  // leaves the threads it holds as they are.
  const bool flusher_idle = wait_for_idle_flush_round(kBusyWaitNs);
  // In a signal handler the interrupted code may hold the registry lock:
  // try for a while, then go on without it (the process is about to die).
  bool locked = false;
  for (int spins = 0; !locked; ++spins) {
    locked = pthread_mutex_trylock(&g_registry_lock) == 0;
    if (locked || (in_signal && spins > 20000)) break;
    if (!in_signal) {
      pthread_mutex_lock(&g_registry_lock);
      locked = true;
      break;
    }
    sched_yield();
  }
  ThreadTrace* self = tls_thread_trace;
  const bool self_in_hook = current_thread_in_hook();
  const std::uint64_t wait_start = monotonic_ns();
  int left_cut = 0;
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    // Another thread may be inside a hook: let it leave (bounded wait). One
    // still inside (frozen, or a fault in the tracer itself) has
    // half-updated state: its file stays at its last complete block, which
    // the reader reports as cut short. Never finished here.
    const bool held = !flusher_idle && t->flush_claim.load();
    if (held || (t == self && self_in_hook) || (t != self && !wait_out_of_hook(t, wait_start))) {
      if (!t->finished()) ++left_cut;
      continue;
    }
    // One thread's failure does not stop the others.
    if (!t->finished() && write && t->finish() != 0) report_thread_failure(*t);
  }
  if (left_cut != 0 && write) {
    char buf[200];
    TextBuilder msg(buf, sizeof buf);
    msg.u64(static_cast<std::uint64_t>(left_cut))
        .str(
            " thread(s) still inside the tracer at the end: their files end at their last "
            "complete block (cut short)");
    log_line(msg.c_str());
  }
  if (write && !g_failure_reported.load()) {
    // Wait for a flush in progress on another thread (bounded).
    for (int spins = 0; g_metadata_lock.test_and_set(std::memory_order_acquire); ++spins) {
      if (spins > 100000) break;
      sched_yield();
    }
    int err = append_function_table();
    if (err == 0) err = append_load_map();
    if (err == 0) err = seal_function_table();
    // dl_iterate_phdr takes the loader's lock: not from a signal handler.
    if (err == 0 && !in_signal) err = write_whole_load_map(true);
    if (err == 0) err = write_process_metadata(realtime_ns());
    if (err != 0) report_write_failure(err);
  }
  if (locked) pthread_mutex_unlock(&g_registry_lock);
  g_finish_done.store(true);
  pthread_sigmask(SIG_SETMASK, &saved_mask, nullptr);
}

}  // namespace parlot::runtime
