/* SPDX-License-Identifier: BSD-3-Clause */
/* Datatype create + commit + free time, natively and under typejit, in one run (TEMPI figure 7).
 *
 *   LD_PRELOAD=libtypejit.so bench_commit [--quick] [--rounds N] [--iters N] [--shape TEXT]
 *                                         [--mode both|native|typejit]
 *   LD_PRELOAD=libtypejit.so bench_commit --huge [--quick] [--rounds N] [--shape TEXT]
 *                                         [--mode both|native|typejit]
 *   LD_PRELOAD=libtypejit.so bench_commit --many [--quick] [--rounds N] [--iters N]
 *
 * The 3-D objects of the paper's figure 7 are built four ways (subarray; hvector of vector;
 * hvector of hvector of vector; subarray of vector) for a few cuboids. With the library
 * preloaded, the MPI_Type_* constructors, MPI_Type_commit and MPI_Type_free go through typejit
 * (which records each new type's translation in its constructor wrappers) while the PMPI_Type_*
 * ones bypass it, so both are timed in the same process, interleaved round by round.
 * Each round times a batch of `iters` types phase by phase (create, commit, free) and then the
 * combined loop (create, commit, free one type at a time); each column is the median over the
 * rounds of the mean time per type. Without the library preloaded both columns time the system
 * MPI and the ratios are about 1. The heap is never trimmed (mallopt), so that page faults
 * from regrowing it do not land on one mode at random. Prints CSV on stdout.
 *
 * --huge times instead the commit of types with hundreds of thousands of members (indexed,
 * hindexed, indexed_block, struct; strided and not), the shapes of MPICH's DTPools tests, one
 * type at a time. With one shape and one mode selected it also reports the growth of the peak
 * resident set over that one commit (ru_maxrss), which is only meaningful in a fresh process.
 *
 * --many times batches of `iters` small irregular indexed types (8 to 64 blocks each, as an
 * unstructured mesh code makes per neighbour and field) created, committed and freed, host only:
 * what typejit adds to a program whose types it cannot speed up. */
#include <dlfcn.h>
#include <malloc.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "util/clock.h"

#define MAX_PARTS  3 /* handles one object is built from: the outer type and its intermediates */
#define MAX_ROUNDS 1000
#define NCUBOIDS   (sizeof(cuboids) / sizeof(cuboids[0]))

/* A cuboid of `sub` elements (x fastest) at `start` inside an allocation of `alloc` elements. */
typedef struct {
    const char *name;
    MPI_Datatype elem;
    int esize;
    int sub[3], alloc[3], start[3];
} cuboid_t;

typedef enum { SUBARRAY, HVEC_VEC, HVEC_HVEC_VEC, SUBARRAY_VEC, NREPR } repr_t;

static const char *const repr_names[NREPR] = {"subarray", "hvector_vector",
                                              "hvector_hvector_vector", "subarray_vector"};

/* alloc[0] and start[0] must be multiples of sub[0]: the subarray of row vectors counts x in
 * rows. */
static const cuboid_t cuboids[] = {
    {"16x4x4f", MPI_FLOAT, 4, {16, 4, 4}, {64, 64, 64}, {16, 1, 1}},
    {"64x64x64f", MPI_FLOAT, 4, {64, 64, 64}, {256, 256, 256}, {64, 8, 8}},
    {"12x512x512d", MPI_DOUBLE, 8, {12, 512, 512}, {528, 528, 528}, {12, 8, 8}},
    {"512x512x12d", MPI_DOUBLE, 8, {512, 512, 12}, {1024, 528, 528}, {0, 8, 8}},
};

typedef int (*type_fn_t)(MPI_Datatype *);
typedef int (*vector_fn_t)(int, int, int, MPI_Datatype, MPI_Datatype *);
typedef int (*hvector_fn_t)(int, int, MPI_Aint, MPI_Datatype, MPI_Datatype *);
typedef int (*subarray_fn_t)(int, const int[], const int[], const int[], int, MPI_Datatype,
                             MPI_Datatype *);

