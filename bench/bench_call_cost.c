/* SPDX-License-Identifier: BSD-3-Clause */
/* What a steady device call costs typejit itself: each scenario runs its calls on device buffers
 * until the kernels are compiled and every buffer is warm, then runs them again between
 * CALLGRIND_START_INSTRUMENTATION and CALLGRIND_STOP_INSTRUMENTATION and dumps callgrind's counts
 * under the scenario's name (bench/run-call-cost.sh reads the dumps: bench/call_cost.py). Outside
 * valgrind the client requests do nothing and the program still checks its bytes and counts the
 * driver calls of the measured calls (on the CPU-only test driver, which counts them).
 *
 *   mpirun -np 2 -x LD_PRELOAD=libtypejit.so bench_call_cost [--iters N] [--warmup N] [--only S]
 *       [--time]
 *
 * One line per scenario and rank on stdout:
 *   call_cost scenario=S rank=R pid=P calls=N driver_calls=D waits=W [name=count ...]
 * calls: the measured calls (or sets of calls, e.g. one Startall + Waitall of 26 sends);
 * driver_calls: the driver entry points they called in all (-1 without the test driver); waits:
 * of those, the calls after which the host waited for device work. Scenarios (rank 0 / rank 1):
 *   pack        MPI_Pack of a vector(16, 4, 64, MPI_DOUBLE) face, device to device (both ranks)
 *   unpack      MPI_Unpack of the same, device to device (both ranks)
 *   isend       MPI_Isend + MPI_Wait of the face from device memory / MPI_Irecv + MPI_Wait into it
 *   isend_call  the same, the MPI_Wait of either rank not counted: the MPI_Isend / MPI_Irecv call
 *   irecv       the same with the roles swapped (rank 0 receives)
 *   sendrecv    MPI_Sendrecv of the face, device to device, both ranks
 *   startall    MPI_Startall + MPI_Waitall of 26 persistent sends of the faces, edges and corners
 *               of one device grid / 26 persistent receives into another
 *   neighbor    MPI_Neighbor_alltoallw of the 6 faces of a device grid on a periodic 2x1x1 grid
 *   host_contig MPI_Pack of 480 contiguous bytes in host memory (what typejit adds to a call it
 *               leaves to the system MPI, or packs with its CPU engine, as TYPEJIT_HOST says)
 *   host_face   MPI_Pack of the face in host memory
 *
 * With --time (outside valgrind), each host scenario's MPI_Pack is also timed against the system
 * MPI's PMPI_Pack of the same call, interleaved (31 rounds of 20000 calls each, medians):
 *   call_time scenario=S rank=R mpi_ns=T typejit_ns=T added_ns=T
 *
 * The device scenarios need a CUDA driver with a device (the test driver will do); without one
 * only the host ones run. */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(_s)
#define CALLGRIND_TOGGLE_COLLECT
#endif

static int rank, iters = 100, warmup = 100;
static bool timed;

static struct {
    __typeof__(&cuMemAlloc) alloc;
    __typeof__(&cuMemFree) free;
    __typeof__(&cuMemcpyHtoD) htod;
    __typeof__(&cuMemcpyDtoH) dtoh;
} cu;

/* The test driver's counters of driver calls, when it is the driver. */
static long long (*driver_stats)(const char *);

