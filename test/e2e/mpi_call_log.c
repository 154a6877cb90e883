/* An independent record of the MPI calls a program makes, for checking
   Parlot's generated MPI wrappers (mpi_wrappers_test.cpp): a hand-written
   PMPI interposer of the calls the MPI examples make, C and gfortran
   bindings, that calls the PMPI entry point and appends one line per call to
   $PARLOT_TEST_MPI_LOG/<pid>.log: the call's standard name, then the
   arguments Parlot records with PARLOT_MPI_ARGS=1, worked out here on their
   own, as " field=value" in Parlot's field order (docs/FORMAT.md "Kind 3"),
   e.g. "MPI_Send dest=1 tag=7 bytes=8 comm=0 comm_size=2".
   Communicators are named as docs/FORMAT.md says Parlot names them:
   MPI_COMM_WORLD 0, MPI_COMM_SELF 1, a communicator created by
   MPI_Comm_split or MPI_Comm_dup the largest ID its members propose (one
   more than the largest each has used), agreed here with an
   MPI_Allreduce(MAX) of this logger's own.
   Preloaded after libparlotmpi.so, it receives the calls Parlot's wrappers
   forward (they call the next definition), so both see the same calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_fd = -1;

/* One log line being built. */
typedef struct {
  char text[1024];
  size_t used;
} line_t;

static void add(line_t* l, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(l->text + l->used, sizeof l->text - l->used, fmt, ap);
  va_end(ap);
  if (n > 0) l->used += (size_t)n;
  if (l->used >= sizeof l->text) l->used = sizeof l->text - 1;
}

static void start(line_t* l, const char* name) {
  l->used = 0;
  add(l, "%s", name);
}

static void finish(line_t* l) {
  if (log_fd < 0) {
    const char* dir = getenv("PARLOT_TEST_MPI_LOG");
    if (dir == NULL) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.log", dir, (int)getpid());
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) return;
  }
  add(l, "\n");
  (void)!write(log_fd, l->text, l->used);
}

/* Field helpers, each appending " name=value" (order = Parlot's field order). */
static void add_int(line_t* l, const char* name, long long v) {
  add(l, " %s=%lld", name, v);
}

/* The reduction operation as the trace codes it (docs/FORMAT.md, field op). */
static void add_op(line_t* l, MPI_Op op) {
  if (op == MPI_OP_NULL) return;
  const MPI_Op ops[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                        MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                        MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
  long long code = 0;
  for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]); ++i) {
    if (op == ops[i]) code = i + 1;
  }
  add_int(l, "op", code);
}

static void add_bytes(line_t* l, const char* name, const void* buf, long long count,
                      MPI_Datatype type) {
  if (buf == MPI_IN_PLACE || type == MPI_DATATYPE_NULL) return;
  int size = 0;
  PMPI_Type_size(type, &size);
  add_int(l, name, count * size);
}

/* Communicators created through this logger, and their IDs. */
static struct {
  MPI_Comm comm;
  long long id;
} comms[64];
static int ncomms;
static long long next_comm_id = 2;

static long long comm_id(MPI_Comm comm) {
  if (comm == MPI_COMM_WORLD) return 0;
  if (comm == MPI_COMM_SELF) return 1;
  for (int i = 0; i < ncomms; ++i) {
    if (comms[i].comm == comm) return comms[i].id;
  }
  return -1;
}

static void add_comm(line_t* l, MPI_Comm comm) {
  const long long id = comm_id(comm);
  if (id >= 0) add_int(l, "comm", id);
  int size = 0;
  PMPI_Comm_size(comm, &size);
  add_int(l, "comm_size", size);
}

/* After a call that created `comm`: its agreed ID and size. */
static void add_new_comm(line_t* l, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  long long agreed = -1;
  PMPI_Allreduce(&next_comm_id, &agreed, 1, MPI_LONG_LONG, MPI_MAX, comm);
  if (agreed + 1 > next_comm_id) next_comm_id = agreed + 1;
  if (ncomms < 64) {
    comms[ncomms].comm = comm;
    comms[ncomms].id = agreed;
    ++ncomms;
  }
  int size = 0;
  PMPI_Comm_size(comm, &size);
  add_int(l, "new_comm", agreed);
  add_int(l, "new_comm_size", size);
}

