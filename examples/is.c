// Parlot example: integer sort kernel in the style of NAS IS (C).
//
// Usage: is [log2_keys] [log2_max_key] [iterations]     (defaults: 10 8 4)
//
// Generates 2^log2_keys keys in [0, 2^log2_max_key) like NAS create_seq: each
// key is max_key/4 times the sum of four uniforms from the NAS linear
// congruential generator (x <- 5^13 x mod 2^46, seed 314159265; vranlc per
// chunk of keys in generate_keys), so the keys are bell-shaped. Then, `iterations` times, as in NAS
// IS: modify two keys (key[i] = i and key[i + iterations] = max_key - i in iteration i), and rank
// all keys with a bucket sort: count the keys per bucket (count_chunk),
// turn the counts into bucket offsets (bucket_offsets), scatter the keys to
// their buckets (scatter_chunk), and within every bucket count the keys per
// key value and prefix-sum the counts (rank_bucket), giving for every key
// value k the number of keys <= k. Partial verification (partial_verify):
// the ranks of TEST_KEYS keys at fixed positions must equal the number of keys
// below them counted directly (count_below_chunk). After the last iteration,
// full verification puts every key at its ranked position (place_chunk) and
// checks that the result is sorted (check_sorted_chunk), with a checksum of
// sum((i + 1) * sorted[i]) mod 2^64.
//
// There are 2^(log2_keys - 6) buckets (at most one per key value), about 64
// keys each (NAS uses 2^10), and the key loops run over chunks of CHUNK keys,
// so the calls are as dense as in the other examples. `is 16 11 10` has the
// keys of NAS class S, and its ranks match NAS's reference ranks.
// Single-threaded and deterministic.
//
// Built with -DPARLOT_EXAMPLE_MPI it is an MPI program: every rank generates
// one contiguous block of the keys (jumping ahead in the random stream), the
// bucket counts are summed with MPI_Allreduce, whole buckets are assigned to
// ranks by the global counts, each rank's keys are sent to the ranks owning
// their buckets with MPI_Alltoall (counts) and MPI_Alltoallv (keys), and every
// rank ranks its own buckets. Rank 0 prints the line, identical to the serial
// program's.
//
// Output (one line):
//   is keys=<n> max_key=<m> iterations=<k> partial=<passed>/<tests> sorted=<0|1> checksum=<hex>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_NAME "is"
#include "kernel_main.h"

enum { CHUNK = 32, KEYS_PER_BUCKET_LOG2 = 6, TEST_KEYS = 5 };
static const uint64_t LCG_A = 1220703125ULL;  // 5^13, NAS's multiplier
static const uint64_t SEED = 314159265ULL;    // NAS IS's seed
static const uint64_t MASK46 = (1ULL << 46) - 1;

typedef struct {
  long num_keys;     // all keys
  long max_key;      // keys are in [0, max_key)
  long iterations;   // also the distance between the two modified keys
  int bucket_shift;  // bucket of key k: k >> bucket_shift
  long num_buckets;
  // This rank's keys: global indices [first_key, first_key + local_keys).
  long first_key, local_keys;
  int* keys;
  int* bucketed;      // local keys in bucket order (send buffer)
  long* send_count;   // local keys per bucket, then the bucket write cursors
  long* bucket_size;  // all keys per bucket
  long* bucket_ptr;   // global position of each bucket's first key
  // This rank's buckets [first_bucket, last_bucket), holding global key
  // positions [first_pos, first_pos + owned_keys).
  long first_bucket, last_bucket, first_pos, owned_keys;
  const int* ranked;  // keys of this rank's buckets, in bucket order
  long* key_count;    // per key value: number of keys <= it (own buckets)
  long capacity;      // of owned and received
  int* owned;         // MPI: the keys of this rank's buckets, in bucket order
  int* received;      // MPI: keys from every rank; then the sorted keys
  long* local_count;  // MPI: this rank's keys per bucket
  long test_index[TEST_KEYS];
} Sorter;

// ---- NAS pseudo-random numbers ------------------------------------------------

// NAS randlc: x <- a x mod 2^46; returns x / 2^46. The low 46 bits of the
// 64-bit wrapped product are exact, so this equals NAS's split-double form.
static double randlc(uint64_t* x, uint64_t a) {
  *x = (*x * a) & MASK46;
  return (double)*x * 0x1.0p-46;
}