/* The native set bypasses the interposer; the typejit set resolves to the preloaded wrappers
 * (to the system MPI when nothing is preloaded). typejit records each new type's translation in
 * its constructor wrappers, so the constructors are part of each mode. */
typedef struct {
    const char *name;
    type_fn_t commit, release;
    vector_fn_t vector;
    hvector_fn_t hvector;
    subarray_fn_t subarray;
} bmode_t;

typedef struct {
    double create, commit, release, total; /* microseconds per type */
} sample_t;

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0.0;
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "bench_commit: %s failed (rc=%d)\n", what, rc);
        MPI_Abort(MPI_COMM_SELF, 1);
    }
}

/* Build one object with the constructors of @p m; parts[0] is the type to commit, the others are
 * intermediates that are freed with it. Returns how many handles were created. */
static int create(const cuboid_t *c, repr_t r, const bmode_t *m, MPI_Datatype *parts)
{
    const int sx = c->sub[0], sy = c->sub[1], sz = c->sub[2];
    const int ax = c->alloc[0], ay = c->alloc[1], az = c->alloc[2];
    const MPI_Aint row = (MPI_Aint)ax * c->esize, plane = row * ay;

    switch (r) {
    case SUBARRAY: {
        int sizes[3] = {az, ay, ax}, subs[3] = {sz, sy, sx};
        int starts[3] = {c->start[2], c->start[1], c->start[0]};
        check(m->subarray(3, sizes, subs, starts, MPI_ORDER_C, c->elem, &parts[0]),
              "MPI_Type_create_subarray");
        return 1;
    }
    case HVEC_VEC:
        check(m->vector(sy, sx, ax, c->elem, &parts[1]), "MPI_Type_vector");
        check(m->hvector(sz, 1, plane, parts[1], &parts[0]), "MPI_Type_create_hvector");
        return 2;
    case HVEC_HVEC_VEC:
        /* The row is a vector of single elements one element apart: a contiguous run written
         * the long way, which the canonical passes must fold. */
        check(m->vector(sx, 1, 1, c->elem, &parts[2]), "MPI_Type_vector");
        check(m->hvector(sy, 1, row, parts[2], &parts[1]), "MPI_Type_create_hvector");
        check(m->hvector(sz, 1, plane, parts[1], &parts[0]), "MPI_Type_create_hvector");
        return 3;
    case SUBARRAY_VEC: {
        /* The subarray's element is one row of the cuboid, so the x dimension counts rows. */
        int sizes[3] = {az, ay, ax / sx}, subs[3] = {sz, sy, 1};
        int starts[3] = {c->start[2], c->start[1], c->start[0] / sx};
        check(m->vector(1, sx, sx, c->elem, &parts[1]), "MPI_Type_vector");
        check(m->subarray(3, sizes, subs, starts, MPI_ORDER_C, parts[1], &parts[0]),
              "MPI_Type_create_subarray");
        return 2;
    }
    default:
        return 0;
    }
}

/* One round of one mode: the three phases over a batch, then the combined loop. */
static sample_t run_round(const cuboid_t *c, repr_t r, const bmode_t *m, int iters,
                          MPI_Datatype (*h)[MAX_PARTS], int *nparts)
{
    sample_t s;
    double t0, t1, t2, t3, t4;

    t0 = tj_clock_seconds();
    for (int i = 0; i < iters; i++)
        nparts[i] = create(c, r, m, h[i]);
    t1 = tj_clock_seconds();
    for (int i = 0; i < iters; i++)
        check(m->commit(&h[i][0]), "commit");
    t2 = tj_clock_seconds();
    for (int i = 0; i < iters; i++)
        for (int p = 0; p < nparts[i]; p++)
            check(m->release(&h[i][p]), "free");
    t3 = tj_clock_seconds();
    for (int i = 0; i < iters; i++) {
        MPI_Datatype parts[MAX_PARTS];
        int n = create(c, r, m, parts);
        check(m->commit(&parts[0]), "commit");
        for (int p = 0; p < n; p++)
            check(m->release(&parts[p]), "free");
    }
    t4 = tj_clock_seconds();
    s.create = (t1 - t0) * 1e6 / iters;
    s.commit = (t2 - t1) * 1e6 / iters;
    s.release = (t3 - t2) * 1e6 / iters;
    s.total = (t4 - t3) * 1e6 / iters;
    return s;
}

