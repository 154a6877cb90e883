// Parlot example: multithreaded recursive quicksort (C, pthreads).
//
// Usage: quicksort_threads [n_elements] [threads]     (defaults: 1000 4)
//
// main fills an array of n pseudo-random 32-bit keys (fixed seed, own PRNG),
// splits it into `threads` fixed, contiguous chunks, and starts one thread per
// chunk. Each thread sorts only its own chunk with a recursive quicksort
// (median-of-three pivot, Hoare partition, insertion sort for small ranges).
// After joining, main merges the sorted chunks pairwise and checks the result.
//
// Determinism: the keys, the chunk boundaries and the algorithm are fixed, so
// the sequence of function calls in every thread depends only on the
// arguments, never on scheduling. There is no work stealing and no shared
// mutable state between the sorting threads.
//
// Output (one line): quicksort_threads n=<n> threads=<t> sorted=<0|1> checksum=<hex>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kInsertionSortCutoff = 16, kMaxThreads = 256 };

typedef struct {
  uint32_t* data;  // first element of this thread's chunk
  size_t count;    // elements in the chunk
} Chunk;

// ---- Deterministic input ---------------------------------------------------

// xorshift64* (Vigna); fixed seed, so the input is the same in every run.
static uint64_t rng_next(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static void fill_random(uint32_t* a, size_t n, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) a[i] = (uint32_t)(rng_next(&state) >> 32);
}

// ---- Sequential quicksort (runs inside each worker thread) -----------------

static void swap(uint32_t* a, uint32_t* b) {
  uint32_t t = *a;
  *a = *b;
  *b = t;
}

static void insertion_sort(uint32_t* a, size_t lo, size_t hi) {
  for (size_t i = lo + 1; i <= hi; ++i) {
    uint32_t key = a[i];
    size_t j = i;
    while (j > lo && a[j - 1] > key) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = key;
  }
}

// Orders a[lo], a[mid], a[hi] and returns the median value (left in a[mid]).
static uint32_t median_of_three(uint32_t* a, size_t lo, size_t hi) {
  size_t mid = lo + (hi - lo) / 2;
  if (a[mid] < a[lo]) swap(&a[mid], &a[lo]);
  if (a[hi] < a[lo]) swap(&a[hi], &a[lo]);
  if (a[hi] < a[mid]) swap(&a[hi], &a[mid]);
  return a[mid];
}

// Hoare partition of a[lo..hi] (hi - lo >= 2). Returns p such that every
// element of a[lo..p] is <= every element of a[p+1..hi], with lo <= p < hi.
static size_t partition(uint32_t* a, size_t lo, size_t hi) {
  uint32_t pivot = median_of_three(a, lo, hi);
  size_t i = lo - 1;
  size_t j = hi + 1;
  for (;;) {
    do {
      ++i;
    } while (a[i] < pivot);
    do {
      --j;
    } while (a[j] > pivot);
    if (i >= j) return j;
    swap(&a[i], &a[j]);
  }
}

static void quicksort(uint32_t* a, size_t lo, size_t hi) {
  if (hi - lo + 1 <= kInsertionSortCutoff) {
    insertion_sort(a, lo, hi);
    return;
  }
  size_t p = partition(a, lo, hi);
  quicksort(a, lo, p);
  quicksort(a, p + 1, hi);
}

static void* sort_worker(void* arg) {
  Chunk* chunk = (Chunk*)arg;
  if (chunk->count > 1) quicksort(chunk->data, 0, chunk->count - 1);
  return NULL;
}

// ---- Merge and check (main thread) -----------------------------------------

static void merge_two(const uint32_t* a, size_t na, const uint32_t* b, size_t nb, uint32_t* out) {
  size_t i = 0, j = 0, k = 0;
  while (i < na && j < nb) out[k++] = (b[j] < a[i]) ? b[j++] : a[i++];
  while (i < na) out[k++] = a[i++];
  while (j < nb) out[k++] = b[j++];
}

// Merges the sorted chunks bottom-up (pairs of neighbours, then pairs of
// pairs, ...). Chunk boundaries are the fixed ones computed by main.
// Returns the buffer that holds the fully sorted array (a or tmp).
static uint32_t* merge_chunks(uint32_t* a, uint32_t* tmp, const size_t* bounds, int nchunks) {
  uint32_t* src = a;
  uint32_t* dst = tmp;
  for (int width = 1; width < nchunks; width *= 2) {
    for (int c = 0; c < nchunks; c += 2 * width) {
      int mid = c + width < nchunks ? c + width : nchunks;
      int end = c + 2 * width < nchunks ? c + 2 * width : nchunks;
      size_t lo = bounds[c], m = bounds[mid], hi = bounds[end];
      merge_two(src + lo, m - lo, src + m, hi - m, dst + lo);
    }
    uint32_t* t = src;
    src = dst;
    dst = t;
  }
  return src;
}

static int is_sorted(const uint32_t* a, size_t n) {
  for (size_t i = 1; i < n; ++i)
    if (a[i - 1] > a[i]) return 0;
  return 1;
}

// Order-sensitive checksum: sum over i of a[i] * (i + 1), modulo 2^64.
static uint64_t checksum(const uint32_t* a, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += (uint64_t)a[i] * (uint64_t)(i + 1);
  return sum;
}

static int parse_count(const char* text, const char* what, unsigned long long max,
                       unsigned long long* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < 1 || v > max) {
    fprintf(stderr, "quicksort_threads: invalid %s '%s' (expected 1..%llu)\n", what, text, max);
    return 0;
  }
  *out = v;
  return 1;
}

int main(int argc, char** argv) {
  unsigned long long n = 1000, threads = 4;
  if (argc > 3) {
    fprintf(stderr, "usage: quicksort_threads [n_elements] [threads]\n");
    return 2;
  }
  if (argc > 1 && !parse_count(argv[1], "n_elements", 1ULL << 32, &n)) return 2;
  if (argc > 2 && !parse_count(argv[2], "threads", kMaxThreads, &threads)) return 2;
  if (threads > n) threads = n;

  uint32_t* a = malloc(n * sizeof *a);
  uint32_t* tmp = malloc(n * sizeof *tmp);
  Chunk chunks[kMaxThreads];
  size_t bounds[kMaxThreads + 1];
  pthread_t tids[kMaxThreads];
  if (a == NULL || tmp == NULL) {
    fprintf(stderr, "quicksort_threads: out of memory for %llu elements\n", n);
    return 1;
  }
  fill_random(a, n, 0x9E3779B97F4A7C15ULL);

  // Fixed static partition: chunk t is [t*n/T, (t+1)*n/T).
  for (unsigned long long t = 0; t <= threads; ++t) bounds[t] = (size_t)(t * n / threads);
  for (unsigned long long t = 0; t < threads; ++t) {
    chunks[t].data = a + bounds[t];
    chunks[t].count = bounds[t + 1] - bounds[t];
    int rc = pthread_create(&tids[t], NULL, sort_worker, &chunks[t]);
    if (rc != 0) {
      fprintf(stderr, "quicksort_threads: pthread_create: %s\n", strerror(rc));
      return 1;
    }
  }
  for (unsigned long long t = 0; t < threads; ++t) pthread_join(tids[t], NULL);

  uint32_t* sorted = merge_chunks(a, tmp, bounds, (int)threads);
  printf("quicksort_threads n=%llu threads=%llu sorted=%d checksum=%016" PRIx64 "\n", n, threads,
         is_sorted(sorted, n), checksum(sorted, n));
  free(a);
  free(tmp);
  return 0;
}
