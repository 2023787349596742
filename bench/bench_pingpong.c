/* SPDX-License-Identifier: BSD-3-Clause */
/* Ping-pong latency between ranks 0 and 1, printed as CSV (rank 0):
 *
 *   mpirun -np 2 [-x LD_PRELOAD=libtypejit.so] bench_pingpong --host [--reps N]
 *       8-byte MPI_BYTE messages in host memory: the cost of interposition on calls typejit
 *       does not take (bench/run-overhead.sh runs it with and without the library);
 *   mpirun -np N [-x LD_PRELOAD=libtypejit.so] bench_pingpong --coll [--reps N]
 *       MPI_Alltoall of 8 doubles per rank and MPI_Allreduce (MPI_SUM) of 8 doubles in host
 *       memory, median time per call on rank 0: the cost of interposition on the collectives
 *       typejit wraps, for a program that never uses a device (bench/run-overhead.sh);
 *   [mpirun -np 1] bench_pingpong --calls [--reps N]
 *       MPI_Send and MPI_Recv of 8 bytes to and from MPI_PROC_NULL in a loop: the system MPI
 *       returns at once, so the time per call is what interposition adds to the system MPI's
 *       entry, free of the network's and the scheduler's noise;
 *   mpirun -np 2 -x LD_PRELOAD=libtypejit.so [-x TYPEJIT_METHOD=M] bench_pingpong --device
 *       [--quick|--smoke]
 *       2-D objects (a vector of runs with a 512-byte pitch) and 3-D objects (a subarray with
 *       runs of the given length) of 1 KiB to 4 MiB in device memory, the TEMPI paper's figure 11:
 *       one row per object with the method the library used (its counters), median time per
 *       round trip.
 *
 * The device mode needs a CUDA device (exit 77 without one); on the CPU-only test driver it is a
 * smoke run whose times mean nothing. */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

static int rank;