/* What typejit made of the object, through its public tj_type_describe when preloaded. */
static void describe(const cuboid_t *c, repr_t r, const bmode_t *m, const char *label)
{
    static char first_layout[512];
    static const cuboid_t *first_of;
    typedef int (*describe_fn_t)(const void *, char *, size_t);
    describe_fn_t fn = (describe_fn_t)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    MPI_Datatype parts[MAX_PARTS];
    char text[512] = "";
    int n = create(c, r, m, parts);
    int size;

    check(MPI_Type_commit(&parts[0]), "MPI_Type_commit");
    MPI_Type_size(parts[0], &size);
    if (fn == NULL || fn(&parts[0], text, sizeof(text)) != 0)
        snprintf(text, sizeof(text), "(no typejit description)");
    printf("# %s: size=%d B, typejit: %s\n", label, size, text);
    /* The four constructions of one cuboid are one layout: the same counts and strides (start
     * and extent legitimately differ). */
    const char *layout = strstr(text, "counts=");
    if (layout != NULL) {
        if (first_of != c) {
            first_of = c;
            snprintf(first_layout, sizeof(first_layout), "%s", layout);
        } else if (strcmp(layout, first_layout) != 0)
            printf("# WARNING: %s has another layout than the first construction of %s\n", label,
                   c->name);
    }
    for (int p = 0; p < n; p++)
        check(MPI_Type_free(&parts[p]), "MPI_Type_free");
}

/* --- huge indexed and struct types (--huge) ------------------------------------------------- */

typedef enum {
    H_INDEXED,        /* MPI_Type_indexed, element displacements */
    H_HINDEXED,       /* MPI_Type_create_hindexed, byte displacements */
    H_INDEXED_BLOCK,  /* MPI_Type_create_indexed_block */
    H_HINDEXED_BLOCK, /* MPI_Type_create_hindexed_block */
    H_STRUCT,         /* MPI_Type_create_struct, every member of one type */
    H_VECTOR,         /* MPI_Type_vector: the same layout with O(1) arguments, for scale */
} hkind_t;

/* Member i sits at displacement disp_a * i + disp_b * (i % 2) (elements of `elem`, bytes for
 * the h-forms and struct) with blocklen blen + blen_mod * (i % 3); `last` is added to the last
 * displacement. Equal blocks at even spacing are strided; the irregular ones differ at member 1
 * (an early exit) or only at the last member (a full scan). */
typedef struct {
    const char *name;
    hkind_t kind;
    int n, blen, blen_mod;
    long disp_a, disp_b, last;
    MPI_Datatype elem;
} huge_t;

static const huge_t huges[] = {
    {"indexed_1M_int_stride3", H_INDEXED, 1000000, 1, 0, 3, 0, 0, MPI_INT},
    {"indexed_1M_int_last_off", H_INDEXED, 1000000, 1, 0, 3, 0, 1, MPI_INT},
    {"indexed_1M_int_irregular", H_INDEXED, 1000000, 1, 0, 3, 1, 0, MPI_INT},
    {"hindexed_1M_double_stride24", H_HINDEXED, 1000000, 1, 0, 24, 0, 0, MPI_DOUBLE},
    {"dtp_indexed_bl1_str2_262144int", H_INDEXED, 262144, 1, 0, 2, 0, 0, MPI_INT},
    {"dtp_hindexed_bl4_str32_262144int", H_HINDEXED, 65536, 4, 0, 32, 0, 0, MPI_INT},
    {"dtp_indexed_block_bl2_str3_262144int", H_INDEXED_BLOCK, 131072, 2, 0, 3, 0, 0, MPI_INT},
    {"dtp_hindexed_block_bl1_str16_262144int", H_HINDEXED_BLOCK, 262144, 1, 0, 16, 0, 0, MPI_INT},
    {"dtp_indexed_varbl_262144int", H_INDEXED, 131072, 1, 1, 4, 0, 0, MPI_INT},
    {"dtp_struct_262144int", H_STRUCT, 262144, 1, 0, 8, 0, 0, MPI_INT},
    {"dtp_struct_contig_262144int", H_STRUCT, 262144, 1, 0, 4, 0, 0, MPI_INT},
    {"dtp_vector_bl1_str2_262144int", H_VECTOR, 262144, 1, 0, 2, 0, 0, MPI_INT},
};
#define NHUGES (sizeof(huges) / sizeof(huges[0]))

