/* An independent record of the MPI calls a program makes, for checking
   Parlot's generated MPI wrappers (mpi_wrappers_test.cpp): a hand-written
   PMPI interposer of the calls the MPI examples make, C and gfortran
   bindings, that appends each call's standard name to
   $PARLOT_TEST_MPI_LOG/<pid>.log and then calls the PMPI entry point.
   Preloaded after libparlotmpi.so, it receives the calls Parlot's wrappers
   forward (they call the next definition), so both see the same calls. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int log_fd = -1;

static void log_call(const char* name) {
  if (log_fd < 0) {
    const char* dir = getenv("PARLOT_TEST_MPI_LOG");
    if (dir == NULL) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.log", dir, (int)getpid());
    log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) return;
  }
  char line[128];
  const int n = snprintf(line, sizeof line, "%s\n", name);
  (void)!write(log_fd, line, (size_t)n);
}

/* ---- C bindings ---- */
int MPI_Init(int* argc, char*** argv) {
  log_call("MPI_Init");
  return PMPI_Init(argc, argv);
}
int MPI_Finalize(void) {
  log_call("MPI_Finalize");
  return PMPI_Finalize();
}
int MPI_Abort(MPI_Comm comm, int code) {
  log_call("MPI_Abort");
  return PMPI_Abort(comm, code);
}
int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  log_call("MPI_Comm_rank");
  return PMPI_Comm_rank(comm, rank);
}
int MPI_Comm_size(MPI_Comm comm, int* size) {
  log_call("MPI_Comm_size");
  return PMPI_Comm_size(comm, size);
}
int MPI_Barrier(MPI_Comm comm) {
  log_call("MPI_Barrier");
  return PMPI_Barrier(comm);
}
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  log_call("MPI_Send");
  return PMPI_Send(buf, count, type, dest, tag, comm);
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  log_call("MPI_Recv");
  return PMPI_Recv(buf, count, type, source, tag, comm, status);
}
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                 int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                 MPI_Status* status) {
  log_call("MPI_Sendrecv");
  return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                       status);
}
int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  log_call("MPI_Allreduce");
  return PMPI_Allreduce(s, r, count, type, op, comm);
}
int MPI_Allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm) {
  log_call("MPI_Allgather");
  return PMPI_Allgather(s, scount, stype, r, rcount, rtype, comm);
}
int MPI_Allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  log_call("MPI_Allgatherv");
  return PMPI_Allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm);
}
int MPI_Alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount,
                 MPI_Datatype rtype, MPI_Comm comm) {
  log_call("MPI_Alltoall");
  return PMPI_Alltoall(s, scount, stype, r, rcount, rtype, comm);
}
int MPI_Alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype,
                  void* r, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
                  MPI_Comm comm) {
  log_call("MPI_Alltoallv");
  return PMPI_Alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm);
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

void mpi_init_(MPI_Fint* ierr) {
  log_call("MPI_Init");
  pmpi_init_(ierr);
}
void mpi_finalize_(MPI_Fint* ierr) {
  log_call("MPI_Finalize");
  pmpi_finalize_(ierr);
}
void mpi_comm_rank_(MPI_Fint* comm, MPI_Fint* rank, MPI_Fint* ierr) {
  log_call("MPI_Comm_rank");
  pmpi_comm_rank_(comm, rank, ierr);
}
void mpi_comm_size_(MPI_Fint* comm, MPI_Fint* size, MPI_Fint* ierr) {
  log_call("MPI_Comm_size");
  pmpi_comm_size_(comm, size, ierr);
}
void mpi_barrier_(MPI_Fint* comm, MPI_Fint* ierr) {
  log_call("MPI_Barrier");
  pmpi_barrier_(comm, ierr);
}
void mpi_send_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* dest, MPI_Fint* tag,
               MPI_Fint* comm, MPI_Fint* ierr) {
  log_call("MPI_Send");
  pmpi_send_(buf, count, type, dest, tag, comm, ierr);
}
void mpi_recv_(void* buf, MPI_Fint* count, MPI_Fint* type, MPI_Fint* source, MPI_Fint* tag,
               MPI_Fint* comm, MPI_Fint* status, MPI_Fint* ierr) {
  log_call("MPI_Recv");
  pmpi_recv_(buf, count, type, source, tag, comm, status, ierr);
}
void mpi_allreduce_(void* s, void* r, MPI_Fint* count, MPI_Fint* type, MPI_Fint* op, MPI_Fint* comm,
                    MPI_Fint* ierr) {
  log_call("MPI_Allreduce");
  pmpi_allreduce_(s, r, count, type, op, comm, ierr);
}
