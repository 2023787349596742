/* SPDX-License-Identifier: BSD-3-Clause */
/* One compile per kernel per shared cache: every rank of a job commits the same strided types at
 * once into one cold cache directory (TYPEJIT_JIT=always, no device needed). The per-key locks
 * must make the ranks together compile each distinct kernel exactly once (sync mode: the others
 * wait for the entry and load it) or at most once (background mode), and every rank must still
 * pack exactly what the system MPI packs (TYPEJIT_HOST=engine).
 *
 *   mpirun -np N test_compile_once [--types T] [--background]
 *
 * Rank 0 prints the sum of jit_compiles over the ranks and checks it against 2 * T (a pack and an
 * unpack kernel per type; the T types have distinct layouts). --background: each rank first waits
 * (at most 60 s) until its background compiler has taken up every kernel, then a little longer
 * for compiles under way; at least one compile and no kernel compiled twice. --finalize-now:
 * background mode, but MPI_Finalize right after the commits, which must still leave every kernel
 * in the cache (TYPEJIT_JIT_DRAIN; the test reads the stats line of this run and of the next). */
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "counters.h"
#include "options.h"

int main(int argc, char **argv)
{
    int rank, nranks, types = 20;
    bool at_most = false, now = false;
    long compiles, total = 0, bad = 0, all_bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    options_read(argc, argv,
                 (const opt_t[]){{"--types", OPT_INT, &types},
                                 {"--background", OPT_FLAG, &at_most},
                                 {"--finalize-now", OPT_FLAG, &now},
                                 {NULL}});
    REQUIRE(dlsym(RTLD_DEFAULT, "tj_version") != NULL); /* run with libtypejit.so preloaded */
    /* Start together, so that the ranks race for every kernel. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < types; t++) {
        /* Distinct layouts: t + 2 runs of t % 3 + 1 doubles, t + 5 doubles apart. */
        MPI_Datatype type;
        double src[4096], dst[4096];
        char ref[32768], got[32768];
        int pr = 0, pg = 0;
        MPI_Type_vector(t + 2, t % 3 + 1, t + 5, MPI_DOUBLE, &type);
        MPI_Type_commit(&type);
        for (int i = 0; i < 4096; i++)
            src[i] = i * 0.5 + rank;
        memset(ref, 0x11, sizeof(ref));
        memset(got, 0x11, sizeof(got));
        PMPI_Pack(src, 2, type, ref, sizeof(ref), &pr, MPI_COMM_SELF);
        MPI_Pack(src, 2, type, got, sizeof(got), &pg, MPI_COMM_SELF);
        bad += pr != pg || memcmp(ref, got, sizeof(ref)) != 0;
        memset(dst, 0, sizeof(dst));
        pg = 0;
        MPI_Unpack(got, sizeof(got), &pg, dst, 2, type, MPI_COMM_SELF);
        bad += pg != pr;
        MPI_Type_free(&type);
    }
    if (now) {
        MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            CHECK(all_bad == 0);
        MPI_Finalize();
        if (rank != 0)
            return 0;
        CHECK_DONE();
    }
    if (at_most) {
        /* Every kernel request ends as a disk hit or a miss (compiled here, or loaded after
         * another rank's compile): wait until all have started, then for the last ones. */
        struct timespec pause = {0, 50 * 1000 * 1000};
        for (int i = 0;
             i < 1200 && tj_counter("cache_hits_disk") + tj_counter("cache_misses") < 2 * types;
             i++)
            nanosleep(&pause, NULL);
        for (int i = 0; i < 20; i++)
            nanosleep(&pause, NULL);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    compiles = tj_counter("jit_compiles");
    MPI_Reduce(&compiles, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%d ranks, %d types: %ld compiles in all (%d distinct kernels), %ld wrong packs\n",
               nranks, types, total, 2 * types, all_bad);
        CHECK(all_bad == 0);
        if (at_most)
            CHECK(total >= 1 && total <= 2 * types);
        else
            CHECK_EQ_INT(total, 2 * types);
    }
    MPI_Finalize();
    if (rank != 0)
        return 0;
    CHECK_DONE();
}
