// A C++ MPI program through Open MPI's C++ bindings (libmpi_cxx), run as a
// singleton: libmpi_cxx's constructor builds MPI::COMM_WORLD with the
// program's inline, instrumented constructors before the runtime's
// constructor runs. With PARLOT_LIBCALLS=1 the MPI calls the inline
// bindings make (MPI_Init, MPI_Comm_rank, MPI_Allreduce, MPI_Finalize) are
// library calls of the program and must be recorded.
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  MPI::Init(argc, argv);
  const int rank = MPI::COMM_WORLD.Get_rank();
  double local = rank + 1.5, total = 0;
  MPI::COMM_WORLD.Allreduce(&local, &total, 1, MPI::DOUBLE, MPI::SUM);
  std::printf("total %.1f\n", total);
  MPI::Finalize();
  return 0;
}