// a^n mod 2^46 by binary powering, to jump ahead n steps in the stream.
static uint64_t lcg_power(uint64_t a, long n) {
  uint64_t result = 1, square = a;
  for (; n != 0; n /= 2) {
    if (n % 2 != 0) randlc(&result, square);
    randlc(&square, square);
  }
  return result;
}

// NAS vranlc: the next n values of the stream into y.
static void vranlc(long n, uint64_t* x, uint64_t a, double* y) {
  uint64_t s = *x;
  for (long i = 0; i < n; ++i) {
    s = (s * a) & MASK46;
    y[i] = (double)s * 0x1.0p-46;
  }
  *x = s;
}

// NAS create_seq for count <= CHUNK keys, continuing the stream at *seed:
// max_key/4 times the sum of four uniforms.
static void generate_keys(uint64_t* seed, long max_key, int* keys, long count) {
  double u[4 * CHUNK];
  vranlc(4 * count, seed, LCG_A, u);
  double k = (double)(max_key / 4);
  for (long i = 0; i < count; ++i) {
    double x = u[4 * i];
    x += u[4 * i + 1];
    x += u[4 * i + 2];
    x += u[4 * i + 3];
    keys[i] = (int)(k * x);
  }
}

// ---- Ranking ------------------------------------------------------------------

// Sets the global key `index` to `value` if this rank holds it.
static void set_key(Sorter* s, long index, int value) {
  if (index >= s->first_key && index < s->first_key + s->local_keys) {
    s->keys[index - s->first_key] = value;
  }
}

// NAS IS's per-iteration modification of two keys.
static void modify_keys(Sorter* s, long iteration) {
  set_key(s, iteration, (int)iteration);
  set_key(s, iteration + s->iterations, (int)(s->max_key - iteration));
}

static void count_chunk(const int* keys, long count, int shift, long* bucket_count) {
  for (long i = 0; i < count; ++i) ++bucket_count[keys[i] >> shift];
}

// Exclusive prefix sums of n counts into offsets (which may be count).
static void bucket_offsets(const long* count, long n, long* offset) {
  long sum = 0;
  for (long b = 0; b < n; ++b) {
    long c = count[b];
    offset[b] = sum;
    sum += c;
  }
}

static void scatter_chunk(const int* keys, long count, int shift, long* cursor, int* out) {
  for (long i = 0; i < count; ++i) {
    int k = keys[i];
    out[cursor[k >> shift]++] = k;
  }
}

// Keys of one bucket, `keys[0, count)`, all in [key_lo, key_hi): key_count[k]
// becomes `below` plus the number of these keys <= k.
static void rank_bucket(const int* keys, long count, long key_lo, long key_hi, long below,
                        long* key_count) {
  for (long k = key_lo; k < key_hi; ++k) key_count[k] = 0;
  for (long i = 0; i < count; ++i) ++key_count[keys[i]];
  long running = below;
  for (long k = key_lo; k < key_hi; ++k) {
    running += key_count[k];
    key_count[k] = running;
  }
}

// Global bucket sizes and offsets, and the buckets this rank owns: bucket b
// goes to the rank whose equal share of key positions holds its first key.
static void assign_buckets(Sorter* s) {
  memset(s->bucket_size, 0, (size_t)s->num_buckets * sizeof *s->bucket_size);
  for (long i = 0; i < s->local_keys; i += CHUNK) {
    long len = s->local_keys - i < CHUNK ? s->local_keys - i : CHUNK;
    count_chunk(s->keys + i, len, s->bucket_shift, s->bucket_size);
  }
  memcpy(s->send_count, s->bucket_size, (size_t)s->num_buckets * sizeof *s->send_count);
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, s->bucket_size, (int)s->num_buckets, MPI_LONG, MPI_SUM,
                MPI_COMM_WORLD);
#endif
  bucket_offsets(s->bucket_size, s->num_buckets, s->bucket_ptr);
  s->first_bucket = s->num_buckets;
  s->last_bucket = s->num_buckets;
  for (long b = 0; b < s->num_buckets; ++b) {
    long owner = s->bucket_ptr[b] * num_ranks / s->num_keys;
    if (owner == my_rank && s->first_bucket == s->num_buckets) s->first_bucket = b;
    if (owner > my_rank) {
      s->last_bucket = b;
      break;
    }
  }
  if (s->first_bucket > s->last_bucket) s->first_bucket = s->last_bucket;
  s->first_pos = s->first_bucket < s->num_buckets ? s->bucket_ptr[s->first_bucket] : s->num_keys;
  long end_pos = s->last_bucket < s->num_buckets ? s->bucket_ptr[s->last_bucket] : s->num_keys;
  s->owned_keys = end_pos - s->first_pos;
}

