/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU pack/unpack throughput: typejit's CPU packer against the system MPI's PMPI_Pack and
 * PMPI_Unpack on 2-D objects (the TEMPI paper's figure 8, widened), in one run, with the memcpy
 * of the same bytes beside them as the ceiling.
 *
 *   bench_pack_cpu [--quick] [--rounds N] [--min-ms MS] [--size BYTES] [--run BYTES]
 *                  [--pitch 512|2x] [--count one|many] [--op pack|unpack]
 *                  [--isa base|avx2|avx512] [--max-footprint BYTES]
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
 * that choice against the system MPI. Prints CSV on stdout, comments starting with '#'. */
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

enum { M_ENGINE, M_MPI, M_RUNS, M_MEMCPY, MOVERS };

typedef struct {
    MPI_Datatype type;
    int count; /* objects of `type` */
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

/* Seconds per call of `reps` calls in a row. */
static double time_calls(op_fn_t op, const case_t *c, int mover, long reps)
{
    double t0 = tj_clock_seconds();
    for (long i = 0; i < reps; i++)
        op(c, mover);
    return (tj_clock_seconds() - t0) / (double)reps;
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

/* Byte-for-byte agreement of the engine and the system MPI on this case; exits if not. */
static void verify(case_t *c, const char *shape)
{
    XXH64_hash_t h[2];
    char msg[256];

    fill(c->typed, c->footprint, 1);
    memset(c->packed_engine, POISON, (size_t)(c->size + GUARD));
    memset(c->packed_mpi, POISON, (size_t)(c->size + GUARD));
    op_pack(c, M_ENGINE);
    op_pack(c, M_MPI);
    if (memcmp(c->packed_engine, c->packed_mpi, (size_t)(c->size + GUARD)) != 0) {
        snprintf(msg, sizeof(msg), "pack differs from PMPI_Pack for %s", shape);
        die(msg);
    }
    /* Unpack different bytes than the typed buffer holds, so that a skipped element shows. */
    fill(c->packed_engine, c->size, 2);
    for (int k = 0; k < 2; k++) {
        fill(c->typed, c->footprint, 3);
        op_unpack(c, k == 0 ? M_ENGINE : M_MPI);
        h[k] = XXH3_64bits(c->typed, (size_t)c->footprint);
    }
    if (h[0] != h[1]) {
        snprintf(msg, sizeof(msg), "unpack differs from PMPI_Unpack for %s", shape);
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

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--quick] [--rounds N] [--min-ms MS] [--size BYTES] [--run BYTES]\n"
            "       [--pitch 512|2x] [--count one|many] [--op pack|unpack]\n"
            "       [--isa base|avx2|avx512] [--max-footprint BYTES]\n",
            argv0);
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
    int64_t max_fp = (int64_t)2 << 30, typed_len = 0, packed_len = 0;
    char *typed, *pe, *pm, mpi_name[96];
    static const char *isa_names[] = {"base", "avx2", "avx512"};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
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
           "measurement >= %.1f ms; median per-call time; GB/s of packed bytes; ratio = "
           "median over rounds of mpi time / engine time; auto = TYPEJIT_HOST=auto's choice\n",
           mpi_name, isa_names[isa], rounds, min_s * 1e3);
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
                        double t[MOVERS][MAX_ROUNDS], med[MOVERS], ratios[MAX_ROUNDS], ratio;
                        long reps[MOVERS];
                        bool eng = o == 0 ? c.plan.pack : c.plan.unpack;
                        if (only_op >= 0 && o != only_op)
                            continue;
                        for (int m = 0; m < MOVERS; m++)
                            reps[m] = calibrate(op, &c, m, min_s);
                        for (int k = 0; k < rounds; k++) {
                            /* The engine and the system MPI run back to back, each round in the
                             * other order and with the two memcpy movers before or after them,
                             * so that neither always inherits the same cache state and the
                             * ratio of one round sees the same load on the machine. */
                            static const int orders[4][MOVERS] = {
                                {M_ENGINE, M_MPI, M_RUNS, M_MEMCPY},
                                {M_RUNS, M_MEMCPY, M_MPI, M_ENGINE},
                                {M_MPI, M_ENGINE, M_MEMCPY, M_RUNS},
                                {M_MEMCPY, M_RUNS, M_ENGINE, M_MPI}};
                            for (int j = 0; j < MOVERS; j++) {
                                int m = orders[k % 4][j];
                                t[m][k] = time_calls(op, &c, m, reps[m]);
                            }
                            ratios[k] = t[M_MPI][k] / t[M_ENGINE][k];
                        }
                        for (int m = 0; m < MOVERS; m++)
                            med[m] = tj_median(t[m], rounds);
                        ratio = tj_median(ratios, rounds);
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
