#include "process_trace.h"

#include <fcntl.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "config.h"
#include "function_filter.h"
#include "load_map_writer.h"
#include "object_table.h"
#include "parlot/format.h"
#include "raw_io.h"
#include "signal_handlers.h"

namespace parlot::runtime {

std::atomic<bool> g_tracing_stopped{false};
FunctionIds g_function_ids;
constinit thread_local ThreadTrace* tls_thread_trace __attribute__((tls_model("initial-exec"))) =
    nullptr;

namespace {

enum class ProcessState : int { kUninitialised, kInitialising, kReady, kOff };
enum class ThreadState : unsigned char { kNone, kAttaching, kAttached, kEnded };

std::atomic<ProcessState> g_state{ProcessState::kUninitialised};
Config g_config;
int g_dir_fd = -1;
std::uint64_t g_start_ns = 0;
std::atomic<pid_t> g_traced_pid{0};
std::atomic<std::uint64_t> g_next_thread_index{0};
std::atomic<bool> g_fork_child_pending{false};
std::atomic<bool> g_failure_reported{false};
std::atomic<bool> g_finished{false};
bool g_membarrier_ready = false;
ObjectTable g_objects;
FunctionFilter g_function_filter;  // PARLOT_INCLUDE, PARLOT_EXCLUDE
int g_functions_fd = -1;           // "functions", appended from the flush path
int g_loadmap_fd = -1;             // "loadmap", appended from the flush path
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

// mkdir -p for the trace directory (mode 0700 for what it creates).
int make_dirs(const char* path) {
  char buf[1024];
  const std::size_t n = std::strlen(path);
  if (n >= sizeof buf) return ENAMETOOLONG;
  std::memcpy(buf, path, n + 1);
  for (std::size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    const char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return errno;
    buf[i] = saved;
  }
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

// Creates "<dir>/[rank-R.]pid-P[.K]" (K counts up if an earlier image of this
// pid, before an exec, already made one). Returns an open directory fd.
int make_process_dir(int& error) {
  int parent = open(g_config.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) {
    error = errno;
    return -1;
  }
  const char* rank = rank_from_environment();
  for (unsigned k = 0; k < 1000; ++k) {
    char name[128];
    TextBuilder n(name, sizeof name);
    if (rank != nullptr) n.str("rank-").str(rank).ch('.');
    n.str("pid-").u64(static_cast<std::uint64_t>(getpid()));
    if (k != 0) n.ch('.').u64(k);
    if (mkdirat(parent, n.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      error = errno;
      close(parent);
      return -1;
    }
    const int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    error = fd < 0 ? errno : 0;
    close(parent);
    return fd;
  }
  close(parent);
  error = EEXIST;
  return -1;
}

// Writes the "process" metadata file (docs/FORMAT.md); `end_ns` 0 = running.
int write_process_metadata(std::uint64_t end_ns) {
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
  const int fd = openat(g_dir_fd, "process", flags, 0600);
  if (fd < 0) return errno;
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
  const int cmd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
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
  t.str("threads ").u64(g_next_thread_index.load()).ch('\n');
  t.str("functions ").u64(g_function_ids.count()).ch('\n');
  const int err = write_all(fd, t.data(), t.size());
  close(fd);
  return err;
}

// Creates the "functions" file: its header's count stays 0 (entries
// follow to the end of the file) until finish_process() writes the final
// count (docs/FORMAT.md).
int create_function_table() {
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  g_functions_fd = openat(g_dir_fd, "functions", flags, 0600);
  if (g_functions_fd < 0) return errno;
  format::FunctionsHeader h{};
  std::memcpy(h.magic, format::kFunctionsMagic, sizeof h.magic);
  h.version = format::kVersion;
  h.count = 0;
  g_functions_written = 0;
  return write_all(g_functions_fd, &h, sizeof h);
}

// Appends the addresses of the IDs assigned since the last append, up to
// the first one not yet published by the thread assigning it.
int append_function_table() {
  const std::uint32_t count = g_function_ids.count();
  std::uint64_t chunk[512];
  while (g_functions_written < count) {
    std::size_t k = 0;
    while (k < 512 && g_functions_written + k < count) {
      const std::uintptr_t a = g_function_ids.address_of(g_functions_written + 1 + k);
      if (a == 0) break;
      chunk[k++] = a;
    }
    if (k == 0) break;
    const int err = write_all(g_functions_fd, chunk, k * sizeof chunk[0]);
    if (err != 0) return err;
    g_functions_written += static_cast<std::uint32_t>(k);
  }
  return 0;
}

// Writes the final count into the function table's header.
int seal_function_table() {
  const std::uint64_t count = g_functions_written;
  if (pwrite(g_functions_fd, &count, sizeof count, offsetof(format::FunctionsHeader, count)) !=
      static_cast<ssize_t>(sizeof count)) {
    return errno != 0 ? errno : EIO;
  }
  return 0;
}

void on_new_function(std::uintptr_t address) {
  g_objects.note_code_address(address);
}

// Opens this process's directory and writes its first files.
bool start_process_directory() {
  int err = make_dirs(g_config.dir);
  if (err != 0) {
    log_error("cannot create trace directory", g_config.dir, err);
    return false;
  }
  g_dir_fd = make_process_dir(err);
  if (g_dir_fd < 0) {
    log_error("cannot create a process directory in", g_config.dir, err);
    return false;
  }
  g_start_ns = realtime_ns();
  g_traced_pid.store(getpid());
  err = write_process_metadata(0);
  if (err == 0) err = write_load_map(g_dir_fd, "loadmap", false);
  if (err == 0) {
    g_loadmap_fd = openat(g_dir_fd, "loadmap", O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (g_loadmap_fd < 0) err = errno;
  }
  if (err == 0) err = create_function_table();
  // A fork child writes every object known so far into its own map.
  g_objects.mark_none_written();
  if (err != 0) {
    log_error("cannot write the process metadata in", g_config.dir, err);
    return false;
  }
  return true;
}

void on_thread_exit(void* p) {
  auto* t = static_cast<ThreadTrace*>(p);
  tls_thread_trace = nullptr;
  tls_state = ThreadState::kEnded;
  pthread_mutex_lock(&g_registry_lock);
  if (!t->finished()) {
    const int err = t->finish();
    if (err != 0) report_write_failure(err);
  }
  unlink_trace(t);
  pthread_mutex_unlock(&g_registry_lock);
  ThreadTrace::destroy(t);
}

void before_fork() {
  pthread_mutex_lock(&g_registry_lock);
}
void after_fork_in_parent() {
  pthread_mutex_unlock(&g_registry_lock);
}

// Only the forking thread lives on in the child. Other threads' traces are
// dropped (their data belongs to the parent's files); the forking thread's
// trace is parked until the child's next event starts its own directory.
void after_fork_in_child() {
  pthread_mutex_init(&g_registry_lock, nullptr);
  if (g_state.load() != ProcessState::kReady || g_tracing_stopped.load()) return;
  ThreadTrace* self = tls_thread_trace;
  for (ThreadTrace* t = g_registry; t != nullptr;) {
    ThreadTrace* next = t->next;
    if (t != self) ThreadTrace::destroy(t);
    t = next;
  }
  g_registry = nullptr;
  for (int* fd : {&g_dir_fd, &g_functions_fd, &g_loadmap_fd}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
  g_metadata_lock.clear();
  g_next_thread_index.store(0);
  g_fork_child_pending.store(true);
  if (self != nullptr) {
    self->abandon_file();
    tls_forked_trace = self;
    tls_thread_trace = nullptr;
    tls_state = ThreadState::kNone;
  }
}

bool membarrier_register() {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Makes every thread's earlier stores visible and later loads see
// g_tracing_stopped (the slow half of an asymmetric fence; the hooks only
// use a compiler fence).
void fence_all_threads() {
  if (g_membarrier_ready && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return;
  }
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) return;
  const timespec pause{0, 20 * 1000 * 1000};
  nanosleep(&pause, nullptr);
}

void initialise_process() {
  g_config = read_config();
  bool ok = g_function_ids.init(g_config.max_functions) && g_objects.init(4096);
  if (!ok) log_error("cannot map the function table", nullptr, ENOMEM);
  g_function_ids.on_new_function = on_new_function;
  if (g_function_filter.init(g_config.include, g_config.exclude) && g_function_filter.active()) {
    g_function_ids.records = [](std::uintptr_t a) { return g_function_filter.records(a); };
  }
  ok = ok && start_process_directory();
  if (ok) {
    ok = pthread_key_create(&g_thread_key, on_thread_exit) == 0 &&
         pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
    if (!ok) log_error("cannot register thread and fork handlers", nullptr, EAGAIN);
  }
  g_membarrier_ready = ok && membarrier_register();
  if (ok) install_signal_handlers();
  if (!ok) g_tracing_stopped.store(true);
  g_state.store(ok ? ProcessState::kReady : ProcessState::kOff);
}

// First event of a fork child: its own directory, then the parked trace.
ThreadTrace* resume_in_fork_child() {
  pthread_mutex_lock(&g_registry_lock);
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load()) {
    if (!start_process_directory()) {
      g_tracing_stopped.store(true);
    } else {
      g_fork_child_pending.store(false);
    }
  }
  if (!g_tracing_stopped.load() && tls_forked_trace != nullptr) {
    t = tls_forked_trace;
    const int err = t->restart_in_child(g_dir_fd, g_next_thread_index.fetch_add(1), g_function_ids);
    if (err != 0) {
      log_error("cannot create a thread trace in", g_config.dir, err);
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

void flush_process_metadata() {
  if (g_functions_fd < 0 || g_failure_reported.load()) return;
  if (g_metadata_lock.test_and_set(std::memory_order_acquire)) return;  // another thread is at it
  int err = append_function_table();
  if (err == 0) err = g_objects.append_new(g_loadmap_fd);
  g_metadata_lock.clear(std::memory_order_release);
  if (err != 0) report_write_failure(err);
}

void report_write_failure(int error) {
  g_tracing_stopped.store(true);
  if (g_failure_reported.exchange(true)) return;
  log_error("cannot write the trace in", g_config.dir, error);
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
  if (g_tracing_stopped.load() || tls_state != ThreadState::kNone) return nullptr;
  tls_state = ThreadState::kAttaching;  // a hook re-entered from here drops its event
  ThreadTrace* t = nullptr;
  if (g_fork_child_pending.load() || tls_forked_trace != nullptr) {
    t = resume_in_fork_child();
  } else {
    pthread_mutex_lock(&g_registry_lock);
    int err = 0;
    t = ThreadTrace::create(g_dir_fd, g_next_thread_index.fetch_add(1), g_config.compress,
                            g_config.buffer_bytes, g_config.stack_frames,
                            std::uint64_t{g_config.flush_ms} * 1000000u, g_config.discard, err);
    if (t != nullptr) {
      t->set_record_depth(g_config.record_depth);
      link_trace(t);
    } else {
      report_write_failure(err);
    }
    pthread_mutex_unlock(&g_registry_lock);
  }
  if (t == nullptr) {
    tls_state = ThreadState::kEnded;
    return nullptr;
  }
  pthread_setspecific(g_thread_key, t);
  tls_state = ThreadState::kAttached;
  tls_thread_trace = t;
  return t;
}

IgnoreHooksOnThisThread::IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    saved_ = t->busy.exchange(1);  // a busy thread's hooks drop their events
  } else {
    saved_ = static_cast<int>(tls_state);
    tls_state = ThreadState::kAttaching;  // an attaching thread's hooks record nothing
  }
}

IgnoreHooksOnThisThread::~IgnoreHooksOnThisThread() {
  if (ThreadTrace* t = tls_thread_trace) {
    t->busy.store(saved_);
  } else {
    tls_state = static_cast<ThreadState>(saved_);
  }
}

void mark_stack_cut_of(pthread_t thread) {
  pthread_mutex_lock(&g_registry_lock);
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    if (pthread_equal(t->thread, thread)) t->resync_pending.store(true, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&g_registry_lock);
}

bool current_thread_in_hook() {
  const ThreadTrace* t = tls_thread_trace;
  return t != nullptr && t->busy.load(std::memory_order_relaxed) != 0;
}

bool is_traced_process() {
  return g_traced_pid.load() == getpid();
}

int write_process_file(const char* name, const char* data, std::size_t n) {
  if (g_dir_fd < 0) return EBADF;
  const int fd =
      openat(g_dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno;
  const int err = write_all(fd, data, n);
  close(fd);
  return err;
}

void finish_process(FinishReason reason) {
  if (g_state.load() != ProcessState::kReady || !is_traced_process() || g_finished.exchange(true)) {
    return;
  }
  const bool in_signal = reason == FinishReason::kSignal;
  const bool write = !g_fork_child_pending.load() && !g_failure_reported.load();
  g_tracing_stopped.store(true);
  fence_all_threads();
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
  for (ThreadTrace* t = g_registry; t != nullptr; t = t->next) {
    // Another thread may be inside a hook: let it leave (bounded wait).
    for (int spins = 0; t != self && t->busy.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins > 100000) break;
      sched_yield();
    }
    // A thread stopped inside a hook (a fault in the tracer itself) has
    // half-updated state: leave its file at its last block.
    if (t == self && self_in_hook) continue;
    if (!t->finished() && write) {
      const int err = t->finish();
      if (err != 0) report_write_failure(err);
    }
  }
  if (write && !g_failure_reported.load()) {
    // Wait for a flush in progress on another thread (bounded).
    for (int spins = 0; g_metadata_lock.test_and_set(std::memory_order_acquire); ++spins) {
      if (spins > 100000) break;
      sched_yield();
    }
    int err = append_function_table();
    if (err == 0) err = g_objects.append_new(g_loadmap_fd);
    if (err == 0) err = seal_function_table();
    // dl_iterate_phdr takes the loader's lock: not from a signal handler.
    if (err == 0 && !in_signal) err = write_load_map(g_dir_fd, "loadmap", true);
    if (err == 0) err = write_process_metadata(realtime_ns());
    if (err != 0) report_write_failure(err);
  }
  if (locked) pthread_mutex_unlock(&g_registry_lock);
}

}  // namespace parlot::runtime