// Room for the keys of this rank's buckets.
static int reserve_owned(Sorter* s) {
  if (s->owned_keys <= s->capacity) return 1;
  free(s->owned);
  free(s->received);
  s->capacity = s->owned_keys;
  s->received = malloc((size_t)s->capacity * sizeof *s->received);
#ifdef PARLOT_EXAMPLE_MPI
  s->owned = malloc((size_t)s->capacity * sizeof *s->owned);
  return s->owned != NULL && s->received != NULL;
#else
  return s->received != NULL;
#endif
}

// Local keys in bucket order into `out`; `counts` (keys per bucket) becomes
// the bucket end cursors.
static void bucket_local(const int* keys, long count, int shift, long num_buckets, long* counts,
                         int* out) {
  bucket_offsets(counts, num_buckets, counts);
  for (long i = 0; i < count; i += CHUNK) {
    long len = count - i < CHUNK ? count - i : CHUNK;
    scatter_chunk(keys + i, len, shift, counts, out);
  }
}

#ifdef PARLOT_EXAMPLE_MPI
// Sends every local key to the rank owning its bucket (the local keys are
// already in bucket order, hence in owner order). The received keys go to
// s->received, grouped by source rank.
static void exchange_keys(Sorter* s, const long* local_bucket_count) {
  int* send_counts = calloc((size_t)num_ranks, sizeof *send_counts);
  int* recv_counts = calloc((size_t)num_ranks, sizeof *recv_counts);
  int* send_displs = calloc((size_t)num_ranks, sizeof *send_displs);
  int* recv_displs = calloc((size_t)num_ranks, sizeof *recv_displs);
  // Each rank's first bucket, from the global offsets (as assign_buckets).
  for (long b = 0; b < s->num_buckets; ++b) {
    long owner = s->bucket_ptr[b] * num_ranks / s->num_keys;
    send_counts[owner] += (int)local_bucket_count[b];
  }
  MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < num_ranks; ++r) {
    send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
    recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
  }
  MPI_Alltoallv(s->bucketed, send_counts, send_displs, MPI_INT, s->received, recv_counts,
                recv_displs, MPI_INT, MPI_COMM_WORLD);
  free(send_counts);
  free(recv_counts);
  free(send_displs);
  free(recv_displs);
}
#endif

// One NAS IS ranking: afterwards key_count[k] is the number of keys <= k
// for every key value k of this rank's buckets.
static int rank_keys(Sorter* s) {
  assign_buckets(s);
  if (!reserve_owned(s)) return 0;
#ifdef PARLOT_EXAMPLE_MPI
  memcpy(s->local_count, s->send_count, (size_t)s->num_buckets * sizeof *s->local_count);
#endif
  bucket_local(s->keys, s->local_keys, s->bucket_shift, s->num_buckets, s->send_count, s->bucketed);
#ifdef PARLOT_EXAMPLE_MPI
  exchange_keys(s, s->local_count);
  // The keys of this rank's buckets, from every rank, into bucket order.
  long* cursor = s->send_count;
  for (long b = s->first_bucket; b < s->last_bucket; ++b) {
    cursor[b] = s->bucket_ptr[b] - s->first_pos;
  }
  for (long i = 0; i < s->owned_keys; i += CHUNK) {
    long len = s->owned_keys - i < CHUNK ? s->owned_keys - i : CHUNK;
    scatter_chunk(s->received + i, len, s->bucket_shift, cursor, s->owned);
  }
  s->ranked = s->owned;
#else
  s->ranked = s->bucketed;  // one rank owns every bucket
#endif
  long width = 1L << s->bucket_shift;
  for (long b = s->first_bucket; b < s->last_bucket; ++b) {
    rank_bucket(s->ranked + (s->bucket_ptr[b] - s->first_pos), s->bucket_size[b], b * width,
                (b + 1) * width, s->bucket_ptr[b], s->key_count);
  }
  return 1;
}

// ---- Verification -------------------------------------------------------------