/* Native mode calls the PMPI constructors: typejit's wrappers translate the type at creation. */
static MPI_Datatype huge_create(const huge_t *h, bool native)
{
    int n = h->n, esize;
    int *bl = malloc((size_t)n * sizeof(int)), *d = malloc((size_t)n * sizeof(int));
    MPI_Aint *bd = malloc((size_t)n * sizeof(MPI_Aint));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype)), t = MPI_DATATYPE_NULL;

    if (bl == NULL || d == NULL || bd == NULL || types == NULL) {
        fprintf(stderr, "bench_commit: out of memory\n");
        MPI_Abort(MPI_COMM_SELF, 1);
    }
    MPI_Type_size(h->elem, &esize);
    for (int i = 0; i < n; i++) {
        long disp = h->disp_a * i + h->disp_b * (i % 2) + (i == n - 1 ? h->last : 0);
        bl[i] = h->blen + h->blen_mod * (i % 3);
        d[i] = (int)disp;
        bd[i] = (MPI_Aint)disp;
        types[i] = h->elem;
    }
    switch (h->kind) {
    case H_INDEXED:
        check((native ? PMPI_Type_indexed : MPI_Type_indexed)(n, bl, d, h->elem, &t),
              "MPI_Type_indexed");
        break;
    case H_HINDEXED:
        check(
            (native ? PMPI_Type_create_hindexed : MPI_Type_create_hindexed)(n, bl, bd, h->elem, &t),
            "MPI_Type_create_hindexed");
        break;
    case H_INDEXED_BLOCK:
        check((native ? PMPI_Type_create_indexed_block
                      : MPI_Type_create_indexed_block)(n, h->blen, d, h->elem, &t),
              "MPI_Type_create_indexed_block");
        break;
    case H_HINDEXED_BLOCK:
        check((native ? PMPI_Type_create_hindexed_block
                      : MPI_Type_create_hindexed_block)(n, h->blen, bd, h->elem, &t),
              "MPI_Type_create_hindexed_block");
        break;
    case H_STRUCT:
        check((native ? PMPI_Type_create_struct : MPI_Type_create_struct)(n, bl, bd, types, &t),
              "MPI_Type_create_struct");
        break;
    case H_VECTOR:
        check(
            (native ? PMPI_Type_vector : MPI_Type_vector)(n, h->blen, (int)h->disp_a, h->elem, &t),
            "MPI_Type_vector");
        break;
    }
    free(bl);
    free(d);
    free(bd);
    free(types);
    return t;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Create, commit, free one huge type; *create_ms gets the time of the constructor call (with
 * filling its argument arrays; typejit translates the type in its constructor wrapper) and
 * *grown_kb the growth of the peak resident set over create + commit. Returns the commit time
 * in milliseconds. */
static double huge_commit(const huge_t *h, const bmode_t *m, double *create_ms, long *grown_kb)
{
    long r0 = maxrss_kb();
    double t0 = tj_clock_seconds(), t1, t2;
    MPI_Datatype t = huge_create(h, m->commit == PMPI_Type_commit);

    t1 = tj_clock_seconds();
    check(m->commit(&t), "commit");
    t2 = tj_clock_seconds();
    *grown_kb = maxrss_kb() - r0;
    check(m->release(&t), "free");
    *create_ms = (t1 - t0) * 1e3;
    return (t2 - t1) * 1e3;
}

