/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU pack/unpack throughput: typejit's CPU packer against the system MPI's PMPI_Pack and
 * PMPI_Unpack on 2-D objects (the TEMPI paper's figure 8, widened), in one run, with the memcpy
 * of the same bytes beside them as the ceiling.
 *
 *   bench_pack_cpu [--quick] [--cpu-time] [--rounds N] [--min-ms MS] [--size BYTES] [--run BYTES]
 *                  [--pitch 512|2x] [--count one|many] [--op pack|unpack]
 *                  [--isa base|avx2|avx512] [--max-footprint BYTES]
 *   bench_pack_cpu --apps [--quick] [--cpu-time] [--rounds N] [--min-ms MS] [--shape NAME]
 *                  [--op pack|unpack] [--isa base|avx2|avx512]
 *
 * A shape is `size` packed bytes in contiguous runs of `run` bytes whose starts lie `pitch`
 * bytes apart (512 B, or twice the run), of MPI_BYTE: one object, an hvector of size/run
 * blocks (count one), or size/run objects of one run each, a contiguous type resized to the
 * pitch (count many). The sweep takes sizes 4 KiB to 64 MiB, runs 1 B to 4 KiB, both pitches,
 * both counts, pack and unpack, except shapes whose typed footprint exceeds --max-footprint
 * (2 GiB: 1-byte runs of more than 4 MiB at a 512-byte pitch). --quick takes a subset.
 *
 * For every shape both packers are first checked to produce identical bytes (pack: the packed
 * buffers, poisoned past the data; unpack: a hash of the whole typed footprint). Then four
 * movers are timed interleaved, each round in another order: the engine (the loops of its plan),
 * the system MPI, a memcpy call per run (what a packer that calls memcpy for each run can reach)
 * and one memcpy of all the packed bytes (the machine's copy bandwidth: the ceiling). Each
 * measurement repeats the call for at least --min-ms; the GB/s columns are the median per-call
 * times over the rounds, of packed bytes, and `ratio` is the median over the rounds of the
 * system MPI's time over the engine's, measured back to back (a load that comes and goes on the
 * machine slows both sides of a round alike). `auto` is what TYPEJIT_HOST=auto does with the
 * shape (the cost model's choice at commit, src/type/cpu_model.c) and auto_ratio the speed of
 * that choice against the system MPI. Prints CSV on stdout, comments starting with '#'.
 *
 * --apps measures the layouts of applications instead (app_shapes below: FFT transposes, halo and
 * multigrid faces of 3-D arrays, strided samples, contiguous buffers), built with the MPI's own
 * constructors of MPI_DOUBLE and MPI_C_DOUBLE_COMPLEX, one object each. With libtypejit.so
 * preloaded (MPI_Pack is then not the MPI's own), a fourth mover times what an application gets:
 * MPI_Pack and MPI_Unpack through typejit's wrappers, under the TYPEJIT_HOST of the environment
 * (typejit_ratio: the system MPI's time over it, per round). */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "type/cpu.h"
#include "type/cpu_model.h"
#include "type/translate.h"
#include "util/clock.h"

#define GUARD      64 /* poisoned bytes after the packed data */
#define POISON     0xA5
#define MAX_ROUNDS 101

/* M_TYPEJIT (--apps only, where a typejit is preloaded) takes the place of M_RUNS. */
enum { M_ENGINE, M_MPI, M_RUNS, M_MEMCPY, MOVERS, M_TYPEJIT = M_RUNS };

typedef struct {
    MPI_Datatype type;
    int count;    /* objects of `type` */
    bool typejit; /* --apps: M_RUNS is M_TYPEJIT, MPI_Pack and MPI_Unpack through the wrappers */
    tj_block_t block;
    tj_cpu_plan_t plan;
    int64_t size; /* packed bytes */
    int64_t run, pitch;
    int64_t footprint; /* typed bytes from the first to one past the last */
    char *typed;
    char *packed_engine, *packed_mpi;
} case_t;

typedef void (*op_fn_t)(const case_t *c, int mover);

static void die(const char *what)
{
    fprintf(stderr, "bench_pack_cpu: %s\n", what);
    exit(1);
}

/* A pattern of 8-byte words that differs from byte to byte and with the salt. */
static void fill(char *p, int64_t n, unsigned salt)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL * (salt + 1);
    int64_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t v = x ^ ((uint64_t)i * 0x0101010101010101ULL) ^ ((uint64_t)i >> 9);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++)
        p[i] = (char)(i * 131 + salt * 7);
}

static void op_pack(const case_t *c, int mover)
{
    switch (mover) {
    case M_ENGINE:
        tj_cpu_pack_plan(&c->block, &c->plan, c->typed, c->count, c->packed_engine);
        break;
    case M_MPI: {
        int pos = 0;
        if (PMPI_Pack(c->typed, c->count, c->type, c->packed_mpi, (int)c->size, &pos,
                      MPI_COMM_SELF) != MPI_SUCCESS)
            die("PMPI_Pack failed");
        break;
    }
    case M_RUNS: {
        const char *s = c->typed;
        char *d = c->packed_mpi;
        if (c->typejit) {
            int pos = 0;
            if (MPI_Pack(c->typed, c->count, c->type, c->packed_mpi, (int)c->size, &pos,
                         MPI_COMM_SELF) != MPI_SUCCESS)
                die("MPI_Pack failed");
            break;
        }
        for (int64_t i = c->size / c->run; i > 0; i--) {
            memcpy(d, s, (size_t)c->run);
            d += c->run;
            s += c->pitch;
        }
        break;
    }
    default:
        memcpy(c->packed_mpi, c->typed, (size_t)c->size);
        break;
    }
}

/* Every mover unpacks the same packed bytes (the engine's buffer) into the same typed buffer. */
static void op_unpack(const case_t *c, int mover)
{
    switch (mover) {
    case M_ENGINE:
        tj_cpu_unpack_plan(&c->block, &c->plan, c->packed_engine, c->count, c->typed);
        break;
    case M_MPI: {
        int pos = 0;
        if (PMPI_Unpack(c->packed_engine, (int)c->size, &pos, c->typed, c->count, c->type,
                        MPI_COMM_SELF) != MPI_SUCCESS)
            die("PMPI_Unpack failed");
        break;
    }
    case M_RUNS: {
        const char *s = c->packed_engine;
        char *d = c->typed;
        if (c->typejit) {
            int pos = 0;
            if (MPI_Unpack(c->packed_engine, (int)c->size, &pos, c->typed, c->count, c->type,
                           MPI_COMM_SELF) != MPI_SUCCESS)
                die("MPI_Unpack failed");
            break;
        }
        for (int64_t i = c->size / c->run; i > 0; i--) {
            memcpy(d, s, (size_t)c->run);
            s += c->run;
            d += c->pitch;
        }
        break;
    }
    default:
        memcpy(c->typed, c->packed_engine, (size_t)c->size);
        break;
    }
}

/* --cpu-time: the calls are timed on the thread's CPU clock, which leaves out the time other
 * work on a busy machine holds the core (not what that work does to the caches). */
static bool cpu_time;

static double now(void)
{
    struct timespec ts;

    if (!cpu_time)
        return tj_clock_seconds();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per call of `reps` calls in a row. */
static double time_calls(op_fn_t op, const case_t *c, int mover, long reps)
{
    double t0 = now();
    for (long i = 0; i < reps; i++)
        op(c, mover);
    return (now() - t0) / (double)reps;
}

/* Repetitions that make one measurement last at least `min_s`. */
static long calibrate(op_fn_t op, const case_t *c, int mover, double min_s)
{
    long reps = 1;
    for (;;) {
        double per = time_calls(op, c, mover, reps);
        if (per * (double)reps >= min_s)
            return reps;
        /* Aim a little past the target from the last estimate; at least double. */
        long want = (long)(1.2 * min_s / (per > 0 ? per : 1e-9)) + 1;
        reps = want > 2 * reps ? want : 2 * reps;
    }
}

/* Times the movers of @p c interleaved for @p rounds rounds: the median per-call time of each
 * (med), the median over the rounds of the system MPI's time over the engine's (ratio) and over
 * M_RUNS's (runs_ratio: typejit's wrappers where c->typejit). */
static void measure(op_fn_t op, const case_t *c, int rounds, double min_s, double med[MOVERS],
                    double *ratio, double *runs_ratio)
{
    double t[MOVERS][MAX_ROUNDS], ratios[MAX_ROUNDS], runs[MAX_ROUNDS];
    long reps[MOVERS];
    /* --apps without a typejit preloaded: no third mover (its times are left at 0). */
    const bool third = c->run > 0 || c->typejit;

    for (int m = 0; m < MOVERS; m++)
        reps[m] = m != M_RUNS || third ? calibrate(op, c, m, min_s) : 0;
    for (int k = 0; k < rounds; k++) {
        /* The engine and the system MPI run back to back, each round in the other order and
         * with the two other movers before or after them, so that neither always inherits the
         * same cache state and the ratio of one round sees the same load on the machine. */
        static const int orders[4][MOVERS] = {{M_ENGINE, M_MPI, M_RUNS, M_MEMCPY},
                                              {M_RUNS, M_MEMCPY, M_MPI, M_ENGINE},
                                              {M_MPI, M_ENGINE, M_MEMCPY, M_RUNS},
                                              {M_MEMCPY, M_RUNS, M_ENGINE, M_MPI}};
        for (int j = 0; j < MOVERS; j++) {
            int m = orders[k % 4][j];
            t[m][k] = m != M_RUNS || third ? time_calls(op, c, m, reps[m]) : 0;
        }
        ratios[k] = t[M_MPI][k] / t[M_ENGINE][k];
        runs[k] = third ? t[M_MPI][k] / t[M_RUNS][k] : 0;
    }
    for (int m = 0; m < MOVERS; m++)
        med[m] = tj_median(t[m], rounds);
    *ratio = tj_median(ratios, rounds);
    *runs_ratio = tj_median(runs, rounds);
}

/* Byte-for-byte agreement of the engine, the system MPI and (where preloaded) typejit's
 * wrappers on this case; exits if not. */
static void verify(case_t *c, const char *shape)
{
    const int movers[3] = {M_MPI, M_ENGINE, M_TYPEJIT}, n = c->typejit ? 3 : 2;
    XXH64_hash_t h[3];
    char msg[256];

    fill(c->typed, c->footprint, 1);
    memset(c->packed_mpi, POISON, (size_t)(c->size + GUARD));
    op_pack(c, M_MPI);
    memset(c->packed_engine, POISON, (size_t)(c->size + GUARD));
    op_pack(c, M_ENGINE);
    if (memcmp(c->packed_engine, c->packed_mpi, (size_t)(c->size + GUARD)) != 0) {
        snprintf(msg, sizeof(msg), "pack differs from PMPI_Pack for %s", shape);
        die(msg);
    }
    if (c->typejit) {
        /* MPI_Pack writes into packed_mpi: keep the system MPI's bytes in packed_engine. */
        memset(c->packed_mpi, POISON, (size_t)(c->size + GUARD));
        op_pack(c, M_TYPEJIT);
        if (memcmp(c->packed_engine, c->packed_mpi, (size_t)(c->size + GUARD)) != 0) {
            snprintf(msg, sizeof(msg), "MPI_Pack differs from PMPI_Pack for %s", shape);
            die(msg);
        }
    }
    /* Unpack different bytes than the typed buffer holds, so that a skipped element shows. */
    fill(c->packed_engine, c->size, 2);
    for (int k = 0; k < n; k++) {
        fill(c->typed, c->footprint, 3);
        op_unpack(c, movers[k]);
        h[k] = XXH3_64bits(c->typed, (size_t)c->footprint);
    }
    for (int k = 1; k < n; k++)
        if (h[k] != h[0]) {
            snprintf(msg, sizeof(msg), "%s differs from PMPI_Unpack for %s",
                     k == 1 ? "the engine's unpack" : "MPI_Unpack", shape);
            die(msg);
        }
}

/* The family of the MPI this program runs on, for the cost model, and its name for the CSV. */
static tj_cpu_peer_t peer_of(char *name, size_t len)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    tj_cpu_peer_t peer = TJ_CPU_PEER_OTHER;
    const char *at;

    MPI_Get_library_version(version, &n);
    if ((at = strstr(version, "Open MPI v")) != NULL) {
        peer = TJ_CPU_PEER_OPEN_MPI;
        snprintf(name, len, "Open MPI %.*s", (int)strcspn(at + 10, ", \n"), at + 10);
    } else if ((at = strstr(version, "MPICH Version:")) != NULL) {
        at += 14;
        at += strspn(at, " \t");
        peer = TJ_CPU_PEER_MPICH;
        snprintf(name, len, "MPICH %.*s", (int)strcspn(at, " \t\n"), at);
    } else {
        snprintf(name, len, "%.*s", (int)strcspn(version, ",\n"), version);
    }
    return peer;
}

/* The load average of the machine, as a comment line: other work shows up as noise. */
static void print_load(const char *when)
{
    char line[128] = "unknown\n";
    FILE *f = fopen("/proc/loadavg", "r");

    if (f != NULL) {
        if (fgets(line, sizeof(line), f) == NULL)
            snprintf(line, sizeof(line), "unknown\n");
        fclose(f);
    }
    printf("# load average %s: %s", when, line);
}

/* The layouts of applications (--apps), one object each, as the applications build them. */
typedef enum {
    /* `m` columns of an n x n row-major matrix of `elem`-byte elements, column after column: the
     * all-to-all transpose of a 2-D FFT (elem 16, complex doubles; m = n the whole matrix, m < n
     * one pencil of it): a vector of n elements n apart, resized to one element, m times. */
    APP_TRANSPOSE,
    /* The face x in [0, m) of an n x n x n array of doubles (C order): a halo or multigrid face,
     * runs of 8m bytes n doubles apart, rows n*n doubles apart (MPI_Type_create_subarray). */
    APP_FACE,
    /* The same face of the interior of an (n + 2)^3 array with one ghost layer on each side:
     * strides 8(n + 2) and 8(n + 2)^2, not powers of two. */
    APP_FACE_GHOST,
    /* Every second point of an n x n x n array of doubles in each dimension: the restriction of
     * a multigrid V-cycle, 8-byte runs 16 bytes apart (vector, two hvectors). */
    APP_SAMPLE,
    /* n doubles back to back (MPI_Type_contiguous): a buffer of a halo or a reduction. */
    APP_CONTIG,
} app_kind_t;

typedef struct {
    app_kind_t kind;
    int elem, n, m;
    bool quick; /* also in --quick */
} app_t;

static const app_t app_shapes[] = {
    {APP_TRANSPOSE, 16, 64, 64, false},
    {APP_TRANSPOSE, 16, 128, 128, true},
    {APP_TRANSPOSE, 16, 256, 256, true},
    {APP_TRANSPOSE, 16, 512, 512, false},
    {APP_TRANSPOSE, 16, 1024, 1024, true},
    {APP_TRANSPOSE, 16, 200, 200, false},
    {APP_TRANSPOSE, 16, 384, 384, false},
    {APP_TRANSPOSE, 16, 256, 16, false},
    {APP_TRANSPOSE, 16, 1024, 64, true},
    {APP_TRANSPOSE, 8, 256, 256, false},
    {APP_TRANSPOSE, 8, 1024, 1024, true},
    {APP_FACE, 8, 8, 1, false},
    {APP_FACE, 8, 16, 1, true},
    {APP_FACE, 8, 32, 1, false},
    {APP_FACE, 8, 64, 1, true},
    {APP_FACE, 8, 128, 1, false},
    {APP_FACE, 8, 256, 1, true},
    {APP_FACE, 8, 32, 2, false},
    {APP_FACE, 8, 64, 2, true},
    {APP_FACE, 8, 128, 2, false},
    {APP_FACE_GHOST, 8, 64, 1, true},
    {APP_FACE_GHOST, 8, 128, 1, false},
    {APP_SAMPLE, 8, 32, 0, false},
    {APP_SAMPLE, 8, 64, 0, true},
    {APP_SAMPLE, 8, 128, 0, false},
    {APP_CONTIG, 8, 60, 0, true},
    {APP_CONTIG, 8, 120, 0, false},
    {APP_CONTIG, 8, 240, 0, false},
    {APP_CONTIG, 8, 405, 0, false},
    {APP_CONTIG, 8, 810, 0, true},
};

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what);
}

/* The shape's name and its datatype, committed through MPI_Type_commit (typejit's wrapper where
 * preloaded, so that its record and plan are made as for an application's type). */
static MPI_Datatype app_type(const app_t *a, char *name, size_t len)
{
    MPI_Datatype t, u, v;
    const MPI_Datatype e = a->elem == 16 ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE;
    const MPI_Aint n = a->n;

    switch (a->kind) {
    case APP_TRANSPOSE:
        snprintf(name, len, "%s %dx%d %d column%s", a->elem == 16 ? "fft_transpose" : "transpose",
                 a->n, a->n, a->m, a->m > 1 ? "s" : "");
        check(MPI_Type_vector(a->n, 1, a->n, e, &u), "MPI_Type_vector");
        check(MPI_Type_create_resized(u, 0, a->elem, &v), "MPI_Type_create_resized");
        check(MPI_Type_contiguous(a->m, v, &t), "MPI_Type_contiguous");
        MPI_Type_free(&u);
        MPI_Type_free(&v);
        break;
    case APP_FACE: {
        const int sizes[3] = {a->n, a->n, a->n}, sub[3] = {a->n, a->n, a->m}, at[3] = {0, 0, 0};
        snprintf(name, len, "face %d^3 %d wide", a->n, a->m);
        check(MPI_Type_create_subarray(3, sizes, sub, at, MPI_ORDER_C, e, &t),
              "MPI_Type_create_subarray");
        break;
    }
    case APP_FACE_GHOST: {
        const int g = a->n + 2, sizes[3] = {g, g, g}, sub[3] = {a->n, a->n, a->m};
        const int at[3] = {1, 1, 1};
        snprintf(name, len, "face %d^3 of %d^3 %d wide", a->n, g, a->m);
        check(MPI_Type_create_subarray(3, sizes, sub, at, MPI_ORDER_C, e, &t),
              "MPI_Type_create_subarray");
        break;
    }
    case APP_SAMPLE:
        snprintf(name, len, "sample %d^3 every 2nd", a->n);
        check(MPI_Type_vector(a->n / 2, 1, 2, e, &u), "MPI_Type_vector");
        check(MPI_Type_create_hvector(a->n / 2, 1, 16 * n, u, &v), "MPI_Type_create_hvector");
        check(MPI_Type_create_hvector(a->n / 2, 1, 16 * n * n, v, &t), "MPI_Type_create_hvector");
        MPI_Type_free(&u);
        MPI_Type_free(&v);
        break;
    default:
        snprintf(name, len, "contig %d doubles", a->n);
        check(MPI_Type_contiguous(a->n, e, &t), "MPI_Type_contiguous");
        break;
    }
    check(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
}

/* The block as the engine sees it: counts and strides, "16 x 256@4096 x 256@16". */
static void block_text(const tj_block_t *b, char *out, size_t len)
{
    int k = snprintf(out, len, "%lld", (long long)b->counts[0]);

    for (int d = 1; d < b->ndims && k > 0 && (size_t)k < len; d++)
        k += snprintf(out + k, len - (size_t)k, " x %lld@%lld", (long long)b->counts[d],
                      (long long)b->strides[d]);
}

/* --apps: every shape of app_shapes (or the one named), pack and unpack. */
static void run_apps(tj_cpu_peer_t peer, const char *mpi_name, tj_cpu_isa_t isa, bool quick,
                     int rounds, double min_s, const char *only_shape, int only_op)
{
    const bool typejit = (uintptr_t)&MPI_Pack != (uintptr_t)&PMPI_Pack;

    printf("# bench_pack_cpu --apps: %s; engine loops: %s; rounds=%d, each measurement >= %.1f "
           "ms%s; median per-call time; ratio = median over rounds of mpi time / engine time; "
           "auto = the cost model's choice; typejit = MPI_Pack/MPI_Unpack through %s\n",
           mpi_name, (const char *[]){"base", "avx2", "avx512"}[isa], rounds, min_s * 1e3,
           cpu_time ? " of thread CPU time" : "",
           typejit ? "the preloaded typejit" : "nothing (typejit not preloaded: empty columns)");
    print_load("at the start");
    printf("mpi,shape,block,packed_bytes,footprint_bytes,op,engine_us,mpi_us,typejit_us,"
           "memcpy_us,ratio,auto,auto_ratio,typejit_ratio\n");
    for (size_t i = 0; i < sizeof(app_shapes) / sizeof(app_shapes[0]); i++) {
        const app_t *a = &app_shapes[i];
        case_t c = {.count = 1, .typejit = typejit};
        char name[64], btext[128];
        tj_status_t st;

        if (quick && !a->quick)
            continue;
        c.type = app_type(a, name, sizeof(name));
        if (only_shape != NULL && strcmp(name, only_shape) != 0) {
            MPI_Type_free(&c.type);
            continue;
        }
        if ((st = tj_translate_block(c.type, &c.block, NULL)) != TJ_OK || c.block.lo < 0) {
            fprintf(stderr, "bench_pack_cpu: %s: not one block from byte 0: %s\n", name,
                    tj_status_string(st));
            exit(1);
        }
        tj_cpu_plan_isa(&c.block, isa, &c.plan);
        tj_cpu_model_decide(&c.block, peer, &c.plan);
        block_text(&c.block, btext, sizeof(btext));
        c.size = c.block.size;
        c.footprint = c.block.hi;
        c.typed = mmap(NULL, (size_t)c.footprint, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        c.packed_engine = malloc((size_t)(c.size + GUARD));
        c.packed_mpi = malloc((size_t)(c.size + GUARD));
        if (c.typed == MAP_FAILED || c.packed_engine == NULL || c.packed_mpi == NULL)
            die("out of memory");
        verify(&c, name);
        for (int o = 0; o < 2; o++) {
            op_fn_t op = o == 0 ? op_pack : op_unpack;
            double med[MOVERS], ratio, tj_ratio;
            const bool eng = o == 0 ? c.plan.pack : c.plan.unpack;
            char tj_us[32] = "", tj_r[32] = "";
            if (only_op >= 0 && o != only_op)
                continue;
            measure(op, &c, rounds, min_s, med, &ratio, &tj_ratio);
            if (typejit) {
                snprintf(tj_us, sizeof(tj_us), "%.4f", med[M_TYPEJIT] * 1e6);
                snprintf(tj_r, sizeof(tj_r), "%.3f", tj_ratio);
            }
            printf("%s,%s,%s,%lld,%lld,%s,%.4f,%.4f,%s,%.4f,%.3f,%s,%.3f,%s\n", mpi_name, name,
                   btext, (long long)c.size, (long long)c.footprint, o == 0 ? "pack" : "unpack",
                   med[M_ENGINE] * 1e6, med[M_MPI] * 1e6, tj_us, med[M_MEMCPY] * 1e6, ratio,
                   eng ? "engine" : "mpi", eng ? ratio : 1.0, tj_r);
            fflush(stdout);
        }
        munmap(c.typed, (size_t)c.footprint);
        free(c.packed_engine);
        free(c.packed_mpi);
        MPI_Type_free(&c.type);
    }
    print_load("at the end");
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--quick] [--cpu-time] [--rounds N] [--min-ms MS] [--size BYTES]\n"
            "       [--run BYTES]\n"
            "       [--pitch 512|2x] [--count one|many] [--op pack|unpack]\n"
            "       [--isa base|avx2|avx512] [--max-footprint BYTES]\n"
            "       %s --apps [--quick] [--cpu-time] [--rounds N] [--min-ms MS] [--shape NAME]\n"
            "       [--op pack|unpack] [--isa base|avx2|avx512]\n",
            argv0, argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    static const long sizes_all[] = {4L << 10, 64L << 10, 1L << 20, 4L << 20, 16L << 20, 64L << 20};
    static const long sizes_quick[] = {4L << 10, 1L << 20, 16L << 20};
    static const int runs_all[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
    static const int runs_quick[] = {1, 4, 16, 64, 128, 256, 1024};
    const long *sizes = sizes_all;
    const int *runs = runs_all;
    size_t nsizes = sizeof(sizes_all) / sizeof(sizes_all[0]);
    size_t nruns = sizeof(runs_all) / sizeof(runs_all[0]);
    int rounds = 15, only_pitch = -1, only_count = -1, only_op = -1;
    tj_cpu_isa_t isa = TJ_CPU_ISAS;
    double min_s = 3e-3;
    long only_size = 0, only_run = 0;
    bool apps = false, quick = false;
    const char *only_shape = NULL;
    int64_t max_fp = (int64_t)2 << 30, typed_len = 0, packed_len = 0;
    char *typed, *pe, *pm, mpi_name[96];
    static const char *isa_names[] = {"base", "avx2", "avx512"};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--apps") == 0) {
            apps = true;
            continue;
        }
        if (strcmp(a, "--cpu-time") == 0) {
            cpu_time = true;
            continue;
        }
        if (strcmp(a, "--quick") == 0) {
            quick = true;
            rounds = 5;
            min_s = 2e-3;
            sizes = sizes_quick;
            nsizes = sizeof(sizes_quick) / sizeof(sizes_quick[0]);
            runs = runs_quick;
            nruns = sizeof(runs_quick) / sizeof(runs_quick[0]);
            continue;
        }
        if (v == NULL)
            usage(argv[0]);
        i++;
        if (strcmp(a, "--rounds") == 0)
            rounds = atoi(v);
        else if (strcmp(a, "--min-ms") == 0)
            min_s = atof(v) * 1e-3;
        else if (strcmp(a, "--size") == 0)
            only_size = atol(v);
        else if (strcmp(a, "--shape") == 0)
            only_shape = v;
        else if (strcmp(a, "--run") == 0)
            only_run = atol(v);
        else if (strcmp(a, "--max-footprint") == 0)
            max_fp = atoll(v);
        else if (strcmp(a, "--pitch") == 0 && (strcmp(v, "512") == 0 || strcmp(v, "2x") == 0))
            only_pitch = strcmp(v, "2x") == 0;
        else if (strcmp(a, "--count") == 0 && (strcmp(v, "one") == 0 || strcmp(v, "many") == 0))
            only_count = strcmp(v, "many") == 0;
        else if (strcmp(a, "--op") == 0 && (strcmp(v, "pack") == 0 || strcmp(v, "unpack") == 0))
            only_op = strcmp(v, "unpack") == 0;
        else if (strcmp(a, "--isa") == 0) {
            for (int k = 0; k < TJ_CPU_ISAS; k++)
                if (strcmp(v, isa_names[k]) == 0)
                    isa = (tj_cpu_isa_t)k;
            if (isa == TJ_CPU_ISAS)
                usage(argv[0]);
        } else
            usage(argv[0]);
    }
    if (only_size != 0) {
        sizes = &only_size;
        nsizes = 1;
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || min_s <= 0 || max_fp <= 0)
        usage(argv[0]);
    MPI_Init(&argc, &argv);
    tj_cpu_peer_t peer = peer_of(mpi_name, sizeof(mpi_name));
    if (isa == TJ_CPU_ISAS || isa > tj_cpu_isa_best())
        isa = tj_cpu_isa_best();
    if (apps) {
        run_apps(peer, mpi_name, isa, quick, rounds, min_s, only_shape, only_op);
        MPI_Finalize();
        return 0;
    }

    /* One typed buffer serves every case: the largest footprint the sweep takes. It is left to
     * the system's transparent huge page policy, as an application's would be. */
    for (size_t s = 0; s < nsizes; s++)
        for (size_t r = 0; r < nruns; r++) {
            int64_t fp = (int64_t)sizes[s] / runs[r] * 512;
            if (fp < 2 * sizes[s])
                fp = 2 * sizes[s];
            if (fp <= max_fp && fp > typed_len)
                typed_len = fp;
            if (sizes[s] + GUARD > packed_len)
                packed_len = sizes[s] + GUARD;
        }
    typed =
        mmap(NULL, (size_t)typed_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pe = malloc((size_t)packed_len);
    pm = malloc((size_t)packed_len);
    if (typed == MAP_FAILED || pe == NULL || pm == NULL)
        die("out of memory");

    printf("# bench_pack_cpu: %s; runs of MPI_BYTE, pitch 512 B or 2x the run, one object (an "
           "hvector) or one run per object (count many); engine loops: %s; rounds=%d, each "
           "measurement >= %.1f ms%s; median per-call time; GB/s of packed bytes; ratio = "
           "median over rounds of mpi time / engine time; auto = TYPEJIT_HOST=auto's choice\n",
           mpi_name, isa_names[isa], rounds, min_s * 1e3, cpu_time ? " of thread CPU time" : "");
    print_load("at the start");
    printf("mpi,object_bytes,run_bytes,pitch_bytes,count,op,engine_GBps,mpi_GBps,ratio,auto,"
           "auto_ratio,runs_GBps,memcpy_GBps,footprint_bytes,engine_us,mpi_us\n");
    for (size_t s = 0; s < nsizes; s++) {
        for (size_t r = 0; r < nruns; r++) {
            const int64_t run = runs[r];
            if ((only_run != 0 && run != only_run) || run > sizes[s])
                continue;
            for (int twice = 0; twice < 2; twice++) {
                const int64_t pitch = twice ? 2 * run : 512;
                /* Twice 256 B is the 512-byte pitch again. */
                if ((only_pitch >= 0 && twice != only_pitch) || pitch <= run ||
                    (twice && pitch == 512 && only_pitch != 1))
                    continue;
                for (int many = 0; many < 2; many++) {
                    case_t c = {.typed = typed, .packed_engine = pe, .packed_mpi = pm};
                    const int64_t nrun = sizes[s] / run;
                    char shape[128];
                    tj_status_t st;
                    if ((only_count >= 0 && many != only_count) || (many && nrun == 1))
                        continue;
                    c.size = sizes[s];
                    c.run = run;
                    c.pitch = pitch;
                    c.footprint = (nrun - 1) * pitch + run;
                    snprintf(shape, sizeof(shape), "size %lld run %lld pitch %lld count %s",
                             (long long)c.size, (long long)run, (long long)pitch,
                             many ? "many" : "one");
                    if (c.footprint > max_fp) {
                        printf("# skipped %s: typed footprint %lld B over --max-footprint\n", shape,
                               (long long)c.footprint);
                        continue;
                    }
                    if (many) {
                        MPI_Datatype one;
                        c.count = (int)nrun;
                        if (PMPI_Type_contiguous((int)run, MPI_BYTE, &one) != MPI_SUCCESS ||
                            PMPI_Type_create_resized(one, 0, pitch, &c.type) != MPI_SUCCESS)
                            die("cannot build the resized type");
                        PMPI_Type_free(&one);
                    } else {
                        c.count = 1;
                        if (PMPI_Type_create_hvector((int)nrun, (int)run, pitch, MPI_BYTE,
                                                     &c.type) != MPI_SUCCESS)
                            die("cannot build the vector type");
                    }
                    if (PMPI_Type_commit(&c.type) != MPI_SUCCESS)
                        die("cannot commit the type");
                    if ((st = tj_translate_block(c.type, &c.block, NULL)) != TJ_OK) {
                        fprintf(stderr, "bench_pack_cpu: %s: not translated: %s\n", shape,
                                tj_status_string(st));
                        exit(1);
                    }
                    tj_cpu_plan_isa(&c.block, isa, &c.plan);
                    tj_cpu_model_decide(&c.block, peer, &c.plan);
                    verify(&c, shape);
                    for (int o = 0; o < 2; o++) {
                        op_fn_t op = o == 0 ? op_pack : op_unpack;
                        double med[MOVERS], ratio, unused;
                        bool eng = o == 0 ? c.plan.pack : c.plan.unpack;
                        if (only_op >= 0 && o != only_op)
                            continue;
                        measure(op, &c, rounds, min_s, med, &ratio, &unused);
                        printf("%s,%lld,%lld,%lld,%d,%s,%.4f,%.4f,%.3f,%s,%.3f,%.4f,%.4f,%lld,"
                               "%.4f,%.4f\n",
                               mpi_name, (long long)c.size, (long long)run, (long long)pitch,
                               c.count, o == 0 ? "pack" : "unpack",
                               (double)c.size / med[M_ENGINE] * 1e-9,
                               (double)c.size / med[M_MPI] * 1e-9, ratio, eng ? "engine" : "mpi",
                               eng ? ratio : 1.0, (double)c.size / med[M_RUNS] * 1e-9,
                               (double)c.size / med[M_MEMCPY] * 1e-9, (long long)c.footprint,
                               med[M_ENGINE] * 1e6, med[M_MPI] * 1e6);
                        fflush(stdout);
                    }
                    PMPI_Type_free(&c.type);
                }
            }
        }
    }
    print_load("at the end");
    munmap(typed, (size_t)typed_len);
    free(pe);
    free(pm);
    MPI_Finalize();
    return 0;
}
