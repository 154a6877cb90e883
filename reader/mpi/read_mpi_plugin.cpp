// libparlot-read-mpi.so: the few MPI calls parlot-read makes under mpirun
// (read_mpi_plugin.h), over MPI_COMM_WORLD.
#include "read_mpi_plugin.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>

namespace {

constexpr std::uint64_t kChunk = 1u << 30;  // bytes per MPI message (counts are int)
constexpr int kSizeTag = 9001;
constexpr int kDataTag = 9002;

}  // namespace

extern "C" {

int parlot_read_mpi_init(int* rank, int* size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    if (const int rc = MPI_Init(nullptr, nullptr); rc != MPI_SUCCESS) return rc;
  }
  if (const int rc = MPI_Comm_rank(MPI_COMM_WORLD, rank); rc != MPI_SUCCESS) return rc;
  return MPI_Comm_size(MPI_COMM_WORLD, size);
}

int parlot_read_mpi_send(const void* data, uint64_t bytes, int dest) {
  if (const int rc = MPI_Send(&bytes, 1, MPI_UINT64_T, dest, kSizeTag, MPI_COMM_WORLD);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const auto* p = static_cast<const char*>(data);
  for (std::uint64_t sent = 0; sent < bytes;) {
    const std::uint64_t n = std::min(kChunk, bytes - sent);
    if (const int rc =
            MPI_Send(p + sent, static_cast<int>(n), MPI_BYTE, dest, kDataTag, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return rc;
    }
    sent += n;
  }
  return MPI_SUCCESS;
}

int parlot_read_mpi_receive_size(int source, uint64_t* bytes) {
  return MPI_Recv(bytes, 1, MPI_UINT64_T, source, kSizeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int parlot_read_mpi_receive(void* data, uint64_t bytes, int source) {
  auto* p = static_cast<char*>(data);
  for (std::uint64_t received = 0; received < bytes;) {
    const std::uint64_t n = std::min(kChunk, bytes - received);
    if (const int rc = MPI_Recv(p + received, static_cast<int>(n), MPI_BYTE, source, kDataTag,
                                MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc != MPI_SUCCESS) {
      return rc;
    }
    received += n;
  }
  return MPI_SUCCESS;
}

int parlot_read_mpi_max(int value, int* result) {
  return MPI_Allreduce(&value, result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

int parlot_read_mpi_finalize(void) {
  return MPI_Finalize();
}

}  // extern "C"