static void die(const char *what)
{
    fprintf(stderr, "bench_call_cost: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static bool open_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    __typeof__(&cuInit) init;
    __typeof__(&cuDeviceGet) device_get;
    __typeof__(&cuDevicePrimaryCtxRetain) retain;
    __typeof__(&cuCtxSetCurrent) set_current;
    CUdevice dev;
    CUcontext ctx;

    if (lib == NULL)
        return false;
    init = (__typeof__(init))dlsym(lib, "cuInit");
    device_get = (__typeof__(device_get))dlsym(lib, "cuDeviceGet");
    retain = (__typeof__(retain))dlsym(lib, "cuDevicePrimaryCtxRetain");
    set_current = (__typeof__(set_current))dlsym(lib, "cuCtxSetCurrent");
    cu.alloc = (__typeof__(cu.alloc))dlsym(lib, "cuMemAlloc_v2");
    cu.free = (__typeof__(cu.free))dlsym(lib, "cuMemFree_v2");
    cu.htod = (__typeof__(cu.htod))dlsym(lib, "cuMemcpyHtoD_v2");
    cu.dtoh = (__typeof__(cu.dtoh))dlsym(lib, "cuMemcpyDtoH_v2");
    driver_stats = (long long (*)(const char *))dlsym(lib, "fakecuda_stats");
    return init && device_get && retain && set_current && cu.alloc && cu.free && cu.htod &&
           cu.dtoh && init(0) == CUDA_SUCCESS && device_get(&dev, 0) == CUDA_SUCCESS &&
           retain(&ctx, dev) == CUDA_SUCCESS && set_current(ctx) == CUDA_SUCCESS;
}

/* Device memory of @p len bytes, filled with a pattern of @p seed. */
static void *dev_alloc(size_t len, unsigned seed)
{
    CUdeviceptr p;
    unsigned char *h = malloc(len);

    if (h == NULL || cu.alloc(&p, len) != CUDA_SUCCESS)
        die("cannot allocate device memory");
    for (size_t i = 0; i < len; i++)
        h[i] = (unsigned char)(i * 131 + seed);
    if (cu.htod(p, h, len) != CUDA_SUCCESS)
        die("cannot fill device memory");
    free(h);
    return (void *)(uintptr_t)p;
}

static void dev_get(void *dst, const void *dev, size_t len)
{
    if (cu.dtoh(dst, (CUdeviceptr)(uintptr_t)dev, len) != CUDA_SUCCESS)
        die("cannot read device memory");
}

/* The driver entry points whose calls each line lists, and the blocking ones among them. */
static const char *const named[] = {"cuPointerGetAttributes",
                                    "cuCtxGetCurrent",
                                    "cuCtxGetId",
                                    "cuCtxPushCurrent_v2",
                                    "cuCtxPopCurrent_v2",
                                    "cuLaunchKernel",
                                    "cuStreamSynchronize",
                                    "cuEventRecord",
                                    "cuEventQuery",
                                    "cuEventSynchronize",
                                    "cuMemHostGetDevicePointer_v2",
                                    "cuMemcpyDtoHAsync_v2",
                                    "cuMemcpyHtoDAsync_v2",
                                    "cuMemcpyDtoH_v2",
                                    "cuMemcpyHtoD_v2"};
#define NNAMED (sizeof(named) / sizeof(named[0]))

typedef struct {
    long long total, syncs, each[NNAMED];
} driver_count_t;

static driver_count_t driver_count(void)
{
    driver_count_t c = {-1, -1, {0}};
    char key[80];

    if (driver_stats == NULL)
        return c;
    c.total = driver_stats("calls:*");
    c.syncs = driver_stats("syncs");
    for (size_t i = 0; i < NNAMED; i++) {
        snprintf(key, sizeof(key), "calls:%s", named[i]);
        c.each[i] = driver_stats(key);
    }
    return c;
}

typedef void (*step_fn)(void *arg);

/* Run @p step warmup times, then iters times measured, and report. Both ranks run every
 * scenario in step with each other. */
static void measure(const char *name, step_fn step, void *arg)
{
    driver_count_t before, after;
    char line[1024];
    int at;

    for (int i = 0; i < warmup; i++)
        step(arg);
    MPI_Barrier(MPI_COMM_WORLD);
    before = driver_count();
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    for (int i = 0; i < iters; i++)
        step(arg);
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT(name);
    after = driver_count();
    at =
        snprintf(line, sizeof(line),
                 "call_cost scenario=%s rank=%d pid=%d calls=%d driver_calls=%lld waits=%lld", name,
                 rank, (int)getpid(), iters, before.total < 0 ? -1 : after.total - before.total,
                 before.syncs < 0 ? -1 : after.syncs - before.syncs);
    for (size_t i = 0; i < NNAMED && before.total >= 0; i++)
        if (after.each[i] > before.each[i] && at < (int)sizeof(line))
            at += snprintf(line + at, sizeof(line) - (size_t)at, " %s=%lld", named[i],
                           after.each[i] - before.each[i]);
    printf("%s\n", line);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the face: vector(16, 4, 64, MPI_DOUBLE), 512 packed bytes ------------------------------ */

typedef struct {
    MPI_Datatype type;
    void *grid, *other; /* device: the face's buffer and a second one */
    void *packed;       /* device: 512 bytes */
    size_t span;
    int peer;
} face_t;

static void pack_step(void *arg)
{
    face_t *f = arg;
    int pos = 0;
    MPI_Pack(f->grid, 1, f->type, f->packed, 512, &pos, MPI_COMM_WORLD);
}

static void unpack_step(void *arg)
{
    face_t *f = arg;
    int pos = 0;
    MPI_Unpack(f->packed, 512, &pos, f->other, 1, f->type, MPI_COMM_WORLD);
}

/* Rank `sender` Isends, the other Irecvs. */
static void isend_as(face_t *f, int sender)
{
    MPI_Request r;
    if (rank == sender)
        MPI_Isend(f->grid, 1, f->type, f->peer, 7, MPI_COMM_WORLD, &r);
    else
        MPI_Irecv(f->other, 1, f->type, f->peer, 7, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void isend_step(void *arg)
{
    isend_as(arg, 0);
}

static void isend_call_step(void *arg)
{
    face_t *f = arg;
    MPI_Request r;

    if (rank == 0)
        MPI_Isend(f->grid, 1, f->type, f->peer, 7, MPI_COMM_WORLD, &r);
    else
        MPI_Irecv(f->other, 1, f->type, f->peer, 7, MPI_COMM_WORLD, &r);
    CALLGRIND_TOGGLE_COLLECT;
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CALLGRIND_TOGGLE_COLLECT;
}

static void irecv_step(void *arg)
{
    isend_as(arg, 1);
}

static void sendrecv_step(void *arg)
{
    face_t *f = arg;
    MPI_Sendrecv(f->grid, 1, f->type, f->peer, 8, f->other, 1, f->type, f->peer, 8, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

/* ---- 26 faces, edges and corners of one grid: persistent sends --------------------------------
 */

#define N 16 /* interior points per side; the grid has a halo of 1 */
#define G (N + 2)

typedef struct {
    MPI_Datatype send[26], recv[26];
    MPI_Request req[26];
    void *grid, *ghost;
} halo_t;

/* The subarray of region (dx, dy, dz) of the interior (send) or of the halo (recv). */
static MPI_Datatype region(int dx, int dy, int dz, bool recv)
{
    int sizes[3] = {G, G, G}, subs[3], starts[3], d[3] = {dz, dy, dx};
    MPI_Datatype t;

    for (int k = 0; k < 3; k++) {
        subs[k] = d[k] == 0 ? N : 1;
        starts[k] = d[k] == 0 ? 1 : d[k] < 0 ? (recv ? 0 : 1) : (recv ? G - 1 : N);
    }
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static void halo_init(halo_t *h, int peer)
{
    size_t len = (size_t)G * G * G * sizeof(double);
    int k = 0;

    h->grid = dev_alloc(len, 3);
    h->ghost = dev_alloc(len, 5);
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if (dx == 0 && dy == 0 && dz == 0)
                    continue;
                h->send[k] = region(dx, dy, dz, false);
                h->recv[k] = region(-dx, -dy, -dz, true);
                if (rank == 0)
                    MPI_Send_init(h->grid, 1, h->send[k], peer, k, MPI_COMM_WORLD, &h->req[k]);
                else
                    MPI_Recv_init(h->ghost, 1, h->recv[k], peer, k, MPI_COMM_WORLD, &h->req[k]);
                k++;
            }
}

static void startall_step(void *arg)
{
    halo_t *h = arg;
    MPI_Startall(26, h->req);
    MPI_Waitall(26, h->req, MPI_STATUSES_IGNORE);
}

static void halo_free(halo_t *h)
{
    for (int k = 0; k < 26; k++) {
        MPI_Request_free(&h->req[k]);
        MPI_Type_free(&h->send[k]);
        MPI_Type_free(&h->recv[k]);
    }
    cu.free((CUdeviceptr)(uintptr_t)h->grid);
    cu.free((CUdeviceptr)(uintptr_t)h->ghost);
}

/* ---- Neighbor_alltoallw of the 6 faces on a periodic 2x1x1 grid of ranks -------------------- */

typedef struct {
    MPI_Comm cart;
    MPI_Datatype send[6], recv[6];
    int counts[6];
    MPI_Aint displs[6];
    void *grid, *ghost;
} neighbor_t;

static void neighbor_init(neighbor_t *nb)
{
    int dims[3] = {2, 1, 1}, periods[3] = {1, 1, 1};
    /* (dz, dy, dx) of each neighbour in MPI's order: the lower, then the upper one of dimension
     * 0 (z, the slowest in C order), then of 1 and 2. */
    static const int dirs[6][3] = {{-1, 0, 0}, {1, 0, 0},  {0, -1, 0},
                                   {0, 1, 0},  {0, 0, -1}, {0, 0, 1}};

    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &nb->cart);
    nb->grid = dev_alloc((size_t)G * G * G * sizeof(double), 9);
    nb->ghost = dev_alloc((size_t)G * G * G * sizeof(double), 11);
    for (int k = 0; k < 6; k++) {
        nb->send[k] = region(dirs[k][2], dirs[k][1], dirs[k][0], false);
        nb->recv[k] = region(dirs[k][2], dirs[k][1], dirs[k][0], true);
        nb->counts[k] = 1;
        nb->displs[k] = 0;
    }
}

static void neighbor_step(void *arg)
{
    neighbor_t *nb = arg;
    MPI_Neighbor_alltoallw(nb->grid, nb->counts, nb->displs, nb->send, nb->ghost, nb->counts,
                           nb->displs, nb->recv, nb->cart);
}

static void neighbor_free(neighbor_t *nb)
{
    for (int k = 0; k < 6; k++) {
        MPI_Type_free(&nb->send[k]);
        MPI_Type_free(&nb->recv[k]);
    }
    MPI_Comm_free(&nb->cart);
    cu.free((CUdeviceptr)(uintptr_t)nb->grid);
    cu.free((CUdeviceptr)(uintptr_t)nb->ghost);
}

/* ---- checks: the measured calls moved the right bytes -----------------------------------------
 */

/* The face of @p grid packed by the system MPI on a host copy: what MPI_Pack must give. */
static void check_face(face_t *f)
{
    unsigned char *host = malloc(f->span), *want = malloc(512), *got = malloc(512);
    int pos = 0;

    if (host == NULL || want == NULL || got == NULL)
        die("out of memory");
    dev_get(host, f->grid, f->span);
    PMPI_Pack(host, 1, f->type, want, 512, &pos, MPI_COMM_WORLD);
    dev_get(got, f->packed, 512);
    if (memcmp(want, got, 512) != 0)
        die("MPI_Pack on device memory gave other bytes than the system MPI on host memory");
    free(host);
    free(want);
    free(got);
}

/* ---- host buffers --------------------------------------------------------------------------- */

typedef struct {
    MPI_Datatype type;
    char *in, *out;
    int outsize;
} host_t;

static void host_step(void *arg)
{
    host_t *h = arg;
    int pos = 0;
    MPI_Pack(h->in, 1, h->type, h->out, h->outsize, &pos, MPI_COMM_WORLD);
}

static void host_scenario(const char *name, MPI_Datatype type, size_t span)
{
    host_t h = {type, calloc(span, 1), NULL, 0};
    MPI_Pack_size(1, type, MPI_COMM_WORLD, &h.outsize);
    h.out = calloc((size_t)h.outsize, 1);
    if (h.in == NULL || h.out == NULL)
        die("out of memory");
    measure(name, host_step, &h);
    if (timed) {
        enum { ROUNDS = 31, CALLS = 20000 };
        double mpi[ROUNDS], tj[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            double t0 = tj_clock_seconds();
            for (int i = 0; i < CALLS; i++) {
                int pos = 0;
                PMPI_Pack(h.in, 1, h.type, h.out, h.outsize, &pos, MPI_COMM_WORLD);
            }
            double t1 = tj_clock_seconds();
            for (int i = 0; i < CALLS; i++)
                host_step(&h);
            double t2 = tj_clock_seconds();
            mpi[r] = (t1 - t0) / CALLS * 1e9;
            tj[r] = (t2 - t1) / CALLS * 1e9;
        }
        double m = tj_median(mpi, ROUNDS), t = tj_median(tj, ROUNDS);
        printf("call_time scenario=%s rank=%d mpi_ns=%.1f typejit_ns=%.1f added_ns=%.1f\n", name,
               rank, m, t, t - m);
        fflush(stdout);
    }
    free(h.in);
    free(h.out);
}

static bool wanted(const char *only, const char *name)
{
    return only == NULL || strcmp(only, name) == 0;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int nranks;
    face_t f;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--time") == 0)
            timed = true;
        else {
            if (rank == 0)
                fprintf(stderr,
                        "usage: bench_call_cost [--iters N] [--warmup N] [--only S] [--time]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nranks != 2 || iters < 1 || warmup < 1) {
        if (rank == 0)
            fprintf(stderr, "bench_call_cost: needs 2 ranks, --iters and --warmup >= 1\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Type_vector(16, 4, 64, MPI_DOUBLE, &f.type);
    MPI_Type_commit(&f.type);
    f.span = (size_t)(15 * 64 + 4) * sizeof(double);
    if (wanted(only, "host_contig")) {
        MPI_Datatype c;
        MPI_Type_contiguous(480, MPI_BYTE, &c);
        MPI_Type_commit(&c);
        host_scenario("host_contig", c, 480);
        MPI_Type_free(&c);
    }
    if (wanted(only, "host_face"))
        host_scenario("host_face", f.type, f.span);
    if (!open_driver()) {
        if (rank == 0)
            printf("# no CUDA device: the device scenarios are not measured\n");
        MPI_Type_free(&f.type);
        MPI_Finalize();
        return 0;
    }
    f.grid = dev_alloc(f.span, 1);
    f.other = dev_alloc(f.span, 2);
    f.packed = dev_alloc(512, 4);
    f.peer = 1 - rank;

    if (wanted(only, "pack")) {
        measure("pack", pack_step, &f);
        check_face(&f);
    }
    if (wanted(only, "unpack"))
        measure("unpack", unpack_step, &f);
    if (wanted(only, "isend"))
        measure("isend", isend_step, &f);
    if (wanted(only, "isend_call"))
        measure("isend_call", isend_call_step, &f);
    if (wanted(only, "irecv"))
        measure("irecv", irecv_step, &f);
    if (wanted(only, "sendrecv"))
        measure("sendrecv", sendrecv_step, &f);
    if (wanted(only, "startall")) {
        halo_t h;
        halo_init(&h, f.peer);
        measure("startall", startall_step, &h);
        halo_free(&h);
    }
    if (wanted(only, "neighbor")) {
        neighbor_t nb;
        neighbor_init(&nb);
        measure("neighbor", neighbor_step, &nb);
        neighbor_free(&nb);
    }
    MPI_Type_free(&f.type);
    cu.free((CUdeviceptr)(uintptr_t)f.grid);
    cu.free((CUdeviceptr)(uintptr_t)f.other);
    cu.free((CUdeviceptr)(uintptr_t)f.packed);
    MPI_Finalize();
    return 0;
}
