/* End-to-end fixture of the flight recorder's MPI_Abort trigger
   (flight_test.cpp), run on 2 ranks under mpirun with PARLOT_MODE=flight:

     flight_mpi_fixture ROUNDS

   Every rank starts a helper thread that makes irregular calls (rounds of
   helper_round) until the process ends, makes ROUNDS rounds itself, then
   meets the other rank in MPI_Barrier. Rank 1 then calls MPI_Abort (error
   code 3) from abort_outer -> abort_inner; rank 0 waits in MPI_Recv for a
   message that never comes, until mpirun ends it. Prints "aborting"
   (flushed) on rank 1 just before MPI_Abort. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

static unsigned next_random(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 16;
}

NOINLINE static void leaf_a(unsigned* s) {
  sink += next_random(s) & 3;
}
NOINLINE static void leaf_b(unsigned* s) {
  sink ^= next_random(s);
}
NOINLINE static void mid(unsigned* s, int depth) {
  const unsigned n = 1 + next_random(s) % 3;
  for (unsigned i = 0; i < n; ++i) {
    if (depth < 3 && next_random(s) % 2 == 0) {
      mid(s, depth + 1);
    } else if (next_random(s) % 2 == 0) {
      leaf_a(s);
    } else {
      leaf_b(s);
    }
  }
}

NOINLINE static void main_round(unsigned* s) {
  mid(s, 0);
}
NOINLINE static void helper_round(unsigned* s) {
  mid(s, 0);
}

/* The rounds run one frame below the thread's start, so a window that
   starts in them starts inside two open frames at least. */
NOINLINE static void helper_rounds(unsigned* s) {
  for (;;) helper_round(s);
}
NOINLINE static void main_rounds(unsigned* s, long n) {
  for (long i = 0; i < n; ++i) main_round(s);
}

static void* helper(void* arg) {
  unsigned s = (unsigned)(unsigned long)arg;
  helper_rounds(&s);
  return NULL;
}

NOINLINE static void abort_inner(void) {
  printf("aborting\n");
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 3);
}
NOINLINE static void abort_outer(void) {
  abort_inner();
}
NOINLINE static void wait_forever(void) {
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (argc != 2) MPI_Abort(MPI_COMM_WORLD, 2);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pthread_t t;
  pthread_create(&t, NULL, helper, (void*)(unsigned long)(rank + 11));
  unsigned s = (unsigned)rank + 1;
  main_rounds(&s, atol(argv[1]));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) abort_outer();
  wait_forever();
  MPI_Finalize();
  return 0;
}
