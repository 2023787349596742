/* SPDX-License-Identifier: BSD-3-Clause */
/* The preloaded interposer under mpirun: MPI_Pack / MPI_Unpack through the wrappers against
 * PMPI_Pack / PMPI_Unpack on random and hand-made types, with positions != 0, too-small buffers
 * (same error code, position untouched), a packed exchange between ranks, the counters, and
 * commits, frees and packs from several threads at once.
 *
 *   test_interpose MODE [--types N]
 *   MODE: engine   (run with TYPEJIT_HOST=engine: the engine must take strided packs)
 *         auto     (default settings: the engine takes the strided types the cost model gives
 *                   it, the system MPI the others)
 *         system   (TYPEJIT_HOST=system: every host pack goes to the system MPI)
 *         disabled (TYPEJIT_DISABLE=1: nothing is counted)
 *         threads  (MPI_THREAD_MULTIPLE, 4 threads)
 */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "randtype.h"
#include "sysmpi.h"

typedef int (*describe_fn)(const void *, char *, size_t);

static int rank, nranks;

/* Pack and unpack one type both ways and compare; returns 1 if the call pair differed. */
static int compare_type(MPI_Datatype type, int count, int pos, const char *desc)
{
    MPI_Aint tlb, text, lb, ext;
    int size, outsize, p1 = pos, p2 = pos, rc1, rc2, bad = 0;
    int64_t lo, span;
    unsigned char *src, *a, *b, *u1, *u2;

    MPI_Type_size(type, &size);
    MPI_Type_get_true_extent(type, &tlb, &text);
    MPI_Type_get_extent(type, &lb, &ext);
    lo = tlb + ((count - 1) * ext < 0 ? (count - 1) * ext : 0);
    span = text + ((count - 1) * ext < 0 ? -(count - 1) * ext : (count - 1) * ext);
    if (span > (64 << 20))
        return 0;
    /* MPICH 4.0 divides by the size of an empty type in MPI_Unpack (SIGFPE), without typejit
     * too. */
    if (size == 0 && sysmpi_version_has("MPICH Version: 4.0"))
        return 0;
    src = malloc((size_t)span + 1);
    u1 = malloc((size_t)span + 1);
    u2 = malloc((size_t)span + 1);
    outsize = pos + count * size;
    a = malloc((size_t)outsize + 8);
    b = malloc((size_t)outsize + 8);
    REQUIRE(src && u1 && u2 && a && b);
    for (int64_t i = 0; i < span; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    memset(a, 0xA5, (size_t)outsize + 8);
    memset(b, 0xA5, (size_t)outsize + 8);

    /* Exact fit. */
    rc1 = MPI_Pack(src - lo, count, type, a, outsize, &p1, MPI_COMM_WORLD);
    rc2 = PMPI_Pack(src - lo, count, type, b, outsize, &p2, MPI_COMM_WORLD);
    if (rc1 != rc2 || p1 != p2 || memcmp(a, b, (size_t)outsize + 8) != 0)
        bad = 1;
    /* One byte short: an error (the communicator returns errors), position untouched. The MPICH
     * family packs what fits without an error and aborts on a short unpack (MPICH 4.0.2). */
    if (size > 0 && sysmpi_is_open_mpi()) {
        int q1 = pos, q2 = pos;
        rc1 = MPI_Pack(src - lo, count, type, a, outsize - 1, &q1, MPI_COMM_WORLD);
        rc2 = PMPI_Pack(src - lo, count, type, b, outsize - 1, &q2, MPI_COMM_WORLD);
        int c1, c2;
        MPI_Error_class(rc1, &c1);
        MPI_Error_class(rc2, &c2);
        if (rc1 == MPI_SUCCESS || c1 != c2 || q1 != q2 || memcmp(a, b, (size_t)outsize + 8) != 0)
            bad |= 2;
        q1 = q2 = pos;
        rc1 = MPI_Unpack(a, outsize - 1, &q1, u1 - lo, count, type, MPI_COMM_WORLD);
        rc2 = PMPI_Unpack(a, outsize - 1, &q2, u2 - lo, count, type, MPI_COMM_WORLD);
        MPI_Error_class(rc1, &c1);
        MPI_Error_class(rc2, &c2);
        if (c1 != c2 || q1 != q2)
            bad |= 4;
    }
    /* Unpack the packed bytes back into poisoned copies. */
    memset(u1, 0x5A, (size_t)span + 1);
    memset(u2, 0x5A, (size_t)span + 1);
    p1 = p2 = pos;
    rc1 = MPI_Unpack(a, outsize, &p1, u1 - lo, count, type, MPI_COMM_WORLD);
    rc2 = PMPI_Unpack(a, outsize, &p2, u2 - lo, count, type, MPI_COMM_WORLD);
    if (rc1 != rc2 || p1 != p2 || memcmp(u1, u2, (size_t)span + 1) != 0)
        bad |= 8;
    if (bad)
        fprintf(stderr, "rank %d: mismatch %d for %s count=%d pos=%d\n", rank, bad, desc, count,
                pos);
    free(src);
    free(u1);
    free(u2);
    free(a);
    free(b);
    return bad != 0;
}

static int run_random(long types, uint64_t seed)
{
    rt_options_t opt = {
        .max_depth = 4, .max_size = 1 << 16, .max_span = 1 << 24, .huge_percent = 0};
    rt_rng_t rng;
    char desc[8192];
    int bad = 0;

    rt_seed(&rng, seed);
    for (long t = 0; t < types; t++) {
        MPI_Datatype type = rt_draw_type(&rng, &opt, desc, sizeof(desc));
        bad += compare_type(type, (int)rt_range(&rng, 1, 4), (int)rt_range(&rng, 0, 9), desc);
        MPI_Type_free(&type);
    }
    /* Named types, including ones with holes. */
    MPI_Datatype named[] = {MPI_DOUBLE,    MPI_FLOAT, MPI_DOUBLE_INT,
                            MPI_SHORT_INT, MPI_2INT,  MPI_BYTE};
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        bad += compare_type(named[i], 3, 5, "named");
    return bad;
}

/* The packed bytes of a strided type travel to the next rank, which unpacks them. */
static int exchange(void)
{
    enum { NX = 64, NY = 32 };
    MPI_Datatype column;
    double grid[NY][NX], got[NY][NX];
    char packed[NY * sizeof(double) * 2];
    int pos = 0, bad = 0, to = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;

    MPI_Type_vector(NY, 1, NX, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            grid[y][x] = rank * 100000 + y * 100 + x;
            got[y][x] = -1;
        }
    MPI_Pack(&grid[0][3], 1, column, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    MPI_Sendrecv_replace(packed, pos, MPI_PACKED, to, 0, from, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    pos = 0;
    MPI_Unpack(packed, sizeof(packed), &pos, &got[0][5], 1, column, MPI_COMM_WORLD);
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) {
            double want = x == 5 ? from * 100000 + y * 100 + 3 : -1;
            bad += got[y][x] != want;
        }
    MPI_Type_free(&column);
    return bad;
}

typedef struct {
    int id;
    int bad;
} thread_arg_t;

static void *thread_main(void *p)
{
    thread_arg_t *arg = p;
    arg->bad = run_random(300, 100 + (uint64_t)arg->id);
    return NULL;
}

/* Every commit counted once: strided, deferred to its first device call, or left to the MPI. */
static void check_commits_counted(void)
{
    CHECK(tj_counter("commits") ==
          tj_counter("strided") + tj_counter("deferred") + tj_counter("fallback"));
}

/* Host calls only: no layout is built, however many types are not strided. */
static void check_host_only_commits(void)
{
    CHECK(tj_counter("deferred") > 0);
    CHECK_EQ_INT(tj_counter("layouts"), 0);
    check_commits_counted();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "engine";
    long types = argc > 3 && strcmp(argv[2], "--types") == 0 ? atol(argv[3]) : 1000;
    bool threads = strcmp(mode, "threads") == 0;
    int provided, bad;

    if (threads) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (provided < MPI_THREAD_MULTIPLE) {
            printf("SKIP: MPI_THREAD_MULTIPLE not provided\n");
            MPI_Finalize();
            return 77;
        }
    } else {
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* the library is preloaded */

    if (threads) {
        pthread_t tid[4];
        thread_arg_t args[4];
        for (int i = 0; i < 4; i++) {
            args[i].id = i + rank * 4;
            pthread_create(&tid[i], NULL, thread_main, &args[i]);
        }
        bad = 0;
        for (int i = 0; i < 4; i++) {
            pthread_join(tid[i], NULL);
            bad += args[i].bad;
        }
    } else {
        bad = run_random(types, 1 + (uint64_t)rank);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(exchange(), 0);

    if (strcmp(mode, "engine") == 0 || threads) {
        CHECK(tj_counter("packs_engine") > 0);
        CHECK(tj_counter("unpacks_engine") > 0);
        CHECK(tj_counter("strided") > 0);
        /* The engine packs host calls: a type whose layout waits for its first device call has
         * it built at its first engine call instead (it may be one strided block). */
        CHECK(tj_counter("deferred") > 0);
        CHECK(tj_counter("layouts") > 0);
        check_commits_counted();
    } else if (strcmp(mode, "auto") == 0) {
        /* Random types are mostly short runs, which the engine moves faster than any system
         * MPI: some go to the engine, and the others (not strided, or not ahead) to the MPI. */
        CHECK(tj_counter("packs_engine") > 0);
        CHECK(tj_counter("unpacks_engine") > 0);
        CHECK(tj_counter("packs_system") > 0);
        check_host_only_commits();
    } else if (strcmp(mode, "system") == 0) {
        CHECK(tj_counter("packs_engine") == 0);
        CHECK(tj_counter("packs_system") > 0);
        CHECK(tj_counter("commits") > 0);
        check_host_only_commits();
    } else if (strcmp(mode, "disabled") == 0) {
        CHECK(tj_counter("commits") == 0);
        CHECK(tj_counter("packs_system") == 0);
    }
    MPI_Finalize();
    CHECK_DONE();
}
