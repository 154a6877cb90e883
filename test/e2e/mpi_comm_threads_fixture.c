/* Communicators created concurrently (mpi_comm_ids_test.cpp): under
   MPI_THREAD_MULTIPLE, THREADS threads per rank each duplicate their own
   communicator (a duplicate of MPI_COMM_WORLD made by the main thread, so
   no two threads run a collective on one communicator) ROUNDS times, all
   at once, holding every duplicate alive until all threads are done. With
   PARLOT_MPI_ARGS=1 every MPI_Comm_dup records the new communicator's ID;
   the IDs of communicators alive together must differ. Prints one line on
   rank 0; exits 77 when the MPI library does not give MPI_THREAD_MULTIPLE.
   Arguments: [THREADS [ROUNDS]] (defaults 4 and 8). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxThreads = 16, kMaxRounds = 64 };

static int threads = 4, rounds = 8;
static MPI_Comm base[kMaxThreads];
static MPI_Comm dups[kMaxThreads][kMaxRounds];
static pthread_barrier_t start;

static void duplicate_all(int t) {
  for (int k = 0; k < rounds; ++k) MPI_Comm_dup(base[t], &dups[t][k]);
}

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  pthread_barrier_wait(&start);
  duplicate_all(t);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (argc > 2) rounds = atoi(argv[2]);
  if (threads < 1 || threads > kMaxThreads || rounds < 1 || rounds > kMaxRounds) return 2;
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    return 77;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &base[t]);

  pthread_t tid[kMaxThreads];
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (int t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, worker, (void*)(long)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  pthread_barrier_destroy(&start);

  MPI_Barrier(MPI_COMM_WORLD);
  for (int t = 0; t < threads; ++t) {
    for (int k = 0; k < rounds; ++k) MPI_Comm_free(&dups[t][k]);
    MPI_Comm_free(&base[t]);
  }
  if (rank == 0) printf("%d threads x %d duplicates\n", threads, rounds);
  MPI_Finalize();
  return 0;
}