static void forget_comm(MPI_Comm comm) {
  for (int i = 0; i < ncomms; ++i) {
    if (comms[i].comm == comm) {
      comms[i] = comms[--ncomms];
      return;
    }
  }
}

/* " completed=[index:source:tag:bytes,...,]" */
static void add_completions(line_t* l, int n, const int* indices, const MPI_Status* st) {
  add(l, " completed=[");
  for (int i = 0; i < n; ++i) {
    int bytes = 0;
    PMPI_Get_count(&st[i], MPI_BYTE, &bytes);
    add(l, "%d:%d:%d:%d,", indices ? indices[i] : i, st[i].MPI_SOURCE, st[i].MPI_TAG, bytes);
  }
  add(l, "]");
}

static void add_status(line_t* l, const MPI_Status* s) {
  int bytes = 0;
  PMPI_Get_count(s, MPI_BYTE, &bytes);
  add_int(l, "status_source", s->MPI_SOURCE);
  add_int(l, "status_tag", s->MPI_TAG);
  add_int(l, "status_bytes", bytes);
}

/* ---- C bindings ---- */
int MPI_Init(int* argc, char*** argv) {
  line_t l;
  start(&l, "MPI_Init");
  const int r = PMPI_Init(argc, argv);
  finish(&l);
  return r;
}
int MPI_Finalize(void) {
  line_t l;
  start(&l, "MPI_Finalize");
  finish(&l);
  return PMPI_Finalize();
}
int MPI_Abort(MPI_Comm comm, int code) {
  line_t l;
  start(&l, "MPI_Abort");
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Abort(comm, code);
}
int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  line_t l;
  start(&l, "MPI_Comm_rank");
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Comm_rank(comm, rank);
}
int MPI_Comm_size(MPI_Comm comm, int* size) {
  line_t l;
  start(&l, "MPI_Comm_size");
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Comm_size(comm, size);
}
int MPI_Barrier(MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Barrier");
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Barrier(comm);
}
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Send");
  add_int(&l, "dest", dest);
  add_int(&l, "tag", tag);
  add_bytes(&l, "bytes", buf, count, type);
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  line_t l;
  start(&l, "MPI_Recv");
  add_int(&l, "source", source);
  add_int(&l, "tag", tag);
  add_bytes(&l, "bytes", buf, count, type);
  add_comm(&l, comm);
  MPI_Status mine;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &mine : status;
  const int r = PMPI_Recv(buf, count, type, source, tag, comm, s);
  add_status(&l, s);
  finish(&l);
  return r;
}
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status* status) {
  line_t l;
  start(&l, "MPI_Sendrecv");
  add_int(&l, "dest", dest);
  add_int(&l, "source", source);
  add_int(&l, "tag", stag);
  add_bytes(&l, "bytes", sbuf, scount, stype);
  add_comm(&l, comm);
  add_int(&l, "recv_tag", rtag);
  add_bytes(&l, "recv_bytes", rbuf, rcount, rtype);
  MPI_Status mine;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &mine : status;
  const int r =
      PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, s);
  add_status(&l, s);
  finish(&l);
  return r;
}
int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Allreduce");
  add_bytes(&l, "bytes", NULL, count, type);
  add_comm(&l, comm);
  add_op(&l, op);
  finish(&l);
  return PMPI_Allreduce(s, r, count, type, op, comm);
}
int MPI_Allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Allgather");
  add_bytes(&l, "bytes", s, scount, stype);
  add_comm(&l, comm);
  add_bytes(&l, "recv_bytes", NULL, rcount, rtype);
  finish(&l);
  return PMPI_Allgather(s, scount, stype, r, rcount, rtype, comm);
}
int MPI_Allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Allgatherv");
  add_bytes(&l, "bytes", s, scount, stype);
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm);
}
int MPI_Alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Alltoall");
  add_bytes(&l, "bytes", s, scount, stype);
  add_comm(&l, comm);
  add_bytes(&l, "recv_bytes", NULL, rcount, rtype);
  finish(&l);
  return PMPI_Alltoall(s, scount, stype, r, rcount, rtype, comm);
}
int MPI_Alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void* r, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Alltoallv");
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  line_t l;
  start(&l, "MPI_Isend");
  add_int(&l, "dest", dest);
  add_int(&l, "tag", tag);
  add_bytes(&l, "bytes", buf, count, type);
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  line_t l;
  start(&l, "MPI_Irecv");
  add_int(&l, "source", source);
  add_int(&l, "tag", tag);
  add_bytes(&l, "bytes", buf, count, type);
  add_comm(&l, comm);
  finish(&l);
  return PMPI_Irecv(buf, count, type, source, tag, comm, request);
}
int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  line_t l;
  start(&l, "MPI_Wait");
  MPI_Status mine;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &mine : status;
  const int r = PMPI_Wait(request, s);
  add_completions(&l, 1, NULL, s);
  add_int(&l, "requests", 1);
  finish(&l);
  return r;
}
int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  line_t l;
  start(&l, "MPI_Waitany");
  MPI_Status mine;
  MPI_Status* s = status == MPI_STATUS_IGNORE ? &mine : status;
  const int r = PMPI_Waitany(count, requests, index, s);
  if (*index != MPI_UNDEFINED) add_completions(&l, 1, index, s);
  add_int(&l, "requests", count);
  finish(&l);
  return r;
}
int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  line_t l;
  start(&l, "MPI_Waitall");
  MPI_Status mine[20];
  MPI_Status* s = statuses == MPI_STATUSES_IGNORE && count <= 20 ? mine : statuses;
  const int r = PMPI_Waitall(count, requests, s);
  if (s != MPI_STATUSES_IGNORE) add_completions(&l, count, NULL, s);
  add_int(&l, "requests", count);
  finish(&l);
  return r;
}
int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  line_t l;
  start(&l, "MPI_Waitsome");
  MPI_Status mine[20];
  MPI_Status* s = statuses == MPI_STATUSES_IGNORE && incount <= 20 ? mine : statuses;
  const int r = PMPI_Waitsome(incount, requests, outcount, indices, s);
  if (s != MPI_STATUSES_IGNORE && *outcount != MPI_UNDEFINED) {
    add_completions(&l, *outcount, indices, s);
  }
  add_int(&l, "requests", incount);
  finish(&l);
  return r;
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Bcast");
  add_bytes(&l, "bytes", NULL, count, type);
  add_comm(&l, comm);
  add_int(&l, "root", root);
  finish(&l);
  return PMPI_Bcast(buf, count, type, root, comm);
}
int MPI_Reduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  line_t l;
  start(&l, "MPI_Reduce");
  add_bytes(&l, "bytes", NULL, count, type);
  add_comm(&l, comm);
  add_int(&l, "root", root);
  add_op(&l, op);
  finish(&l);
  return PMPI_Reduce(s, r, count, type, op, root, comm);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  line_t l;
  start(&l, "MPI_Comm_split");
  add_comm(&l, comm);
  const int r = PMPI_Comm_split(comm, color, key, newcomm);
  add_new_comm(&l, *newcomm);
  finish(&l);
  return r;
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  line_t l;
  start(&l, "MPI_Comm_dup");
  add_comm(&l, comm);
  const int r = PMPI_Comm_dup(comm, newcomm);
  add_new_comm(&l, *newcomm);
  finish(&l);
  return r;
}
int MPI_Comm_free(MPI_Comm* comm) {
  line_t l;
  start(&l, "MPI_Comm_free");
  add_comm(&l, *comm);
  forget_comm(*comm);
  finish(&l);
  return PMPI_Comm_free(comm);
}

