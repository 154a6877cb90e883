#include "analysis/time_category.h"

#include <algorithm>
#include <iterator>
#include <span>
#include <string>

namespace parlot::analysis {
namespace {

// MPI calls (lower case, without the mpi_ prefix) whose time is waiting:
// for requests (Wait, Test), for a peer (blocking receives and probes,
// Sendrecv, the synchronous send), for every member of a communicator
// (blocking collectives, one-sided synchronisation, the collective setup
// and teardown calls). Sorted for binary search.
constexpr std::string_view kMpiWait[] = {
    "allgather",
    "allgatherv",
    "allreduce",
    "alltoall",
    "alltoallv",
    "alltoallw",
    "barrier",
    "bcast",
    "cart_create",
    "comm_accept",
    "comm_connect",
    "comm_create",
    "comm_create_group",
    "comm_dup",
    "comm_spawn",
    "comm_split",
    "comm_split_type",
    "dist_graph_create",
    "exscan",
    "finalize",
    "gather",
    "gatherv",
    "graph_create",
    "init",
    "init_thread",
    "intercomm_create",
    "intercomm_merge",
    "mprobe",
    "mrecv",
    "neighbor_allgather",
    "neighbor_allgatherv",
    "neighbor_alltoall",
    "neighbor_alltoallv",
    "neighbor_alltoallw",
    "probe",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_block",
    "scan",
    "scatter",
    "scatterv",
    "sendrecv",
    "sendrecv_replace",
    "ssend",
    "test",
    "testall",
    "testany",
    "testsome",
    "wait",
    "waitall",
    "waitany",
    "waitsome",
    "win_complete",
    "win_fence",
    "win_wait",
};

// C library and POSIX I/O calls as the program calls them (PARLOT_LIBCALLS
// names a call by the symbol it went through). Sorted.
constexpr std::string_view kIo[] = {
    "__fprintf_chk",
    "__fread_chk",
    "__getdelim",
    "__isoc99_fscanf",
    "__isoc99_scanf",
    "__pread64_chk",
    "__pread_chk",
    "__printf_chk",
    "__read_chk",
    "__vfprintf_chk",
    "__vprintf_chk",
    "_io_getc",
    "_io_putc",
    "close",
    "creat",
    "creat64",
    "dprintf",
    "fclose",
    "fdatasync",
    "fdopen",
    "fflush",
    "fgetc",
    "fgets",
    "fgets_unlocked",
    "fopen",
    "fopen64",
    "fprintf",
    "fputc",
    "fputs",
    "fputs_unlocked",
    "fread",
    "fread_unlocked",
    "freopen",
    "fscanf",
    "fseek",
    "fseeko",
    "fseeko64",
    "fsync",
    "ftell",
    "ftello",
    "ftruncate",
    "fwrite",
    "fwrite_unlocked",
    "getc",
    "getchar",
    "getdelim",
    "getline",
    "lseek",
    "lseek64",
    "open",
    "open64",
    "openat",
    "openat64",
    "pread",
    "pread64",
    "preadv",
    "preadv2",
    "printf",
    "putc",
    "putchar",
    "puts",
    "pwrite",
    "pwrite64",
    "pwritev",
    "pwritev2",
    "read",
    "readv",
    "rewind",
    "scanf",
    "sendfile",
    "sync",
    "syncfs",
    "truncate",
    "vfprintf",
    "vprintf",
    "write",
    "writev",
};

static_assert(std::is_sorted(std::begin(kMpiWait), std::end(kMpiWait)));
static_assert(std::is_sorted(std::begin(kIo), std::end(kIo)));

bool contains(std::span<const std::string_view> sorted, std::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

}  // namespace

std::string_view category_key(TimeCategory c) {
  switch (c) {
    case TimeCategory::kComputation:
      return "computation";
    case TimeCategory::kMpiCommunication:
      return "mpi_communication";
    case TimeCategory::kMpiWait:
      return "mpi_wait";
    case TimeCategory::kIo:
      return "io";
  }
  return "computation";
}

std::string_view category_label(TimeCategory c) {
  switch (c) {
    case TimeCategory::kComputation:
      return "computation";
    case TimeCategory::kMpiCommunication:
      return "MPI communication";
    case TimeCategory::kMpiWait:
      return "MPI waiting";
    case TimeCategory::kIo:
      return "I/O";
  }
  return "computation";
}

TimeCategory classify_function(std::string_view name) {
  name = name.substr(0, name.find('@'));  // memcpy@GLIBC_2.14
  if (name.size() > 64) return TimeCategory::kComputation;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  });
  std::string_view n = lower;
  if (n.starts_with("pmpi_")) n.remove_prefix(1);
  if (n.starts_with("mpi_")) {
    n.remove_prefix(4);
    while (n.ends_with('_')) n.remove_suffix(1);  // Fortran: mpi_recv_, mpi_recv__
    if (n.starts_with("file_")) return TimeCategory::kIo;
    return contains(kMpiWait, n) ? TimeCategory::kMpiWait : TimeCategory::kMpiCommunication;
  }
  // gfortran's I/O statements: _gfortran_st_write, _gfortran_transfer_real, ...
  if (n.starts_with("_gfortran_st_") || n.starts_with("_gfortran_transfer_")) {
    return TimeCategory::kIo;
  }
  return contains(kIo, n) ? TimeCategory::kIo : TimeCategory::kComputation;
}

}  // namespace parlot::analysis
