/* SPDX-License-Identifier: BSD-3-Clause */
/* Commit latency with a cold kernel cache: T strided types of distinct layouts are
 * committed into an empty cache (their kernels must be compiled), then T more of the same
 * layouts (their kernels are in the memory table: the warm commit). Run with libtypejit.so
 * preloaded, TYPEJIT_JIT=always (no device needed) and TYPEJIT_JIT_SYNC=0 or 1; rank 0 prints
 * one CSV row: mode, ranks, types, median and maximum microseconds per commit, cold and warm,
 * and their ratio. bench/run-compile.sh runs it per mode and rank count.
 *
 *   mpirun -np N -x LD_PRELOAD=... bench_cold_commit [--types T] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

/* Commit T types (t = 0 .. T-1: t + 2 runs of t % 3 + 1 doubles, t + 5 apart); seconds each. */
static void commit_all(int types, double *seconds, MPI_Datatype *out)
{
    for (int t = 0; t < types; t++) {
        MPI_Type_vector(t + 2, t % 3 + 1, t + 5, MPI_DOUBLE, &out[t]);
        double t0 = MPI_Wtime();
        MPI_Type_commit(&out[t]);
        seconds[t] = MPI_Wtime() - t0;
    }
}

int main(int argc, char **argv)
{
    int rank, nranks, types = 20;
    const char *sync = getenv("TYPEJIT_JIT_SYNC");

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--types") == 0)
            types = atoi(argv[++i]);
    if (types < 1 || types > 10000) {
        if (rank == 0)
            fprintf(stderr, "usage: bench_cold_commit [--types T], 1 <= T <= 10000\n");
        MPI_Finalize();
        return 2;
    }
    double *cold = malloc(sizeof(double) * (size_t)types);
    double *warm = malloc(sizeof(double) * (size_t)types);
    MPI_Datatype *a = malloc(sizeof(MPI_Datatype) * (size_t)types);
    MPI_Datatype *b = malloc(sizeof(MPI_Datatype) * (size_t)types);
    if (!cold || !warm || !a || !b)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    commit_all(types, cold, a);
    commit_all(types, warm, b);
    double cold_median = tj_median(cold, types), warm_median = tj_median(warm, types);
    if (rank == 0) {
        printf("mode,ranks,types,cold_median_us,cold_max_us,warm_median_us,warm_max_us,"
               "cold_over_warm\n");
        printf("%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.2f\n",
               sync != NULL && strcmp(sync, "1") == 0 ? "sync" : "background", nranks, types,
               cold_median * 1e6, cold[types - 1] * 1e6, warm_median * 1e6, warm[types - 1] * 1e6,
               cold_median / warm_median); /* tj_median sorted both: the last is the largest */
    }
    for (int t = 0; t < types; t++) {
        MPI_Type_free(&a[t]);
        MPI_Type_free(&b[t]);
    }
    free(cold);
    free(warm);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
