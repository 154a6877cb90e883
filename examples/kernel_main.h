// What the NAS-style kernels (cg.c, ep.c, is.c, mg.c) share: the MPI rank
// and rank count, argument parsing, and main(), which runs the kernel's
// run() between MPI_Init and MPI_Finalize in the MPI build
// (-DPARLOT_EXAMPLE_MPI) and on its own in the serial build.
//
// Include once, after defining KERNEL_NAME (the program name used in error
// messages); the including file defines `static int run(int argc, char**
// argv)`, which returns the exit status.
#ifndef PARLOT_EXAMPLES_KERNEL_MAIN_H
#define PARLOT_EXAMPLES_KERNEL_MAIN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef PARLOT_EXAMPLE_MPI
#include <mpi.h>
#endif

static int my_rank = 0;    // MPI rank (0 in the serial build)
static int num_ranks = 1;  // MPI ranks (1 in the serial build)

// Parses a decimal `text` in [min, max] into *out. Returns 1, or 0 after
// rank 0 printed "<kernel>: invalid <what> '<text>' (expected min..max)".
static int parse_long(const char* text, const char* what, long min, long max, long* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
    if (my_rank == 0) {
      fprintf(stderr, "%s: invalid %s '%s' (expected %ld..%ld)\n", KERNEL_NAME, what, text, min,
              max);
    }
    return 0;
  }
  *out = v;
  return 1;
}

static int run(int argc, char** argv);

int main(int argc, char** argv) {
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &num_ranks);
#endif
  int status = run(argc, argv);
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Finalize();
#endif
  return status;
}

#endif  // PARLOT_EXAMPLES_KERNEL_MAIN_H
