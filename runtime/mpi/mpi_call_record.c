/* Collecting and encoding the arguments of one MPI call (PARLOT_MPI_ARGS=1).
   See mpi_call_record.h and docs/FORMAT.md "Kind 3, MPI call". */
#define _GNU_SOURCE
#include "mpi_call_record.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_predefined_handles.h"
#include "mpi_wrapper_support.h"

#define PARLOT_NI __attribute__((no_instrument_function))

int parlot_mpi_args = 0;

/* runtime/call_attributes.cpp */
typedef uint64_t (*parlot_call_entry_t)(const void* fn);
typedef void (*parlot_call_attributes_t)(const void* fn, uint64_t entry, unsigned kind,
                                         const void* data, size_t n);
static parlot_call_entry_t parlot_call_entry;
static parlot_call_attributes_t parlot_call_attributes;

/* Side-record kind of MPI calls (format::AuxKind::kMpiCall). */
enum { kMpiCallKind = 3, kMpiCallBegunKind = 8, kMaxData = 1024 };

__attribute__((constructor, no_instrument_function)) static void parlot_mpi_args_init(void) {
  const char* v = getenv("PARLOT_MPI_ARGS");
  if (v == NULL || strcmp(v, "1") != 0) return;
  parlot_call_entry = (parlot_call_entry_t)dlsym(RTLD_DEFAULT, "parlot_rt_call_entry");
  parlot_call_attributes =
      (parlot_call_attributes_t)dlsym(RTLD_DEFAULT, "parlot_rt_call_attributes");
  parlot_mpi_args = parlot_call_entry != NULL && parlot_call_attributes != NULL;
}

PARLOT_NI void parlot_mpi_record_begin(parlot_mpi_record* r, const void* fn) {
  r->fn = fn;
  r->entry = parlot_call_entry(fn);
  r->mask = 0;
  r->completions = 0;
}

PARLOT_NI void parlot_mpi_put(parlot_mpi_record* r, enum parlot_mpi_field f, int64_t v) {
  r->mask |= 1u << f;
  r->value[f] = v;
}

PARLOT_NI void parlot_mpi_put_op(parlot_mpi_record* r, MPI_Op op) {
  if (op == MPI_OP_NULL) return;
  /* Handles compared, not codes: Open MPI's are addresses (different in
     every process), MPICH's integers. */
  const MPI_Op known[] = {MPI_MAX,    MPI_MIN,    MPI_SUM,     MPI_PROD, MPI_LAND,
                          MPI_BAND,   MPI_LOR,    MPI_BOR,     MPI_LXOR, MPI_BXOR,
                          MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};
  int64_t code = 0;
  for (int i = 0; i < (int)(sizeof known / sizeof known[0]); ++i) {
    if (op == known[i]) {
      code = i + 1;
      break;
    }
  }
  parlot_mpi_put(r, PARLOT_MPI_OP, code);
}

typedef int (*type_size_t)(MPI_Datatype, int*);
typedef int (*get_count_t)(const MPI_Status*, MPI_Datatype, int*);
static type_size_t next_type_size;
static get_count_t next_get_count;

PARLOT_NI void parlot_mpi_put_bytes(parlot_mpi_record* r, enum parlot_mpi_field f, const void* buf,
                                    int64_t count, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE || type == MPI_DATATYPE_NULL) return;
  type_size_t size_of = (type_size_t)parlot_mpi_next((void**)&next_type_size, "PMPI_Type_size");
  int size = 0;
  if (size_of(type, &size) != MPI_SUCCESS) return;
  parlot_mpi_put(r, f, count * (int64_t)size);
}

static PARLOT_NI int64_t status_bytes(const MPI_Status* s) {
  get_count_t get_count = (get_count_t)parlot_mpi_next((void**)&next_get_count, "PMPI_Get_count");
  int n = 0;
  if (get_count(s, MPI_BYTE, &n) != MPI_SUCCESS) return -1;
  return n;
}

PARLOT_NI void parlot_mpi_put_status(parlot_mpi_record* r, const MPI_Status* s) {
  if (s == MPI_STATUS_IGNORE) return;
  parlot_mpi_put(r, PARLOT_MPI_STATUS_SOURCE, s->MPI_SOURCE);
  parlot_mpi_put(r, PARLOT_MPI_STATUS_TAG, s->MPI_TAG);
  parlot_mpi_put(r, PARLOT_MPI_STATUS_BYTES, status_bytes(s));
}

PARLOT_NI void parlot_mpi_add_completion(parlot_mpi_record* r, int64_t index, const MPI_Status* s) {
  r->mask |= 1u << PARLOT_MPI_COMPLETED;
  if (r->completions == PARLOT_MPI_MAX_COMPLETIONS || s == MPI_STATUS_IGNORE) return;
  int64_t* c = r->completed[r->completions++];
  c[0] = index;
  c[1] = s->MPI_SOURCE;
  c[2] = s->MPI_TAG;
  c[3] = status_bytes(s);
}

static PARLOT_NI uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static PARLOT_NI uint8_t* put_signed(uint8_t* p, int64_t v) {
  return put_varint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); /* zigzag */
}

/* Encodes the record and hands it to the runtime as a side record of `kind`. */
static PARLOT_NI void send_record(parlot_mpi_record* r, unsigned kind) {
  if (r->entry == UINT64_MAX) return;
  /* Worst case: mask 3 bytes, 15 scalars and a list of 20 x 4 varints of
     10 bytes each, plus its count: 3 + 150 + 1 + 800 < kMaxData. */
  _Static_assert(3 + 10 * (PARLOT_MPI_FIELDS - 1) + 1 + 40 * PARLOT_MPI_MAX_COMPLETIONS <= kMaxData,
                 "a kind-3 record fits a side record");
  uint8_t data[kMaxData];
  uint8_t* p = put_varint(data, r->mask);
  for (int f = 0; f < PARLOT_MPI_FIELDS; ++f) {
    if ((r->mask & (1u << f)) == 0) continue;
    if (f == PARLOT_MPI_COMPLETED) {
      p = put_varint(p, (uint64_t)r->completions);
      for (int i = 0; i < r->completions; ++i) {
        for (int k = 0; k < 4; ++k) p = put_signed(p, r->completed[i][k]);
      }
    } else {
      p = put_signed(p, r->value[f]);
    }
  }
  parlot_call_attributes(r->fn, r->entry, kind, data, (size_t)(p - data));
}

PARLOT_NI void parlot_mpi_record_end(parlot_mpi_record* r) {
  send_record(r, kMpiCallKind);
}

PARLOT_NI void parlot_mpi_record_begun(parlot_mpi_record* r) {
  send_record(r, kMpiCallBegunKind);
}
