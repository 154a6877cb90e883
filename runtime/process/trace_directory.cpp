// The process's trace directory: PARLOT_DIR made absolute and created
// (mkdir -p), this process's directory staged under a name no reader
// takes and published under its real one, and handed to another user
// (give_trace_to).
#include "process/process_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "io/node_file.h"
#include "io/own_fd.h"
#include "io/raw_io.h"
#include "io/trace_dir_env.h"
#include "io/trace_file.h"
#include "process/process_state.h"

namespace parlot::runtime {

namespace {

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

}  // namespace

// mkdir -p for the trace directory (mode 0700 for what it creates).
int make_dirs(const char* path) {
  // Usually there already: one stat, not a mkdir per component (each a
  // request to the metadata server of a parallel file system).
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
  const int err = for_each_directory(path, 0, [](const char* dir) {
    if (mkdir(dir, 0700) == 0) {
      if (g_created_below == 0) g_created_below = std::strrchr(dir, '/') - dir;
      return 0;
    }
    return errno == EEXIST ? 0 : errno;
  });
  if (err != 0) return err;
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

// The node layout's process directory: "<node file>/[rank-R.]pid-P", a
// path inside the node file (io/node_file.h), named at once (records of a
// process no publish record made visible are skipped by readers; two
// images of one pid, before and after an exec, differ in their records'
// start time). The node file is made at its first record.
static int start_node_process() {
  if (!node_layout_on()) {
    char node_path[sizeof g_process_dir];
    TextBuilder n(node_path, sizeof node_path);
    n.str(g_trace_dir).str("/node-").str(g_config.node).str(".parlot");
    if (n.truncated()) return ENAMETOOLONG;
    if (const int err = node_layout_start(n.c_str()); err != 0) return err;
  }
  const char* rank = rank_from_environment();
  TextBuilder p(g_process_dir, sizeof g_process_dir);
  p.str(node_file_path()).ch('/');
  if (rank != nullptr) p.str("rank-").str(rank).ch('.');
  p.str("pid-").u64(static_cast<std::uint64_t>(getpid()));
  p.c_str();
  if (p.truncated()) {
    g_process_dir[0] = '\0';
    return ENAMETOOLONG;
  }
  return 0;
}

// Makes a fresh directory for this process's first files under a name no
// reader takes for a process ("<dir>/.pid-P.K.tmp") and names it in
// g_process_dir; publish_process_dir() gives it its real name once the
// files are written, so a process directory is never seen half made.
int make_staging_process_dir() {
  if (g_config.node_layout) return start_node_process();
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
  if (node_layout_on()) {
    // Visible to readers from this record on.
    const char* name = node_record_name(g_process_dir);
    char record[sizeof g_process_dir];
    TextBuilder r(record, sizeof record);
    r.str(name != nullptr ? name : "").str("/process");
    return node_write_record(format::NodeRecordKind::kPublish, r.c_str(), nullptr, 0);
  }
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
  if (node_layout_on()) {
    // Its records stay in the node file; without a publish record no
    // reader takes the process.
    g_process_dir[0] = '\0';
    return;
  }
  for (const char* name : {"process", "loadmap", "functions"}) {
    char path[1300];
    if (join_path(path, sizeof path, g_process_dir, name)) unlink(path);
  }
  rmdir(g_process_dir);
  g_process_dir[0] = '\0';
}

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

}  // namespace parlot::runtime
