/* The arguments of one MPI call, as the generated wrappers collect them when
   PARLOT_MPI_ARGS=1, and their encoding as a side record of kind 3
   (format::AuxKind::kMpiCall; docs/FORMAT.md "Kind 3, MPI call"). Plain C,
   never instrumented, no allocation: a record lives on the wrapper's stack.
   The runtime's internal entry points (runtime/call_attributes.cpp) are
   found with dlsym once, so the wrappers run without the runtime too. */
#pragma once

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fields of a kind-3 record: bit i of the presence mask is field i. Every
   field but PARLOT_MPI_COMPLETED is one signed integer. */
enum parlot_mpi_field {
  PARLOT_MPI_DEST = 0,           /* peer rank a message goes to */
  PARLOT_MPI_SOURCE = 1,         /* peer rank a message comes from (argument) */
  PARLOT_MPI_TAG = 2,            /* tag (of the message sent, for Sendrecv) */
  PARLOT_MPI_BYTES = 3,          /* count x datatype size of the (send) buffer, bytes */
  PARLOT_MPI_COMM = 4,           /* communicator ID (mpi_communicators.c) */
  PARLOT_MPI_COMM_SIZE = 5,      /* its size (local group), ranks */
  PARLOT_MPI_ROOT = 6,           /* root rank of a rooted collective */
  PARLOT_MPI_RECV_TAG = 7,       /* tag of the message received (Sendrecv) */
  PARLOT_MPI_RECV_BYTES = 8,     /* count x datatype size of the receive buffer, bytes */
  PARLOT_MPI_STATUS_SOURCE = 9,  /* MPI_SOURCE of the status returned */
  PARLOT_MPI_STATUS_TAG = 10,    /* MPI_TAG of the status returned */
  PARLOT_MPI_STATUS_BYTES = 11,  /* MPI_Get_count(status, MPI_BYTE) of it */
  PARLOT_MPI_NEW_COMM = 12,      /* ID of the communicator the call created */
  PARLOT_MPI_NEW_COMM_SIZE = 13, /* its size, ranks */
  PARLOT_MPI_COMPLETED = 14,     /* requests completed: a list (see FORMAT.md) */
  PARLOT_MPI_REQUESTS = 15,      /* requests handed to a Wait/Test call */
  PARLOT_MPI_OP = 16,            /* reduction operation (parlot_mpi_op_code) */
  PARLOT_MPI_FIELDS = 17
};

/* Completions a record keeps (the first ones, in the order MPI reports them). */
#define PARLOT_MPI_MAX_COMPLETIONS 20

typedef struct parlot_mpi_record {
  const void* fn; /* the wrapper's address: the function ID's */
  uint64_t entry; /* the entry event's index, or UINT64_MAX */
  uint32_t mask;  /* fields present (bit = parlot_mpi_field) */
  int64_t value[PARLOT_MPI_FIELDS];
  int completions;                                  /* entries of `completed` used */
  int64_t completed[PARLOT_MPI_MAX_COMPLETIONS][4]; /* index, source, tag, bytes */
} parlot_mpi_record;

/* Nonzero when PARLOT_MPI_ARGS=1 and the runtime's entry points were found
   (read once, by a constructor of this library). */
extern int parlot_mpi_args;

/* Starts a record for the call of `fn` whose entry hook just ran. */
void parlot_mpi_record_begin(parlot_mpi_record* r, const void* fn);
/* Encodes the record and hands it to the runtime, which keeps it if the
   entry event was recorded and `fn`'s frame is still the thread's top one. */
void parlot_mpi_record_end(parlot_mpi_record* r);
/* For a call that records results after it returns: hands the arguments
   known before the call to the runtime as a kind-8 record ("MPI call
   begun"), so a call that never returns (a hung receive or wait) keeps
   them. The record stays usable: parlot_mpi_record_end after the call. */
void parlot_mpi_record_begun(parlot_mpi_record* r);

/* Sets a scalar field. */
void parlot_mpi_put(parlot_mpi_record* r, enum parlot_mpi_field f, int64_t v);
/* Sets `f` to count x size of `type` in bytes; nothing when `buf` is
   MPI_IN_PLACE (the count and type are not significant) or `type` is
   MPI_DATATYPE_NULL. */
void parlot_mpi_put_bytes(parlot_mpi_record* r, enum parlot_mpi_field f, const void* buf,
                          int64_t count, MPI_Datatype type);