static void count_below_chunk(const int* keys, long count, const long* test_value, long* below) {
  for (long i = 0; i < count; ++i) {
    for (int t = 0; t < TEST_KEYS; ++t) below[t] += keys[i] < test_value[t];
  }
}

// The ranks of the test keys (number of keys below each, from the sort) must
// equal a direct count. test_value[t] is the key at test_index[t], taken
// before the sort, as in NAS IS. Returns the number of tests passed.
static int partial_verify(const Sorter* s, const long* test_value) {
  long counts[2 * TEST_KEYS] = {0};  // direct counts, then ranks from the sort
  for (long i = 0; i < s->local_keys; i += CHUNK) {
    long len = s->local_keys - i < CHUNK ? s->local_keys - i : CHUNK;
    count_below_chunk(s->keys + i, len, test_value, counts);
  }
  long key_lo = s->first_bucket << s->bucket_shift;
  long key_hi = s->last_bucket << s->bucket_shift;
  for (int t = 0; t < TEST_KEYS; ++t) {
    long k = test_value[t];
    if (k < key_lo || k >= key_hi) continue;  // another rank's bucket
    // Keys below k: below its bucket if k is the bucket's first key value.
    long first_in_bucket = (k >> s->bucket_shift) << s->bucket_shift;
    counts[TEST_KEYS + t] =
        k == first_in_bucket ? s->bucket_ptr[k >> s->bucket_shift] : s->key_count[k - 1];
  }
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, counts, 2 * TEST_KEYS, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
  int passed = 0;
  for (int t = 0; t < TEST_KEYS; ++t) passed += counts[t] == counts[TEST_KEYS + t];
  return passed;
}

static void take_test_values(const Sorter* s, long* test_value) {
  for (int t = 0; t < TEST_KEYS; ++t) {
    long i = s->test_index[t] - s->first_key;
    test_value[t] = i >= 0 && i < s->local_keys ? s->keys[i] : 0;
  }
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, test_value, TEST_KEYS, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
}

// NAS full_verify: every key of this rank's buckets to its ranked position
// (key_count is used up as the position cursors).
static void place_chunk(const int* keys, long count, long first_pos, long* key_count, int* out) {
  for (long i = 0; i < count; ++i) {
    int k = keys[i];
    out[--key_count[k] - first_pos] = k;
  }
}

// Adds sum((pos + 1) * key) to *checksum; returns whether keys[] is sorted
// and follows *previous (the last key before it, or -1).
static int check_sorted_chunk(const int* keys, long count, long pos, int* previous,
                              uint64_t* checksum) {
  int sorted = 1;
  for (long i = 0; i < count; ++i) {
    if (keys[i] < *previous) sorted = 0;
    *previous = keys[i];
    *checksum += (uint64_t)(pos + i + 1) * (uint64_t)keys[i];
  }
  return sorted;
}

