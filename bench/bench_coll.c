/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on device-resident derived datatypes, per method, printed as CSV (rank 0):
 *
 *   mpirun -np N -x LD_PRELOAD=libtypejit.so bench_coll [--quick|--smoke] [--reps R]
 *
 * Each peer's slice is one 2-D object (a vector of 64-byte runs with a 512-byte pitch, the
 * halo face of the TEMPI paper's figure 11) of 1 KiB to 4 MiB. Collectives: Alltoallv,
 * Alltoallw, Neighbor_alltoallw (a ring as a distributed graph), Allgatherv, Gatherv,
 * Scatterv and Bcast. Methods:
 *   typejit  the datatype and the device buffers straight to the collective (typejit packs
 *            every peer's slice, runs the system MPI's collective on the packed bytes and
 *            unpacks);
 *   pack     what an application does by hand: MPI_Pack of each slice into page-locked host
 *            memory (typejit's kernels under the preload), the collective on MPI_PACKED bytes,
 *            MPI_Unpack; its pack / communicate / unpack split is reported as the paper does;
 *   host     the datatype on host buffers, packed by the system MPI: the CPU baseline.
 * Times are medians over R repetitions of the slowest rank's time. Without a CUDA device (or
 * without typejit preloaded) only the host method runs; on the CPU-only test driver it is a
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

enum { ALLTOALLV, ALLTOALLW, NEIGHBOR, ALLGATHERV, GATHERV, SCATTERV, BCAST, NCOLL };
static const char *const coll_names[NCOLL] = {
    "alltoallv", "alltoallw", "neighbor_alltoallw", "allgatherv", "gatherv", "scatterv", "bcast"};
enum { M_TYPEJIT, M_PACK, M_HOST, NMETHOD };
static const char *const method_names[NMETHOD] = {"typejit", "pack", "host"};

static int rank, nranks, slots; /* slots: peers' objects per buffer (a ring has 2) */
static MPI_Comm ring;

static struct {
    __typeof__(&cuInit) init;
    __typeof__(&cuDeviceGet) device_get;
    __typeof__(&cuDevicePrimaryCtxRetain) retain;
    __typeof__(&cuCtxSetCurrent) set_current;
    __typeof__(&cuMemAlloc) alloc;
    __typeof__(&cuMemFree) free;
    __typeof__(&cuMemHostAlloc) host_alloc;
    __typeof__(&cuMemFreeHost) host_free;
} cu;

static bool device_open(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CUdevice dev;
    CUcontext ctx;
    if (lib == NULL)
        return false;
    *(void **)&cu.init = dlsym(lib, "cuInit");
    *(void **)&cu.device_get = dlsym(lib, "cuDeviceGet");
    *(void **)&cu.retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.set_current = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&cu.alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&cu.free = dlsym(lib, "cuMemFree_v2");
    *(void **)&cu.host_alloc = dlsym(lib, "cuMemHostAlloc");
    *(void **)&cu.host_free = dlsym(lib, "cuMemFreeHost");
    return cu.init && cu.device_get && cu.retain && cu.set_current && cu.alloc && cu.free &&
           cu.host_alloc && cu.host_free && cu.init(0) == CUDA_SUCCESS &&
           cu.device_get(&dev, 0) == CUDA_SUCCESS && cu.retain(&ctx, dev) == CUDA_SUCCESS &&
           cu.set_current(ctx) == CUDA_SUCCESS;
}

/* One measured call: its buffers, type and the packed buffers of the pack method. */
typedef struct {
    int coll, method, root;
    char *sbuf, *rbuf;   /* typed, nranks objects each (ring: 2) */
    char *spack, *rpack; /* pinned, packed */
    MPI_Datatype type;
    int size; /* packed bytes of one object */
    MPI_Aint extent;
    int *counts, *displs, *bcounts, *bdispls;
    MPI_Aint *adispls;
    MPI_Datatype *types, *packed_types;
    double t_pack, t_comm, t_unpack;
} run_t;

/* The slices this rank sends and receives: object i of the buffer is peer i's. */
static int nsend(const run_t *r)
{
    switch (r->coll) {
    case NEIGHBOR:
        return 2;
    case ALLGATHERV:
    case GATHERV:
        return 1;
    case SCATTERV:
        return rank == r->root ? nranks : 0;
    case BCAST:
        return rank == r->root ? 1 : 0;
    default:
        return nranks;
    }
}