/* Sets PARLOT_MPI_OP to the code of `op`: 1 MPI_MAX, 2 MPI_MIN, 3 MPI_SUM,
   4 MPI_PROD, 5 MPI_LAND, 6 MPI_BAND, 7 MPI_LOR, 8 MPI_BOR, 9 MPI_LXOR,
   10 MPI_BXOR, 11 MPI_MINLOC, 12 MPI_MAXLOC, 13 MPI_REPLACE, 14 MPI_NO_OP,
   0 a user-defined operation (docs/FORMAT.md); nothing for MPI_OP_NULL. */
void parlot_mpi_put_op(parlot_mpi_record* r, MPI_Op op);
/* Sets PARLOT_MPI_COMM and PARLOT_MPI_COMM_SIZE (nothing for MPI_COMM_NULL;
   no ID for a communicator the wrappers did not see created). */
void parlot_mpi_put_comm(parlot_mpi_record* r, MPI_Comm comm);
/* Sets the three status fields from `status` (not MPI_STATUS_IGNORE). */
void parlot_mpi_put_status(parlot_mpi_record* r, const MPI_Status* status);
/* Appends a completed request (its index in the call's request array) with
   its status; nothing more once PARLOT_MPI_MAX_COMPLETIONS are kept. */
void parlot_mpi_add_completion(parlot_mpi_record* r, int64_t index, const MPI_Status* status);

/* ---- Communicator IDs (mpi_communicators.c) ---- */

/* ID of `comm`: 0 for MPI_COMM_WORLD, 1 for MPI_COMM_SELF, the agreed ID of
   a communicator created through a wrapper, -1 when unknown. */
int64_t parlot_mpi_comm_id(MPI_Comm comm);
/* After a call that created `comm` (collective over its members): agrees
   with the other members on its ID (one or two MPI_Allreduce(MAX) on it),
   remembers it and sets PARLOT_MPI_NEW_COMM and _SIZE. Nothing for
   MPI_COMM_NULL. Every member must call it (PARLOT_MPI_ARGS on every rank). */
void parlot_mpi_comm_created(parlot_mpi_record* r, MPI_Comm comm);
/* Before a call that frees `comm`: records it as the call's communicator
   and forgets its ID. */
void parlot_mpi_comm_freed(parlot_mpi_record* r, MPI_Comm comm);

/* ---- The Fortran bindings (gfortran: every argument by reference) ---- */

int64_t parlot_mpi_fint(const void* p);
MPI_Comm parlot_mpi_comm_f2c(const void* p);
MPI_Datatype parlot_mpi_type_f2c(const void* p);
/* The C handle of the Fortran operation handle at `p` (PMPI_Op_f2c). */
MPI_Op parlot_mpi_op_f2c(const void* p);
/* The buffer argument as C sees it: MPI_IN_PLACE for Fortran's MPI_IN_PLACE. */
const void* parlot_mpi_fortran_buffer(const void* p);
/* Sets the status fields from a Fortran status (nothing for Fortran's
   MPI_STATUS_IGNORE, or when that cannot be told). */
void parlot_mpi_put_fortran_status(parlot_mpi_record* r, const void* status);
/* Appends a completion from a Fortran status (as parlot_mpi_add_completion). */
void parlot_mpi_add_fortran_completion(parlot_mpi_record* r, int64_t index, const void* status);

/* The Fortran binding's MPI_Waitall/Testall (`indices` NULL: request i is
   completion i) and MPI_Waitsome/Testsome (`indices`: the 1-based indices
   the call returned): adds the first `count` completions of the Fortran
   statuses array `statuses` (MPI_STATUS_SIZE integers each). Nothing for
   MPI_STATUSES_IGNORE (which parlot_mpi_fortran_statuses replaces). */
/* Fortran statuses to hand the MPI library: `statuses` itself, or `mine`
   (room for `count` statuses, at most PARLOT_MPI_MAX_COMPLETIONS) in place
   of MPI_STATUSES_IGNORE (count 1: MPI_STATUS_IGNORE), so the completions
   can be recorded as the C bindings do. */
void* parlot_mpi_fortran_statuses(void* statuses, int64_t count, MPI_Fint* mine);

void parlot_mpi_add_fortran_completions(parlot_mpi_record* r, const void* statuses, int64_t count,
                                        const void* indices);

/* The generated functions that collect arguments: out of the wrappers' path. */
#define PARLOT_MPI_ARGS_FN static __attribute__((noinline, cold, no_instrument_function))

#ifdef __cplusplus
}
#endif
