// The C interface between parlot-read and its MPI plugin
// (libparlot-read-mpi.so). parlot-read does not link libmpi: under mpirun it
// loads the plugin with dlopen (reader/tool/reader_team.cpp), so the same
// binary runs serially on a machine without MPI. Every function returns 0
// on success, else an MPI error code.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// MPI_Init; this process's rank and the size of MPI_COMM_WORLD.
int parlot_read_mpi_init(int* rank, int* size);
/// Sends `bytes` bytes to rank `dest` (the length first, then the data in
/// chunks of at most 1 GiB).
int parlot_read_mpi_send(const void* data, uint64_t bytes, int dest);
/// Receives the length of the next parlot_read_mpi_send() from `source`.
int parlot_read_mpi_receive_size(int source, uint64_t* bytes);
/// Receives its data (`bytes` from parlot_read_mpi_receive_size()).
int parlot_read_mpi_receive(void* data, uint64_t bytes, int source);
/// The maximum of `value` over all ranks, on every rank.
int parlot_read_mpi_max(int value, int* result);
/// MPI_Finalize.
int parlot_read_mpi_finalize(void);

#ifdef __cplusplus
}
#endif
