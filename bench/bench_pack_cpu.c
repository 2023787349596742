/* CPU pack/unpack throughput: the engine's CPU packer against PMPI_Pack/PMPI_Unpack on the
 * TEMPI paper's 2-D objects (figure 8), in one run.
 *
 *   bench_pack_cpu [--quick] [--rounds N] [--min-ms MS] [--size BYTES] [--run BYTES]
 *
 * Each object is a vector of MPI_BYTE blocks, count = size / run, blocklength = run, stride
 * 512 B (contiguous for run = 512), packed as one object (count 1). For every case both packers
 * are first checked to produce identical bytes (pack: the packed buffers, poisoned around the
 * data; unpack: a hash of the whole typed footprint), then timed interleaved: each measurement
 * repeats the call enough times to last at least --min-ms, and each column is the median per-call
 * time over the rounds. GB/s counts packed bytes. Prints CSV on stdout. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util/clock.h"
#include "type/cpu.h"
#include "type/translate.h"

#define PITCH      512
#define GUARD      64 /* poisoned bytes after the packed data */
#define POISON     0xA5
#define MAX_ROUNDS 101

typedef struct {
    MPI_Datatype type;
    tj_block_t block;
    int64_t size;      /* packed bytes */
    int64_t footprint; /* typed bytes from the first to one past the last */
    char *typed;
    char *packed_engine, *packed_mpi;
} case_t;

typedef void (*op_fn_t)(const case_t *c, bool engine);

static void die(const char *what)
{
    fprintf(stderr, "bench_pack_cpu: %s\n", what);
    exit(1);
}

static void fill(char *p, int64_t n, unsigned salt)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = (char)((i * 131 + salt * 7 + (i >> 9)) & 0xff);
}

static void op_pack(const case_t *c, bool engine)
{
    if (engine) {
        tj_cpu_pack(&c->block, c->typed, 1, c->packed_engine);
    } else {
        int pos = 0;
        if (PMPI_Pack(c->typed, 1, c->type, c->packed_mpi, (int)c->size, &pos, MPI_COMM_SELF) !=
            MPI_SUCCESS)
            die("PMPI_Pack failed");
    }
}

/* Both unpack the same packed bytes (the engine's buffer) into the same typed buffer. */
static void op_unpack(const case_t *c, bool engine)
{
    if (engine) {
        tj_cpu_unpack(&c->block, c->packed_engine, 1, c->typed);
    } else {
        int pos = 0;
        if (PMPI_Unpack(c->packed_engine, (int)c->size, &pos, c->typed, 1, c->type,
                        MPI_COMM_SELF) != MPI_SUCCESS)
            die("PMPI_Unpack failed");
    }
}

/* Seconds per call of `reps` calls in a row. */
static double time_calls(op_fn_t op, const case_t *c, bool engine, long reps)
{
    double t0 = tj_clock_seconds();
    for (long i = 0; i < reps; i++)
        op(c, engine);
    return (tj_clock_seconds() - t0) / (double)reps;
}

/* Repetitions that make one measurement last at least `min_s`. */
static long calibrate(op_fn_t op, const case_t *c, bool engine, double min_s)
{
    long reps = 1;
    for (;;) {
        double per = time_calls(op, c, engine, reps);
        if (per * (double)reps >= min_s)
            return reps;
        /* Aim a little past the target from the last estimate; at least double. */
        long want = (long)(1.2 * min_s / (per > 0 ? per : 1e-9)) + 1;
        reps = want > 2 * reps ? want : 2 * reps;
    }
}