static int nrecv(const run_t *r)
{
    switch (r->coll) {
    case NEIGHBOR:
        return 2;
    case GATHERV:
        return rank == r->root ? nranks : 0;
    case SCATTERV:
        return 1;
    case BCAST:
        return rank == r->root ? 0 : 1;
    default:
        return nranks;
    }
}

/* The collective itself, on typed buffers (@p packed false) or packed bytes. */
static void collective(run_t *r, bool packed)
{
    char *sb = packed ? r->spack : r->sbuf, *rb = packed ? r->rpack : r->rbuf;
    MPI_Datatype t = packed ? MPI_PACKED : r->type;
    const int *c = packed ? r->bcounts : r->counts, *d = packed ? r->bdispls : r->displs;
    int one = packed ? r->size : 1;
    switch (r->coll) {
    case ALLTOALLV:
        MPI_Alltoallv(sb, c, d, t, rb, c, d, t, MPI_COMM_WORLD);
        break;
    case ALLTOALLW:
        /* Byte displacements: object i of each buffer. */
        MPI_Alltoallw(sb, c, packed ? r->bdispls : r->bdispls + slots,
                      packed ? r->packed_types : r->types, rb, c,
                      packed ? r->bdispls : r->bdispls + slots, packed ? r->packed_types : r->types,
                      MPI_COMM_WORLD);
        break;
    case NEIGHBOR: {
        MPI_Aint ad[2] = {0, packed ? r->size : r->extent};
        MPI_Datatype ts[2] = {t, t};
        int cs[2] = {one, one};
        MPI_Neighbor_alltoallw(sb, cs, ad, ts, rb, cs, ad, ts, ring);
        break;
    }
    case ALLGATHERV:
        MPI_Allgatherv(sb, one, t, rb, c, d, t, MPI_COMM_WORLD);
        break;
    case GATHERV:
        MPI_Gatherv(sb, one, t, rb, c, d, t, r->root, MPI_COMM_WORLD);
        break;
    case SCATTERV:
        MPI_Scatterv(sb, c, d, t, rb, one, t, r->root, MPI_COMM_WORLD);
        break;
    default:
        MPI_Bcast(rank == r->root ? sb : rb, one, t, r->root, MPI_COMM_WORLD);
        break;
    }
}

/* One repetition; the pack method's phases are timed apart. */
static void once(run_t *r)
{
    double t0 = MPI_Wtime(), t1, t2;
    if (r->method != M_PACK) {
        collective(r, false);
        r->t_comm = MPI_Wtime() - t0;
        r->t_pack = r->t_unpack = 0;
        return;
    }
    int pos = 0, total = r->size * slots;
    for (int i = 0; i < nsend(r); i++)
        MPI_Pack(r->sbuf + i * r->extent, 1, r->type, r->spack, total, &pos, MPI_COMM_WORLD);
    t1 = MPI_Wtime();
    collective(r, true);
    t2 = MPI_Wtime();
    pos = 0;
    for (int i = 0; i < nrecv(r); i++)
        MPI_Unpack(r->rpack, total, &pos, r->rbuf + i * r->extent, 1, r->type, MPI_COMM_WORLD);
    r->t_pack = t1 - t0;
    r->t_comm = t2 - t1;
    r->t_unpack = MPI_Wtime() - t2;
}