static int run_huge(const bmode_t *modes, const bool *use, int rounds, const char *filter)
{
    typedef int (*describe_fn_t)(const void *, char *, size_t);
    describe_fn_t fn = (describe_fn_t)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
    int selected = 0;

    for (size_t i = 0; i < NHUGES; i++)
        selected += filter == NULL || strstr(huges[i].name, filter) != NULL;
    printf("# huge types: create and commit timed one type at a time, median of %d rounds "
           "(modes alternate); create_ms (native, typejit_create_ms typejit's: it translates "
           "the type in its constructor wrapper) includes filling the argument arrays; "
           "create_commit_ratio = (create+commit) typejit/native; peak_growth_mb = growth of "
           "ru_maxrss over the first create + commit, "
           "reported only with one shape and one mode selected (a fresh process)\n",
           rounds);
    printf("shape,members,create_ms,native_commit_ms,typejit_commit_ms,commit_ratio,"
           "create_commit_ratio,peak_growth_mb,typejit_create_ms\n");
    for (size_t i = 0; i < NHUGES; i++) {
        const huge_t *h = &huges[i];
        double v[2][MAX_ROUNDS], cr[2][MAX_ROUNDS], med[2] = {0, 0}, create[2] = {0, 0};
        long grown[2] = {-1, -1};
        char peak[32] = "";

        if (filter != NULL && strstr(h->name, filter) == NULL)
            continue;
        for (int round = 0; round < rounds; round++)
            for (int j = 0; j < 2; j++) {
                int k = (round + j) % 2;
                long g;
                if (!use[k])
                    continue;
                v[k][round] = huge_commit(h, &modes[k], &cr[k][round], &g);
                if (grown[k] < 0)
                    grown[k] = g;
            }
        for (int k = 0; k < 2; k++)
            if (use[k]) {
                med[k] = tj_median(v[k], rounds);
                create[k] = tj_median(cr[k], rounds);
            }
        if (selected == 1 && use[0] != use[1])
            snprintf(peak, sizeof(peak), "%.1f", (double)grown[use[1]] / 1024.0);
        printf("%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%.3f\n", h->name, h->n, create[0], med[0], med[1],
               ratio(med[1], med[0]), ratio(create[1] + med[1], create[0] + med[0]), peak,
               create[1]);
        fflush(stdout);
    }
    /* After the timings: a first commit here would set the peak the growth is measured from. */
    for (size_t i = 0; i < NHUGES; i++) {
        char text[512] = "";
        MPI_Datatype t;
        int size;
        if (filter != NULL && strstr(huges[i].name, filter) == NULL)
            continue;
        if (!use[1])
            break;
        t = huge_create(&huges[i], false);
        check(MPI_Type_commit(&t), "MPI_Type_commit");
        MPI_Type_size(t, &size);
        if (fn == NULL || fn(&t, text, sizeof(text)) != 0)
            snprintf(text, sizeof(text), "(no typejit description)");
        printf("# %s: members=%d size=%d B, typejit: %s\n", huges[i].name, huges[i].n, size, text);
        check(MPI_Type_free(&t), "MPI_Type_free");
    }
    return 0;
}

/* --- thousands of small irregular types (--many) --------------------------------------------- */

/* Type @p i of a batch: an indexed type of 8 to 64 blocks of 1 to 3 ints at uneven places (the
 * per-neighbour gathers of an unstructured mesh code), never one strided block. */
static MPI_Datatype many_create(int i, bool native)
{
    int n = 8 + (i * 7) % 57, bl[64], d[64], at = 0;
    MPI_Datatype t;

    for (int k = 0; k < n; k++) {
        bl[k] = 1 + (i + k) % 3;
        d[k] = at;
        at += bl[k] + 1 + (i * k) % 4;
    }
    check((native ? PMPI_Type_indexed : MPI_Type_indexed)(n, bl, d, MPI_INT, &t),
          "MPI_Type_indexed");
    return t;
}

/* Batches of @p types small irregular types: create all, commit all, free all, per mode,
 * alternating which goes first; medians over the rounds of the mean per type. */