static int full_verify(Sorter* s, uint64_t* checksum) {
  int* sorted_keys = s->received;  // free after the last exchange
  for (long i = 0; i < s->owned_keys; i += CHUNK) {
    long len = s->owned_keys - i < CHUNK ? s->owned_keys - i : CHUNK;
    place_chunk(s->ranked + i, len, s->first_pos, s->key_count, sorted_keys);
  }
  int previous = -1;
#ifdef PARLOT_EXAMPLE_MPI
  // The last key of the previous rank that owns any keys.
  int* last = malloc((size_t)num_ranks * sizeof *last);
  int mine = s->owned_keys > 0 ? sorted_keys[s->owned_keys - 1] : -1;
  MPI_Allgather(&mine, 1, MPI_INT, last, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < my_rank; ++r) {
    if (last[r] >= 0) previous = last[r];
  }
  free(last);
#endif
  int sorted = 1;
  *checksum = 0;
  for (long i = 0; i < s->owned_keys; i += CHUNK) {
    long len = s->owned_keys - i < CHUNK ? s->owned_keys - i : CHUNK;
    sorted &= check_sorted_chunk(sorted_keys + i, len, s->first_pos + i, &previous, checksum);
  }
#ifdef PARLOT_EXAMPLE_MPI
  MPI_Allreduce(MPI_IN_PLACE, &sorted, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, checksum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
#endif
  return sorted;
}

// ---- Setup ------------------------------------------------------------------

static int make_sorter(Sorter* s, int log2_keys, int log2_max_key, long iterations) {
  memset(s, 0, sizeof *s);
  s->num_keys = 1L << log2_keys;
  s->max_key = 1L << log2_max_key;
  s->iterations = iterations;
  int log2_buckets = log2_keys - KEYS_PER_BUCKET_LOG2;
  if (log2_buckets > log2_max_key) log2_buckets = log2_max_key;
  if (log2_buckets < 0) log2_buckets = 0;
  s->bucket_shift = log2_max_key - log2_buckets;
  s->num_buckets = 1L << log2_buckets;
  s->first_key = s->num_keys * my_rank / num_ranks;
  s->local_keys = s->num_keys * (my_rank + 1) / num_ranks - s->first_key;
  s->keys = malloc((size_t)(s->local_keys + 1) * sizeof *s->keys);
  s->bucketed = malloc((size_t)(s->local_keys + 1) * sizeof *s->bucketed);
  s->send_count = malloc((size_t)s->num_buckets * sizeof *s->send_count);
  s->bucket_size = malloc((size_t)s->num_buckets * sizeof *s->bucket_size);
  s->bucket_ptr = malloc((size_t)s->num_buckets * sizeof *s->bucket_ptr);
  s->key_count = malloc((size_t)s->max_key * sizeof *s->key_count);
  s->local_count = malloc((size_t)s->num_buckets * sizeof *s->local_count);
  if (!s->keys || !s->bucketed || !s->send_count || !s->bucket_size || !s->bucket_ptr ||
      !s->key_count || !s->local_count) {
    return 0;
  }
  for (int t = 0; t < TEST_KEYS; ++t) {
    s->test_index[t] = (s->num_keys / TEST_KEYS * t + s->num_keys / 7 + 3 * t) % s->num_keys;
  }
  // This rank's block of the stream: four uniforms per key.
  uint64_t seed = SEED;
  randlc(&seed, lcg_power(LCG_A, 4 * s->first_key));
  for (long i = 0; i < s->local_keys; i += CHUNK) {
    long len = s->local_keys - i < CHUNK ? s->local_keys - i : CHUNK;
    generate_keys(&seed, s->max_key, s->keys + i, len);
  }
  return 1;
}

static void free_sorter(Sorter* s) {
  free(s->keys);
  free(s->bucketed);
  free(s->send_count);
  free(s->bucket_size);
  free(s->bucket_ptr);
  free(s->key_count);
  free(s->owned);
  free(s->received);
  free(s->local_count);
}

static int run(int argc, char** argv) {
  long log2_keys = 10, log2_max_key = 8, iterations = 4;
  if (argc > 4) {
    if (my_rank == 0) fprintf(stderr, "usage: is [log2_keys] [log2_max_key] [iterations]\n");
    return 2;
  }
  if (argc > 1 && !parse_long(argv[1], "log2_keys", 4, 30, &log2_keys)) return 2;
  if (argc > 2 && !parse_long(argv[2], "log2_max_key", 2, 30, &log2_max_key)) return 2;
  if (argc > 3 && !parse_long(argv[3], "iterations", 1, (1L << log2_keys) / 2 - 1, &iterations)) {
    return 2;
  }
  if (iterations >= 1L << log2_max_key) {
    if (my_rank == 0) fprintf(stderr, "is: iterations must be below max_key\n");
    return 2;
  }

  Sorter s;
  int ok = make_sorter(&s, (int)log2_keys, (int)log2_max_key, iterations);
  int passed = 0;
  for (long it = 1; ok && it <= iterations; ++it) {
    modify_keys(&s, it);
    long test_value[TEST_KEYS];
    take_test_values(&s, test_value);
    ok = rank_keys(&s);
    if (ok) passed += partial_verify(&s, test_value);
  }
  if (!ok) {
    fprintf(stderr, "is: out of memory for 2^%ld keys\n", log2_keys);
#ifdef PARLOT_EXAMPLE_MPI
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    return 1;
  }
  uint64_t checksum = 0;
  int sorted = full_verify(&s, &checksum);
  if (my_rank == 0) {
    printf("is keys=%ld max_key=%ld iterations=%ld partial=%d/%ld sorted=%d checksum=%016llx\n",
           s.num_keys, s.max_key, iterations, passed, TEST_KEYS * iterations, sorted,
           (unsigned long long)checksum);
  }
  free_sorter(&s);
  return 0;
}
