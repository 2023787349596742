/* SPDX-License-Identifier: BSD-3-Clause */
/* JIT and kernel-cache costs on the CPU: NVRTC cold compile per kernel, disk-cache
 * load, memory-table lookup, and what that makes of a commit (translate + pack and unpack
 * kernels) cold, warm from disk and warm from memory, against the system MPI's commit. No GPU
 * needed. Prints CSV.
 *
 *   bench_jit [--types N] [--arch sm_90]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "jit/nvrtc.h"
#include "kernels/lookup.h"
#include "type/translate.h"

/* The i-th test shape: 3-D sub-cuboids of different sizes and offsets, so that every one is a
 * different kernel. */
static MPI_Datatype shape(int i)
{
    int sizes[3] = {64, 64, 64}, subs[3] = {1 + i % 7, 2 + i % 13, 3 + i % 29},
        starts[3] = {i % 5, 1, 2};
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_FLOAT, &t);
    return t;
}

/* Commit + translate + both kernels; returns seconds. */
static double commit_with_kernels(int i, const char *arch)
{
    MPI_Datatype t = shape(i);
    tj_block_t b;
    tj_kernel_t *k;
    double t0 = tj_clock_seconds();
    PMPI_Type_commit(&t);
    if (tj_translate_block(t, &b, NULL) == TJ_OK) {
        tj_kernel_spec_t pack = tj_spec_single(&b, b.word, TJ_DIR_PACK, arch);
        tj_kernel_spec_t unpack = tj_spec_single(&b, b.word, TJ_DIR_UNPACK, arch);
        tj_lookup_kernel(&pack, TJ_LOOKUP_COMPILE, &k, NULL);
        tj_lookup_kernel(&unpack, TJ_LOOKUP_COMPILE, &k, NULL);
    }
    double dt = tj_clock_seconds() - t0;
    PMPI_Type_free(&t);
    return dt;
}

int main(int argc, char **argv)
{
    int n = 40;
    const char *arch = "sm_90";
    char dir[] = "/tmp/typejit-bench-XXXXXX";
    double *cold, *disk, *mem, *native;

    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--types") == 0)
            n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--arch") == 0)
            arch = argv[++i];
    }
    if (tj_nvrtc_load() != TJ_OK || mkdtemp(dir) == NULL) {
        printf("# NVRTC not available: nothing measured\n");
        MPI_Finalize();
        return 77;
    }
    cold = calloc((size_t)n, sizeof(double));
    disk = calloc((size_t)n, sizeof(double));
    mem = calloc((size_t)n, sizeof(double));
    native = calloc((size_t)n, sizeof(double));
    tj_lookup_set_store(dir, 0);
    for (int i = 0; i < n; i++)
        cold[i] = commit_with_kernels(i, arch) / 2; /* per kernel, translate included */
    tj_lookup_finalize(); /* a new process: empty memory table, same disk */
    tj_lookup_set_store(dir, 0);
    for (int i = 0; i < n; i++)
        disk[i] = commit_with_kernels(i, arch);
    for (int i = 0; i < n; i++)
        mem[i] = commit_with_kernels(i, arch);
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = shape(i);
        double t0 = tj_clock_seconds();
        PMPI_Type_commit(&t);
        native[i] = tj_clock_seconds() - t0;
        PMPI_Type_free(&t);
    }
    double c = tj_median(cold, n), d = tj_median(disk, n), m = tj_median(mem, n),
           nat = tj_median(native, n);
    printf("# %d distinct 3-D subarray types, target %s, medians; commit = PMPI_Type_commit +"
           " translate + pack and unpack kernels\n",
           n, arch);
    printf("what,us,ratio_to_native_commit\n");
    printf("native_commit,%.2f,1.0\n", nat * 1e6);
    printf("nvrtc_compile_per_kernel,%.0f,%.0f\n", c * 1e6, c / nat);
    printf("commit_cold,%.0f,%.0f\n", 2 * c * 1e6, 2 * c / nat);
    printf("commit_warm_disk,%.1f,%.1f\n", d * 1e6, d / nat);
    printf("commit_warm_memory,%.2f,%.1f\n", m * 1e6, m / nat);
    tj_lookup_set_store(dir, 0);
    tj_lookup_finalize();
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_jit: could not remove %s\n", dir);
    MPI_Finalize();
    return 0;
}