/* Median of @p reps round trips of one message of (buf, count, type). */
static double pingpong(void *buf, int count, MPI_Datatype type, int reps)
{
    double *t = malloc((size_t)reps * sizeof(double)), median;
    if (t == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = -reps / 10 - 1; i < reps; i++) { /* the first tenth warms up */
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, count, type, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, count, type, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, count, type, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, type, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    median = tj_median(t, reps);
    free(t);
    return median;
}

static long counter(const char *key)
{
    int (*fmt)(char *, size_t) =
        (int (*)(char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_stats_format");
    char text[2048] = " ", pat[64];
    if (fmt == NULL)
        return -1;
    fmt(text + 1, sizeof(text) - 1);
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *at = strstr(text, pat);
    return at ? atol(at + strlen(pat)) : -1;
}

/* The method the library used since the last call, from its counters. */
static const char *method_used(void)
{
    static long last[3];
    static const char *const names[3] = {"device", "oneshot", "staged"};
    const char *used = "none";
    for (int m = 0; m < 3; m++) {
        char key[32];
        snprintf(key, sizeof(key), "method_%s", names[m]);
        long now = counter(key);
        if (now > last[m])
            used = names[m];
        last[m] = now;
    }
    return used;
}

/* Median time of @p reps calls of MPI_Alltoall (@p all2all) or MPI_Allreduce on host memory. */
static double host_collective(bool all2all, int reps, int nranks)
{
    double *t = malloc((size_t)reps * sizeof(double)), median;
    double *in = calloc((size_t)nranks * 8, sizeof(double));
    double *out = calloc((size_t)nranks * 8, sizeof(double));
    if (t == NULL || in == NULL || out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = -reps / 10 - 1; i < reps; i++) { /* the first tenth warms up */
        double t0 = MPI_Wtime();
        if (all2all)
            MPI_Alltoall(in, 8, MPI_DOUBLE, out, 8, MPI_DOUBLE, MPI_COMM_WORLD);
        else
            MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = MPI_Wtime() - t0;
    }
    median = tj_median(t, reps);
    free(t);
    free(in);
    free(out);
    return median;
}

static int device_mode(int reps, int64_t max_bytes)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    __typeof__(&cuInit) init = lib ? (__typeof__(&cuInit))dlsym(lib, "cuInit") : NULL;
    __typeof__(&cuDeviceGet) device_get =
        lib ? (__typeof__(&cuDeviceGet))dlsym(lib, "cuDeviceGet") : NULL;
    __typeof__(&cuDevicePrimaryCtxRetain) retain =
        lib ? (__typeof__(&cuDevicePrimaryCtxRetain))dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    __typeof__(&cuCtxSetCurrent) set_current =
        lib ? (__typeof__(&cuCtxSetCurrent))dlsym(lib, "cuCtxSetCurrent") : NULL;
    __typeof__(&cuMemAlloc) alloc =
        lib ? (__typeof__(&cuMemAlloc))dlsym(lib, "cuMemAlloc_v2") : NULL;
    __typeof__(&cuMemFree) mem_free =
        lib ? (__typeof__(&cuMemFree))dlsym(lib, "cuMemFree_v2") : NULL;
    CUdevice dev;
    CUcontext ctx;

    if (!init || !device_get || !retain || !set_current || !alloc || !mem_free ||
        init(0) != CUDA_SUCCESS || device_get(&dev, 0) != CUDA_SUCCESS ||
        retain(&ctx, dev) != CUDA_SUCCESS || set_current(ctx) != CUDA_SUCCESS) {
        if (rank == 0)
            printf("# no CUDA device: nothing measured\n");
        return 77;
    }
    if (rank == 0) {
        const char *m = getenv("TYPEJIT_METHOD");
        printf("# device ping-pong, TYPEJIT_METHOD=%s, median of %d round trips\n", m ? m : "auto",
               reps);
        printf("dims,bytes,run,method,roundtrip_us\n");
    }
    for (int dims = 2; dims <= 3; dims++) {
        for (int64_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
            for (int run = 1; run <= 512; run *= 8) {
                MPI_Datatype t;
                int64_t runs = bytes / run;
                if (runs < 1 || bytes % run)
                    continue;
                if (dims == 2) {
                    MPI_Type_vector((int)runs, run, 512, MPI_BYTE, &t);
                } else {
                    /* runs of `run` bytes in a cube-ish arrangement: rows x planes. */
                    int rows = 1;
                    while ((int64_t)rows * rows < runs)
                        rows *= 2;
                    int planes = (int)(runs / rows) > 0 ? (int)(runs / rows) : 1;
                    int sizes[3] = {planes, rows * 2, 1024};
                    int subs[3] = {planes, rows, run};
                    int starts[3] = {0, 1, 3};
                    if ((int64_t)planes * rows * run != bytes || run > 1024)
                        continue;
                    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_BYTE, &t);
                }
                MPI_Type_commit(&t);
                /* An allocation of the object's own span: a 3-D object of 1-byte runs spans
                 * 2048 times its bytes, a 2-D one 512 times. */
                MPI_Aint lb, extent;
                CUdeviceptr buf;
                MPI_Type_get_true_extent(t, &lb, &extent);
                if (alloc(&buf, (size_t)(lb + extent)) != CUDA_SUCCESS) {
                    fprintf(stderr, "bench_pingpong: cannot allocate %lld bytes of device memory\n",
                            (long long)(lb + extent));
                    MPI_Abort(MPI_COMM_WORLD, 1); /* the peer would wait for ever */
                }
                MPI_Barrier(MPI_COMM_WORLD);
                method_used();
                double s = pingpong((void *)(uintptr_t)buf, 1, t, reps);
                if (rank == 0)
                    printf("%d,%lld,%d,%s,%.2f\n", dims, (long long)bytes, run, method_used(),
                           s * 1e6);
                mem_free(buf);
                MPI_Type_free(&t);
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int nranks, reps = 20000, mode = 0, rc = 0;
    int64_t max_bytes = (int64_t)4 << 20;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--host") == 0) {
            mode = 1;
        } else if (strcmp(argv[i], "--coll") == 0) {
            mode = 4;
        } else if (strcmp(argv[i], "--calls") == 0) {
            mode = 3;
            reps = 10000000;
        } else if (strcmp(argv[i], "--device") == 0) {
            mode = 2;
            reps = 100;
        } else if (strcmp(argv[i], "--quick") == 0) {
            reps = reps > 1000 ? 2000 : 20;
            max_bytes = (int64_t)256 << 10;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            reps = 2;
            max_bytes = 16 << 10;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            mode = -1;
        }
    }
    if (mode <= 0 || (mode != 3 && nranks < 2) || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 bench_pingpong --host|--device|--coll "
                            "[--quick|--smoke] [--reps N], or bench_pingpong --calls [--reps N]\n");
        MPI_Finalize();
        return 2;
    }
    if (mode == 3) {
        /* Best of five passes: the least disturbed one. */
        char msg[8] = {0};
        double best = 1e30;
        for (int pass = 0; pass < 5; pass++) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                MPI_Send(msg, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
                MPI_Recv(msg, 8, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            double t = (MPI_Wtime() - t0) / (2.0 * reps);
            best = t < best ? t : best;
        }
        if (rank == 0)
            printf("calls,preloaded,ns_per_call\n%d,%s,%.2f\n", 2 * reps,
                   dlsym(RTLD_DEFAULT, "tj_version") ? "yes" : "no", best * 1e9);
    } else if (mode == 1) {
        char msg[8] = {0};
        double s = pingpong(msg, 8, MPI_BYTE, reps);
        if (rank == 0)
            printf("host_bytes,preloaded,roundtrip_us\n8,%s,%.4f\n",
                   dlsym(RTLD_DEFAULT, "tj_version") ? "yes" : "no", s * 1e6);
    } else if (mode == 4) {
        const char *pre = dlsym(RTLD_DEFAULT, "tj_version") ? "yes" : "no";
        double a = host_collective(true, reps, nranks), r = host_collective(false, reps, nranks);
        if (rank == 0)
            printf("collective,preloaded,us_per_call\nalltoall,%s,%.4f\nallreduce,%s,%.4f\n", pre,
                   a * 1e6, pre, r * 1e6);
    } else {
        rc = device_mode(reps, max_bytes);
    }
    MPI_Finalize();
    return rc;
}
