/* Communicator IDs for the MPI call records (PARLOT_MPI_ARGS=1), equal on
   every member rank of a communicator:
     - MPI_COMM_WORLD is 0, MPI_COMM_SELF is 1;
     - a communicator created through a wrapper (MPI_Comm_dup, _split,
       _create, MPI_Cart_create, MPI_Intercomm_create, ...) gets the largest
       of its members' proposals, agreed with MPI_Allreduce(MAX) on the new
       communicator right after the creating call returns (for an
       intercommunicator, each agreement is two: the first brings each group
       the other's largest). Each rank proposes one more than the largest ID
       it has used, so IDs grow; disjoint communicators (the parts of one
       MPI_Comm_split) may share one.
     - the agreed ID is then claimed on every member: a rank whose table
       already holds it for another communicator (one created at the same
       time by another thread, under MPI_THREAD_MULTIPLE: its proposal was
       read before that one's agreement ended) says so in a second
       allreduce, and the members agree again on a larger ID, until every
       member could claim it. A claim is taken under the table's lock, so a
       rank never holds two communicators with one ID, whatever its threads
       do at the same time. The lock is never held across an MPI call.
     - a communicator the wrappers did not see created has no ID (-1).
   The table is small and locked: communicator creation is rare, and a
   lookup scans at most the communicators alive. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "mpi_call_record.h"
#include "mpi_predefined_handles.h"
#include "mpi_wrapper_support.h"

#define PARLOT_NI __attribute__((no_instrument_function))

enum { kMaxCommunicators = 4096 };

static struct {
  MPI_Comm handle;
  int64_t id;
} table[kMaxCommunicators];
static int used;
static int64_t next_id = 2; /* the next ID this rank proposes */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef int (*comm_size_t)(MPI_Comm, int*);
typedef int (*test_inter_t)(MPI_Comm, int*);
typedef int (*allreduce_t)(const void*, void*, int, MPI_Datatype, MPI_Op, MPI_Comm);
typedef MPI_Comm (*comm_f2c_t)(MPI_Fint);
typedef MPI_Datatype (*type_f2c_t)(MPI_Fint);
typedef int (*status_f2c_t)(const MPI_Fint*, MPI_Status*);
static comm_size_t next_comm_size;
static test_inter_t next_test_inter;
static allreduce_t next_allreduce;
static comm_f2c_t next_comm_f2c;
static type_f2c_t next_type_f2c;
static status_f2c_t next_status_f2c;

static PARLOT_NI int comm_size(MPI_Comm comm) {
  comm_size_t f = (comm_size_t)parlot_mpi_next((void**)&next_comm_size, "PMPI_Comm_size");
  int size = -1;
  if (f(comm, &size) != MPI_SUCCESS) return -1;
  return size;
}

PARLOT_NI int64_t parlot_mpi_comm_id(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return 0;
  if (comm == MPI_COMM_SELF) return 1;
  int64_t id = -1;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < used; ++i) {
    if (table[i].handle == comm) {
      id = table[i].id;
      break;
    }
  }
  pthread_mutex_unlock(&lock);
  return id;
}

static PARLOT_NI void forget(MPI_Comm comm) {
  pthread_mutex_lock(&lock);
  for (int i = 0; i < used; ++i) {
    if (table[i].handle == comm) {
      table[i] = table[--used];
      break;
    }
  }
  pthread_mutex_unlock(&lock);
}

PARLOT_NI void parlot_mpi_put_comm(parlot_mpi_record* r, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  const int64_t id = parlot_mpi_comm_id(comm);
  if (id >= 0) parlot_mpi_put(r, PARLOT_MPI_COMM, id);
  parlot_mpi_put(r, PARLOT_MPI_COMM_SIZE, comm_size(comm));
}

/* The largest `v` (two values, elementwise) over every rank of `comm`, in
   `out`; for an intercommunicator over both groups. Returns 0, or -1 when
   an allreduce failed. */