static int run_many(const bmode_t *modes, const bool *use, int rounds, int types)
{
    int (*fmt)(char *, size_t) =
        (int (*)(char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_stats_format");
    MPI_Datatype *t = malloc((size_t)types * sizeof(MPI_Datatype));
    double v[2][3][MAX_ROUNDS], med[2][3] = {{0}};
    char stats[4096] = "";

    if (t == NULL) {
        fprintf(stderr, "bench_commit: out of memory\n");
        return 1;
    }
    printf("# many small types: %d indexed types of 8 to 64 irregular blocks of ints per batch, "
           "created, committed and freed as batches, median of %d rounds (modes alternate); "
           "microseconds per type\n",
           types, rounds);
    printf("shape,types,native_create_us,typejit_create_us,native_commit_us,typejit_commit_us,"
           "commit_ratio,create_commit_ratio,native_free_us,typejit_free_us\n");
    for (int round = 0; round < rounds; round++)
        for (int j = 0; j < 2; j++) {
            int k = (round + j) % 2;
            double t0, t1, t2, t3;
            if (!use[k])
                continue;
            t0 = tj_clock_seconds();
            for (int i = 0; i < types; i++)
                t[i] = many_create(i, k == 0);
            t1 = tj_clock_seconds();
            for (int i = 0; i < types; i++)
                check(modes[k].commit(&t[i]), "commit");
            t2 = tj_clock_seconds();
            for (int i = 0; i < types; i++)
                check(modes[k].release(&t[i]), "free");
            t3 = tj_clock_seconds();
            v[k][0][round] = (t1 - t0) * 1e6 / types;
            v[k][1][round] = (t2 - t1) * 1e6 / types;
            v[k][2][round] = (t3 - t2) * 1e6 / types;
        }
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < 3 && use[k]; q++)
            med[k][q] = tj_median(v[k][q], rounds);
    printf("indexed_irregular_8to64,%d,%.4f,%.4f,%.4f,%.4f,%.3f,%.3f,%.4f,%.4f\n", types, med[0][0],
           med[1][0], med[0][1], med[1][1], ratio(med[1][1], med[0][1]),
           ratio(med[1][0] + med[1][1], med[0][0] + med[0][1]), med[0][2], med[1][2]);
    /* Host calls only: typejit deferred every layout and built none. */
    if (fmt != NULL && fmt(stats, sizeof(stats)) > 0)
        printf("# typejit counters: %s\n", stats);
    free(t);
    return 0;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--huge | --many] [--quick] [--rounds N] [--iters N] [--shape TEXT] "
            "[--mode both|native|typejit]\n",
            argv0);
}