int main(int argc, char **argv)
{
    int reps = 50;
    int64_t max_bytes = (int64_t)4 << 20, min_bytes = 1024;
    bool device, preloaded;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            reps = 10;
            max_bytes = (int64_t)256 << 10;
        } else if (strcmp(argv[i], "--smoke") == 0) {
            reps = 2;
            max_bytes = 16 << 10;
            min_bytes = 16 << 10;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: mpirun -np N bench_coll [--quick|--smoke] [--reps R]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    int ok = device_open(), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    device = all;
    preloaded = dlsym(RTLD_DEFAULT, "tj_version") != NULL;
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    int srcs[2] = {prev, next}, dsts[2] = {next, prev}, w[2] = {1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, w, 2, dsts, w, MPI_INFO_NULL, 0, &ring);
    if (rank == 0) {
        printf("# collectives on 2-D objects (64-byte runs, 512-byte pitch), %d ranks, median of "
               "%d, device=%s, typejit=%s\n",
               nranks, reps, device ? "yes" : "no", preloaded ? "yes" : "no");
        printf("coll,method,ranks,bytes_per_peer,total_us,pack_us,comm_us,unpack_us\n");
    }

    slots = nranks > 2 ? nranks : 2;
    double *samples = malloc((size_t)reps * 4 * sizeof(double));
    run_t r = {0};
    r.counts = malloc((size_t)slots * sizeof(int));
    r.displs = malloc((size_t)slots * sizeof(int));
    r.bcounts = malloc((size_t)slots * sizeof(int));
    r.bdispls = malloc((size_t)slots * 2 * sizeof(int));
    r.types = malloc((size_t)slots * sizeof(MPI_Datatype));
    r.packed_types = malloc((size_t)slots * sizeof(MPI_Datatype));
    if (!samples || !r.counts || !r.displs || !r.bcounts || !r.bdispls || !r.types ||
        !r.packed_types)
        MPI_Abort(MPI_COMM_WORLD, 1);

    for (int64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 16) {
        int runs = (int)(bytes / 64);
        MPI_Datatype v;
        MPI_Type_vector(runs, 64, 512, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)runs * 512, &r.type);
        MPI_Type_free(&v);
        MPI_Type_commit(&r.type);
        MPI_Type_size(r.type, &r.size);
        r.extent = (MPI_Aint)runs * 512;
        if ((int64_t)slots * r.extent > INT32_MAX)
            break;
        for (int i = 0; i < slots; i++) {
            r.counts[i] = 1;
            r.displs[i] = i;
            r.bcounts[i] = r.size;
            r.bdispls[i] = i * r.size;
            r.bdispls[slots + i] = (int)(i * r.extent);
            r.types[i] = r.type;
            r.packed_types[i] = MPI_PACKED;
        }
        size_t span = (size_t)slots * (size_t)r.extent, plen = (size_t)slots * (size_t)r.size;
        for (int m = 0; m < NMETHOD; m++) {
            bool on_device = m != M_HOST;
            CUdeviceptr ds = 0, dr = 0;
            if (on_device && (!device || !preloaded))
                continue;
            if (on_device) {
                if (cu.alloc(&ds, span) != CUDA_SUCCESS || cu.alloc(&dr, span) != CUDA_SUCCESS) {
                    fprintf(stderr, "bench_coll: cannot allocate %zu bytes of device memory\n",
                            span);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                r.sbuf = (char *)(uintptr_t)ds;
                r.rbuf = (char *)(uintptr_t)dr;
            } else {
                r.sbuf = calloc(1, span);
                r.rbuf = calloc(1, span);
            }
            if (m == M_PACK) {
                void *a, *b;
                if (cu.host_alloc(&a, plen, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
                        CUDA_SUCCESS ||
                    cu.host_alloc(&b, plen, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
                        CUDA_SUCCESS)
                    MPI_Abort(MPI_COMM_WORLD, 1);
                r.spack = a;
                r.rpack = b;
            }
            for (int c = 0; c < NCOLL; c++) {
                r.coll = c;
                r.method = m;
                r.root = 0;
                double tot[4] = {0};
                for (int k = -1; k < reps; k++) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    double t0 = MPI_Wtime();
                    once(&r);
                    double mine[4] = {MPI_Wtime() - t0, r.t_pack, r.t_comm, r.t_unpack}, worst[4];
                    MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                    if (k >= 0)
                        memcpy(&samples[4 * k], worst, sizeof(worst));
                }
                for (int q = 0; q < 4; q++) {
                    double *col = malloc((size_t)reps * sizeof(double));
                    for (int k = 0; k < reps; k++)
                        col[k] = samples[4 * k + q];
                    tot[q] = tj_median(col, reps) * 1e6;
                    free(col);
                }
                if (rank == 0) {
                    if (m == M_PACK)
                        printf("%s,%s,%d,%lld,%.2f,%.2f,%.2f,%.2f\n", coll_names[c],
                               method_names[m], nranks, (long long)r.size, tot[0], tot[1], tot[2],
                               tot[3]);
                    else
                        printf("%s,%s,%d,%lld,%.2f,,,\n", coll_names[c], method_names[m], nranks,
                               (long long)r.size, tot[0]);
                }
            }
            if (on_device) {
                cu.free(ds);
                cu.free(dr);
            } else {
                free(r.sbuf);
                free(r.rbuf);
            }
            if (m == M_PACK) {
                cu.host_free(r.spack);
                cu.host_free(r.rpack);
            }
        }
        MPI_Type_free(&r.type);
    }
    free(samples);
    free(r.counts);
    free(r.displs);
    free(r.bcounts);
    free(r.bdispls);
    free(r.types);
    free(r.packed_types);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