static PARLOT_NI int all_max(MPI_Comm comm, int inter, const long long v[2], long long out[2]) {
  allreduce_t allreduce = (allreduce_t)parlot_mpi_next((void**)&next_allreduce, "PMPI_Allreduce");
  long long mine[2] = {v[0], v[1]};
  if (inter) {
    /* On an intercommunicator each group receives the other's reduction:
       the first round brings the other group's largest, the second the
       largest of both. */
    long long other[2] = {-1, -1};
    if (allreduce(mine, other, 2, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS) return -1;
    for (int i = 0; i < 2; ++i)
      if (other[i] > mine[i]) mine[i] = other[i];
  }
  return allreduce(mine, out, 2, MPI_LONG_LONG, MPI_MAX, comm) == MPI_SUCCESS ? 0 : -1;
}

/* Claims `id` for `comm` in this rank's table: 1 when no other
   communicator holds it (the entry is made, replacing one left by a freed
   communicator with the same handle), 0 when another does. A full table
   claims nothing and says 1: the communicator will have no ID to look up. */
static PARLOT_NI int claim(MPI_Comm comm, int64_t id) {
  int free_here = 1;
  pthread_mutex_lock(&lock);
  int mine = used;
  for (int i = 0; i < used; ++i) {
    if (table[i].handle == comm)
      mine = i; /* a handle reused after a free */
    else if (table[i].id == id)
      free_here = 0;
  }
  if (free_here && mine < kMaxCommunicators) {
    table[mine].handle = comm;
    table[mine].id = id;
    if (mine == used) ++used;
  }
  pthread_mutex_unlock(&lock);
  /* next_id = max(next_id, id + 1) */
  int64_t cur = __atomic_load_n(&next_id, __ATOMIC_RELAXED);
  while (cur <= id && !__atomic_compare_exchange_n(&next_id, &cur, id + 1, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {
  }
  return free_here;
}

/* A small random number below `bound` (xorshift, per thread): spreads the
   proposals of communicators whose agreement collided so they do not
   collide again. */
static PARLOT_NI int64_t jitter(int64_t bound) {
  static __thread uint64_t state;
  if (state == 0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    state = ((uint64_t)(uintptr_t)&state ^ ((uint64_t)getpid() << 32) ^ (uint64_t)t.tv_nsec) | 1;
  }
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (int64_t)(state % (uint64_t)bound);
}

/* Agrees with the other members on an ID for the new communicator `comm`
   and claims it in this rank's table (see the top of this file). Returns
   the ID, or -1 (nothing claimed) when an MPI call failed. Collective over
   `comm`. */
static PARLOT_NI int64_t agree_on_id(MPI_Comm comm) {
  test_inter_t test_inter =
      (test_inter_t)parlot_mpi_next((void**)&next_test_inter, "PMPI_Comm_test_inter");
  int inter = 0;
  if (test_inter(comm, &inter) != MPI_SUCCESS) return -1;
  /* v[0]: a member could not claim the previous round's ID; v[1]: this
     rank's proposal. */
  long long v[2] = {0, __atomic_load_n(&next_id, __ATOMIC_RELAXED)};
  long long agreed[2];
  if (all_max(comm, inter, v, agreed) != 0) return -1;
  for (int64_t round = 1;; ++round) {
    const int64_t id = agreed[1];
    const int claimed = claim(comm, id);
    v[0] = !claimed;
    v[1] = __atomic_load_n(&next_id, __ATOMIC_RELAXED) + jitter(4 * (round < 1024 ? round : 1024));
    if (all_max(comm, inter, v, agreed) != 0) {
      if (claimed) forget(comm);
      return -1;
    }
    if (agreed[0] == 0) return id;
    if (claimed) forget(comm);
  }
}

PARLOT_NI void parlot_mpi_comm_created(parlot_mpi_record* r, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  const int64_t id = agree_on_id(comm);
  if (id < 0) return;
  parlot_mpi_put(r, PARLOT_MPI_NEW_COMM, id);
  parlot_mpi_put(r, PARLOT_MPI_NEW_COMM_SIZE, comm_size(comm));
}

PARLOT_NI void parlot_mpi_comm_freed(parlot_mpi_record* r, MPI_Comm comm) {
  parlot_mpi_put_comm(r, comm);
  forget(comm);
}

/* ---- Fortran handles ---- */

PARLOT_NI int64_t parlot_mpi_fint(const void* p) {
  return *(const MPI_Fint*)p;
}

PARLOT_NI MPI_Comm parlot_mpi_comm_f2c(const void* p) {
  comm_f2c_t f = (comm_f2c_t)parlot_mpi_next((void**)&next_comm_f2c, "PMPI_Comm_f2c");
  return f(*(const MPI_Fint*)p);
}

PARLOT_NI MPI_Datatype parlot_mpi_type_f2c(const void* p) {
  type_f2c_t f = (type_f2c_t)parlot_mpi_next((void**)&next_type_f2c, "PMPI_Type_f2c");
  return f(*(const MPI_Fint*)p);
}

typedef MPI_Op (*op_f2c_t)(MPI_Fint);
static op_f2c_t next_op_f2c;

PARLOT_NI MPI_Op parlot_mpi_op_f2c(const void* p) {
  op_f2c_t f = (op_f2c_t)parlot_mpi_next((void**)&next_op_f2c, "PMPI_Op_f2c");
  return f(*(const MPI_Fint*)p);
}

/* Fortran's MPI_IN_PLACE is the address of a common block the MPI library
   defines (Open MPI's name; null when absent: no buffer is in place). */
static const void* fortran_symbol(const char* name, const void** slot, int* resolved) {
  if (!__atomic_load_n(resolved, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(slot, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);
    __atomic_store_n(resolved, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

PARLOT_NI const void* parlot_mpi_fortran_buffer(const void* p) {
  static const void* in_place;
  static int resolved;
  const void* s = fortran_symbol("mpi_fortran_in_place_", &in_place, &resolved);
  return s != NULL && p == s ? MPI_IN_PLACE : p;
}

/* MPI_F_STATUS_IGNORE (MPI 2.2) is a variable of libmpi, referred to
   weakly (mpi_predefined_handles.h): null when libmpi is not loaded. */
static PARLOT_NI int fortran_status(const void* p, MPI_Status* out) {
  if (&MPI_F_STATUS_IGNORE == NULL || p == NULL || p == (const void*)MPI_F_STATUS_IGNORE) return 0;
  status_f2c_t f = (status_f2c_t)parlot_mpi_next((void**)&next_status_f2c, "PMPI_Status_f2c");
  return f((const MPI_Fint*)p, out) == MPI_SUCCESS;
}

PARLOT_NI void parlot_mpi_put_fortran_status(parlot_mpi_record* r, const void* status) {
  MPI_Status s;
  if (fortran_status(status, &s)) parlot_mpi_put_status(r, &s);
}

PARLOT_NI void parlot_mpi_add_fortran_completion(parlot_mpi_record* r, int64_t index,
                                                 const void* status) {
  MPI_Status s;
  parlot_mpi_add_completion(r, index, fortran_status(status, &s) ? &s : MPI_STATUS_IGNORE);
}

PARLOT_NI void parlot_mpi_add_fortran_completions(parlot_mpi_record* r, const void* statuses,
                                                  int64_t count, const void* indices) {
  if (&MPI_F_STATUSES_IGNORE == NULL || statuses == NULL ||
      statuses == (const void*)MPI_F_STATUSES_IGNORE) {
    return;
  }
  /* A Fortran status is MPI_STATUS_SIZE integers: sizeof(MPI_Status) of them. */
  const size_t words = sizeof(MPI_Status) / sizeof(MPI_Fint);
  const MPI_Fint* s = (const MPI_Fint*)statuses;
  const MPI_Fint* index = (const MPI_Fint*)indices;
  for (int64_t i = 0; i < count && i < PARLOT_MPI_MAX_COMPLETIONS; ++i) {
    parlot_mpi_add_fortran_completion(r, index != NULL ? (int64_t)index[i] - 1 : i,
                                      s + (size_t)i * words);
  }
}

PARLOT_NI void* parlot_mpi_fortran_statuses(void* statuses, int64_t count, MPI_Fint* mine) {
  if (count < 1 || count > PARLOT_MPI_MAX_COMPLETIONS) return statuses;
  const void* ignore = NULL;
  if (count == 1 && &MPI_F_STATUS_IGNORE != NULL && statuses == (void*)MPI_F_STATUS_IGNORE)
    ignore = statuses;
  if (&MPI_F_STATUSES_IGNORE != NULL && statuses == (void*)MPI_F_STATUSES_IGNORE) ignore = statuses;
  return ignore != NULL ? (void*)mine : statuses;
}