int main(int argc, char **argv)
{
    const char *(*version)(void);
    int rounds = 20, iters = 2000;
    const char *filter = NULL, *only = "both";
    bmode_t modes[2] = {{"native", PMPI_Type_commit, PMPI_Type_free, PMPI_Type_vector,
                         PMPI_Type_create_hvector, PMPI_Type_create_subarray},
                        {"typejit", MPI_Type_commit, MPI_Type_free, MPI_Type_vector,
                         MPI_Type_create_hvector, MPI_Type_create_subarray}};
    MPI_Datatype(*h)[MAX_PARTS];
    int *nparts;
    bool use[2], huge = false, many = false, quick = false, rounds_set = false;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            rounds = rounds_set ? rounds : 5;
            iters = 500;
            quick = true;
        } else if (strcmp(argv[i], "--huge") == 0) {
            huge = true;
        } else if (strcmp(argv[i], "--many") == 0) {
            many = true;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
            rounds_set = true;
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            filter = argv[++i];
        } else if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            usage(argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || iters < 1 ||
        (strcmp(only, "both") != 0 && strcmp(only, "native") != 0 &&
         strcmp(only, "typejit") != 0)) {
        usage(argv[0]);
        return 2;
    }
    use[0] = strcmp(only, "typejit") != 0;
    use[1] = strcmp(only, "native") != 0;
    /* Each batch frees thousands of datatypes at once; by default glibc then returns the top of
     * the heap to the kernel, and whichever mode runs next pays page faults to grow it again,
     * which made single columns jump by 2-3x from run to run. Keep the heap: the benchmark
     * measures datatype work, not the allocator's trimming policy. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    MPI_Init(&argc, &argv);
    if (huge) {
        /* Each huge commit takes tens of milliseconds: fewer rounds give stable medians. */
        int hr = rounds_set ? rounds : quick ? 3 : 7;
        version = (const char *(*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_version");
        printf("# typejit %s\n", version != NULL ? version() : "NOT preloaded (ratios ~1)");
        run_huge(modes, use, hr, filter);
        MPI_Finalize();
        return 0;
    }
    if (many) {
        int rc;
        version = (const char *(*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_version");
        printf("# typejit %s\n", version != NULL ? version() : "NOT preloaded (ratios ~1)");
        rc = run_many(modes, use, rounds, iters);
        MPI_Finalize();
        return rc;
    }
    h = malloc((size_t)iters * sizeof(*h));
    nparts = malloc((size_t)iters * sizeof(*nparts));
    if (h == NULL || nparts == NULL) {
        fprintf(stderr, "bench_commit: out of memory\n");
        return 1;
    }

    version = (const char *(*)(void))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_version");
    if (version != NULL)
        printf("# typejit %s preloaded: typejit columns time MPI_Type_commit/MPI_Type_free "
               "through it, native columns PMPI_Type_commit/PMPI_Type_free\n",
               version());
    else
        printf("# typejit NOT preloaded: both columns time the system MPI (ratios ~1)\n");
    printf("# rounds=%d iters=%d; microseconds per type, median over rounds of the batch mean; "
           "create counts every constructor call of the object, free frees all its handles\n",
           rounds, iters);
    printf("# ratio = typejit/native of the combined create+commit+free loop; commit_ratio = "
           "typejit/native commit alone; create_commit_ratio = (create+commit) typejit/native "
           "from the batch phases\n");

    /* The descriptions first, so that the CSV below is one block. */
    for (size_t ci = 0; ci < NCUBOIDS; ci++)
        for (int r = 0; r < NREPR; r++) {
            char label[128];
            snprintf(label, sizeof(label), "%s_%s", repr_names[r], cuboids[ci].name);
            if (filter == NULL || strstr(label, filter) != NULL)
                describe(&cuboids[ci], (repr_t)r, &modes[1], label);
        }
    printf("shape,create_us,native_commit_us,typejit_commit_us,ratio,commit_ratio,"
           "create_commit_ratio,native_free_us,typejit_free_us,native_total_us,typejit_total_us,"
           "typejit_create_us\n");
    for (size_t ci = 0; ci < NCUBOIDS; ci++) {
        const cuboid_t *c = &cuboids[ci];
        for (int r = 0; r < NREPR; r++) {
            char label[128];
            double v[2][4][MAX_ROUNDS]; /* [mode][create, commit, free, total][round] */
            double med[2][4] = {{0}};

            snprintf(label, sizeof(label), "%s_%s", repr_names[r], c->name);
            if (filter != NULL && strstr(label, filter) == NULL)
                continue;
            /* One short untimed round per mode warms the caches and the allocator. */
            for (int k = 0; k < 2; k++)
                run_round(c, (repr_t)r, &modes[k], iters < 100 ? iters : 100, h, nparts);
            for (int round = 0; round < rounds; round++) {
                for (int j = 0; j < 2; j++) {
                    int k = (round + j) % 2; /* alternate which mode goes first */
                    if (!use[k])
                        continue;
                    sample_t s = run_round(c, (repr_t)r, &modes[k], iters, h, nparts);
                    v[k][0][round] = s.create;
                    v[k][1][round] = s.commit;
                    v[k][2][round] = s.release;
                    v[k][3][round] = s.total;
                }
            }
            for (int k = 0; k < 2; k++)
                for (int q = 0; q < 4 && use[k]; q++)
                    med[k][q] = tj_median(v[k][q], rounds);
            printf("%s,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f\n", label, med[0][0],
                   med[0][1], med[1][1], ratio(med[1][3], med[0][3]), ratio(med[1][1], med[0][1]),
                   ratio(med[1][0] + med[1][1], med[0][0] + med[0][1]), med[0][2], med[1][2],
                   med[0][3], med[1][3], med[1][0]);
            fflush(stdout);
        }
    }
    free(h);
    free(nparts);
    MPI_Finalize();
    return 0;
}