/* Byte-for-byte agreement of the two packers on this case; exits with a message if not. */
static void verify(case_t *c, long size, int run)
{
    XXH64_hash_t h[2];
    char msg[160];

    fill(c->typed, c->footprint, 1);
    memset(c->packed_engine, POISON, (size_t)(c->size + GUARD));
    memset(c->packed_mpi, POISON, (size_t)(c->size + GUARD));
    op_pack(c, true);
    op_pack(c, false);
    if (memcmp(c->packed_engine, c->packed_mpi, (size_t)(c->size + GUARD)) != 0) {
        snprintf(msg, sizeof(msg), "pack differs from PMPI_Pack for size %ld run %d", size, run);
        die(msg);
    }
    /* Unpack different bytes than the typed buffer holds, so that a skipped element shows. */
    fill(c->packed_engine, c->size, 2);
    for (int k = 0; k < 2; k++) {
        fill(c->typed, c->footprint, 3);
        op_unpack(c, k == 0);
        h[k] = XXH3_64bits(c->typed, (size_t)c->footprint);
    }
    if (h[0] != h[1]) {
        snprintf(msg, sizeof(msg), "unpack differs from PMPI_Unpack for size %ld run %d", size,
                 run);
        die(msg);
    }
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--quick] [--rounds N] [--min-ms MS] [--size BYTES] [--run BYTES]\n",
            argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    static const long sizes[] = {1024, 1L << 20, 4L << 20};
    static const int runs[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
    int rounds = 11;
    double min_s = 5e-3;
    long only_size = 0;
    int only_run = 0;
    size_t typed_len = 0, packed_len = 0;
    char *typed, *pe, *pm;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            rounds = 3;
            min_s = 2e-3;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--min-ms") == 0 && i + 1 < argc) {
            min_s = atof(argv[++i]) * 1e-3;
        } else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            only_size = atol(argv[++i]);
        } else if (strcmp(argv[i], "--run") == 0 && i + 1 < argc) {
            only_run = atoi(argv[++i]);
        } else {
            usage(argv[0]);
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || min_s <= 0)
        usage(argv[0]);
    MPI_Init(&argc, &argv);

    /* One typed buffer serves every case: the largest footprint is 4 MiB of 1-byte runs, 2 GiB.
     * It is left to the system's transparent huge page policy, as an application's would be. */
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t fp = (size_t)(sizes[s] - 1) * PITCH + 1;
        typed_len = fp > typed_len ? fp : typed_len;
        packed_len = (size_t)sizes[s] + GUARD > packed_len ? (size_t)sizes[s] + GUARD : packed_len;
    }
    typed = mmap(NULL, typed_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pe = malloc(packed_len);
    pm = malloc(packed_len);
    if (typed == MAP_FAILED || pe == NULL || pm == NULL)
        die("out of memory");

    printf("# bench_pack_cpu: vector of MPI_BYTE blocks, pitch %d B, count 1; rounds=%d, "
           "each measurement >= %.1f ms; median per-call time; GB/s of packed bytes; "
           "ratio = engine/mpi\n",
           PITCH, rounds, min_s * 1e3);
    printf("object_bytes,run_bytes,op,engine_GBps,mpi_GBps,ratio,engine_us,mpi_us,engine_reps,"
           "mpi_reps\n");
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        if (only_size != 0 && sizes[s] != only_size)
            continue;
        for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
            const int run = runs[r];
            case_t c = {.typed = typed, .packed_engine = pe, .packed_mpi = pm};
            tj_status_t st;

            if (only_run != 0 && run != only_run)
                continue;
            c.size = sizes[s];
            c.footprint = (c.size / run - 1) * PITCH + run;
            if (PMPI_Type_vector((int)(c.size / run), run, PITCH, MPI_BYTE, &c.type) !=
                    MPI_SUCCESS ||
                PMPI_Type_commit(&c.type) != MPI_SUCCESS)
                die("cannot build the vector type");
            if ((st = tj_translate_block(c.type, &c.block, NULL)) != TJ_OK) {
                fprintf(stderr, "bench_pack_cpu: size %ld run %d: not translated: %s\n", sizes[s],
                        run, tj_status_string(st));
                exit(1);
            }
            verify(&c, sizes[s], run);
            for (int o = 0; o < 2; o++) {
                op_fn_t op = o == 0 ? op_pack : op_unpack;
                double te[MAX_ROUNDS], tm[MAX_ROUNDS], e, m;
                long reps_e = calibrate(op, &c, true, min_s);
                long reps_m = calibrate(op, &c, false, min_s);

                for (int k = 0; k < rounds; k++) {
                    /* Alternate which packer goes first, so that neither always inherits the
                     * other's cache state. */
                    if (k % 2 == 0) {
                        te[k] = time_calls(op, &c, true, reps_e);
                        tm[k] = time_calls(op, &c, false, reps_m);
                    } else {
                        tm[k] = time_calls(op, &c, false, reps_m);
                        te[k] = time_calls(op, &c, true, reps_e);
                    }
                }
                e = tj_median(te, rounds);
                m = tj_median(tm, rounds);
                printf("%ld,%d,%s,%.4f,%.4f,%.3f,%.4f,%.4f,%ld,%ld\n", sizes[s], run,
                       o == 0 ? "pack" : "unpack", (double)c.size / e * 1e-9,
                       (double)c.size / m * 1e-9, m / e, e * 1e6, m * 1e6, reps_e, reps_m);
                fflush(stdout);
            }
            PMPI_Type_free(&c.type);
        }
    }
    munmap(typed, typed_len);
    free(pe);
    free(pm);
    MPI_Finalize();
    return 0;
}