/* ---- gfortran bindings (every argument by reference) ---- */
void pmpi_init_(MPI_Fint* ierr);
void pmpi_finalize_(MPI_Fint* ierr);
void pmpi_comm_rank_(MPI_Fint* comm, MPI_Fint* rank, MPI_Fint* ierr);
void pmpi_comm_size_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr);
void pmpi_barrier_(MPI_Fint* comm, MPI_Fint* ierr);
void pmpi_send_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest, MPI_Fint* tag,
                MPI_Fint* comm, MPI_Fint* ierr);
void pmpi_recv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag,
                MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr);
void pmpi_allreduce_(void* s, void* r, MPI_Fint* count, MPI_Fint* type, MPI_Fint* op,
                     MPI_Fint* comm, MPI_Fint* ierr);
void pmpi_isend_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest, MPI_Fint* tag,
                 MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr);
void pmpi_irecv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag,
                 MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr);
void pmpi_waitall_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses, MPI_Fint* ierr);
void pmpi_waitany_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* status,
                   MPI_Fint* ierr);

/* A Fortran status: sizeof(MPI_Status) integers (MPI_STATUS_SIZE). */
enum { kFortranStatusWords = sizeof(MPI_Status) / sizeof(MPI_Fint) };

void mpi_init_(MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Init");
  pmpi_init_(ierr);
  finish(&l);
}
void mpi_finalize_(MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Finalize");
  finish(&l);
  pmpi_finalize_(ierr);
}
void mpi_comm_rank_(MPI_Fint* comm, MPI_Fint* rank, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Comm_rank");
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_comm_rank_(comm, rank, ierr);
}
void mpi_comm_size_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Comm_size");
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_comm_size_(comm, size, ierr);
}
void mpi_barrier_(MPI_Fint* comm, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Barrier");
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_barrier_(comm, ierr);
}
void mpi_send_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest, MPI_Fint* tag,
               MPI_Fint* comm, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Send");
  add_int(&l, "dest", *dest);
  add_int(&l, "tag", *tag);
  add_bytes(&l, "bytes", NULL, *count, PMPI_Type_f2c(*type));
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_send_(buf, count, type, dest, tag, comm, ierr);
}
void mpi_recv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag,
               MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Recv");
  add_int(&l, "source", *source);
  add_int(&l, "tag", *tag);
  add_bytes(&l, "bytes", NULL, *count, PMPI_Type_f2c(*type));
  add_comm(&l, PMPI_Comm_f2c(*comm));
  pmpi_recv_(buf, count, type, source, tag, comm, status, ierr);
  if (status != MPI_F_STATUS_IGNORE) {
    MPI_Status s;
    PMPI_Status_f2c(status, &s);
    add_status(&l, &s);
  }
  finish(&l);
}
void mpi_allreduce_(void* s, void* r, MPI_Fint* count, MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm,
                    MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Allreduce");
  add_bytes(&l, "bytes", NULL, *count, PMPI_Type_f2c(*type));
  add_comm(&l, PMPI_Comm_f2c(*comm));
  add_op(&l, PMPI_Op_f2c(*op));
  finish(&l);
  pmpi_allreduce_(s, r, count, type, op, comm, ierr);
}
void mpi_isend_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest, MPI_Fint* tag,
                MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Isend");
  add_int(&l, "dest", *dest);
  add_int(&l, "tag", *tag);
  add_bytes(&l, "bytes", NULL, *count, PMPI_Type_f2c(*type));
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_isend_(buf, count, type, dest, tag, comm, request, ierr);
}
void mpi_irecv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag,
                MPI_Fint* comm, MPI_Fint* request, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Irecv");
  add_int(&l, "source", *source);
  add_int(&l, "tag", *tag);
  add_bytes(&l, "bytes", NULL, *count, PMPI_Type_f2c(*type));
  add_comm(&l, PMPI_Comm_f2c(*comm));
  finish(&l);
  pmpi_irecv_(buf, count, type, source, tag, comm, request, ierr);
}
/* At most 20 requests; statuses of our own in place of MPI_STATUSES_IGNORE. */
void mpi_waitall_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* statuses, MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Waitall");
  MPI_Fint mine[20 * kFortranStatusWords];
  if (statuses == MPI_F_STATUSES_IGNORE) statuses = mine;
  pmpi_waitall_(count, requests, statuses, ierr);
  MPI_Status s[20];
  const int n = *count <= 20 ? *count : 20;
  for (int i = 0; i < n; ++i) PMPI_Status_f2c(statuses + i * kFortranStatusWords, &s[i]);
  add_completions(&l, n, NULL, s);
  add_int(&l, "requests", *count);
  finish(&l);
}
void mpi_waitany_(MPI_Fint* count, MPI_Fint* requests, MPI_Fint* index, MPI_Fint* status,
                  MPI_Fint* ierr) {
  line_t l;
  start(&l, "MPI_Waitany");
  pmpi_waitany_(count, requests, index, status, ierr);
  if (*index != MPI_UNDEFINED) {
    const int from_zero = *index - 1;
    MPI_Status s;
    PMPI_Status_f2c(status, &s);
    add_completions(&l, 1, &from_zero, &s);
  }
  add_int(&l, "requests", *count);
  finish(&l);
}
