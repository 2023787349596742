/* The main job: a 3-D halo exchange (TEMPI, section 6.4). Each rank owns an N^3 block of doubles
 * with a ghost shell of radius R and exchanges all 26 faces, edges and corners with its
 * neighbours in a periodic process grid: every region is an MPI derived datatype (subarray for
 * half of the directions, vector of vectors for the others), packed with MPI_Pack into one buffer
 * grouped by destination, exchanged with MPI_Alltoallv and unpacked with MPI_Unpack. Each ghost
 * cell is then checked against the value its owner holds, and rank 0 prints what typejit made of
 * each datatype.
 *
 * With --device the grid lives in GPU memory (the CUDA driver is opened with dlopen, so the host
 * mode needs none) and the packed buffers in page-locked mapped host memory: MPI_Pack and
 * MPI_Unpack run typejit's kernels between the two, and the system MPI, CUDA-aware or not, moves
 * host memory. The check copies the grid back to the host.
 *
 *   halo3d [--n N] [--radius R] [--iters K] [--host | --device] [--quiet]
 */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*describe_fn)(const void *, char *, size_t);

static int n = 32, radius = 2, iters = 10, quiet = 0, device = 0;

static const char usage[] =
    "usage: halo3d [--n N] [--radius R] [--iters K] [--host | --device] [--quiet]\n"
    "  --n N       points per side per rank (default 32)\n"
    "  --radius R  ghost-shell radius, 1 <= R <= N (default 2)\n"
    "  --iters K   exchanges, K >= 1 (default 10)\n"
    "  --host      grid in host memory (default)\n"
    "  --device    grid in GPU memory, packed buffers in page-locked host memory\n"
    "  --quiet     print only the PASS/FAIL line\n";

/* The few driver calls the device mode makes, as an application would. */
static struct {
    __typeof__(&cuInit) init;
    __typeof__(&cuDeviceGetCount) device_count;
    __typeof__(&cuDeviceGet) device_get;
    __typeof__(&cuDevicePrimaryCtxRetain) retain;
    __typeof__(&cuCtxSetCurrent) set_current;
    __typeof__(&cuMemAlloc) alloc;
    __typeof__(&cuMemFree) free;
    __typeof__(&cuMemHostAlloc) host_alloc;
    __typeof__(&cuMemFreeHost) host_free;
    __typeof__(&cuMemcpyHtoD) htod;
    __typeof__(&cuMemcpyDtoH) dtoh;
} cu;

static void die(const char *what)
{
    fprintf(stderr, "halo3d: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void cu_ok(CUresult rc, const char *call)
{
    char text[128];
    if (rc == CUDA_SUCCESS)
        return;
    snprintf(text, sizeof(text), "%s failed (CUDA error %d)", call, (int)rc);
    die(text);
}

/* Open the driver and make device (local rank mod devices) current. */
static void device_open(MPI_Comm world)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    MPI_Comm node;
    CUdevice dev;
    CUcontext ctx;
    int local, ndev = 0;

    if (lib == NULL)
        die("--device needs the CUDA driver (libcuda.so.1)");
    *(void **)&cu.init = dlsym(lib, "cuInit");
    *(void **)&cu.device_count = dlsym(lib, "cuDeviceGetCount");
    *(void **)&cu.device_get = dlsym(lib, "cuDeviceGet");
    *(void **)&cu.retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.set_current = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&cu.alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&cu.free = dlsym(lib, "cuMemFree_v2");
    *(void **)&cu.host_alloc = dlsym(lib, "cuMemHostAlloc");
    *(void **)&cu.host_free = dlsym(lib, "cuMemFreeHost");
    *(void **)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **)&cu.dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    if (!cu.init || !cu.device_count || !cu.device_get || !cu.retain || !cu.set_current ||
        !cu.alloc || !cu.free || !cu.host_alloc || !cu.host_free || !cu.htod || !cu.dtoh)
        die("the CUDA driver lacks a function --device needs");
    cu_ok(cu.init(0), "cuInit");
    cu_ok(cu.device_count(&ndev), "cuDeviceGetCount");
    if (ndev < 1)
        die("--device needs a CUDA device");
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    cu_ok(cu.device_get(&dev, local % ndev), "cuDeviceGet");
    cu_ok(cu.retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    cu_ok(cu.set_current(ctx), "cuCtxSetCurrent");
}

/* Page-locked host memory the device can write (the packed buffers of the device mode). */
static void *pinned(size_t len)
{
    void *p;
    cu_ok(cu.host_alloc(&p, len ? len : 1, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
          "cuMemHostAlloc");
    return p;
}

/* A positive int option value, or the usage. */
static int int_arg(const char *opt, const char *text, int min)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > 1 << 20) {
        fprintf(stderr, "halo3d: %s needs an integer >= %d, not \"%s\"\n%s", opt, min, text,
                usage);
        exit(2);
    }
    return (int)v;
}

/* Index of a cell in the padded local array, coordinates from -radius to n + radius - 1. */
static size_t at(int x, int y, int z)
{
    size_t p = (size_t)(n + 2 * radius);
    return ((size_t)(z + radius) * p + (size_t)(y + radius)) * p + (size_t)(x + radius);
}

/* The value a cell holds: a function of its global coordinates, so any rank can check it. */
static double value(int gx, int gy, int gz)
{
    return gx + 1000.0 * gy + 1000000.0 * gz;
}

/* One axis of a region, for the direction component d in -1..1: the cells sent (interior, next
 * to that side) or received (ghost cells on that side). */
static void region(int d, int send, int *start, int *size)
{
    if (d == 0) {
        *start = 0;
        *size = n;
    } else if (d < 0) {
        *start = send ? 0 : -radius;
        *size = radius;
    } else {
        *start = send ? n - radius : n;
        *size = radius;
    }
}

/* A box of the padded array as a datatype: subarray, or the same layout as an hvector of
 * vectors, so that both constructions meet typejit. */
static MPI_Datatype box_type(const int start[3], const int size[3], int as_subarray)
{
    int p = n + 2 * radius;
    MPI_Datatype t, row, plane;
    if (as_subarray) {
        int sizes[3] = {p, p, p};
        int subs[3] = {size[2], size[1], size[0]};
        int starts[3] = {start[2] + radius, start[1] + radius, start[0] + radius};
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    } else {
        /* x runs of size[0] doubles, size[1] of them p apart, size[2] planes p*p apart; the
         * displacement of the box origin comes from a struct with one member. */
        MPI_Aint disp = (MPI_Aint)(at(start[0], start[1], start[2]) * sizeof(double));
        int one = 1;
        MPI_Datatype moved;
        MPI_Type_vector(size[1], size[0], p, MPI_DOUBLE, &row);
        MPI_Type_create_hvector(size[2], 1, (MPI_Aint)p * p * (MPI_Aint)sizeof(double), row,
                                &plane);
        MPI_Type_create_struct(1, &one, &disp, &plane, &moved);
        /* The extent of the whole padded array, as for the subarray. */
        MPI_Type_create_resized(moved, 0, (MPI_Aint)p * p * p * (MPI_Aint)sizeof(double), &t);
        MPI_Type_free(&row);
        MPI_Type_free(&plane);
        MPI_Type_free(&moved);
    }
    MPI_Type_commit(&t);
    return t;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, nranks, dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3];
    MPI_Comm cart;
    MPI_Datatype send_t[27], recv_t[27];
    int nbr[27], dsize[27];
    long bad = 0;
    double t_pack = 0, t_unpack = 0, t_exch = 0;

    /* Arguments first: a usage error or --help must not need MPI. */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--n") == 0 && v) {
            n = int_arg("--n", argv[++i], 1);
        } else if (strcmp(argv[i], "--radius") == 0 && v) {
            radius = int_arg("--radius", argv[++i], 1);
        } else if (strcmp(argv[i], "--iters") == 0 && v) {
            iters = int_arg("--iters", argv[++i], 1);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--device") == 0) {
            device = 1;
        } else if (strcmp(argv[i], "--host") == 0) {
            device = 0;
        } else {
            fprintf(stderr, "halo3d: unknown or incomplete argument \"%s\"\n%s", argv[i], usage);
            return 2;
        }
    }
    if (n < radius) {
        fprintf(stderr, "halo3d: need radius <= n\n%s", usage);
        return 2;
    }
    MPI_Init(&argc, &argv);
    if (device)
        device_open(MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Dims_create(nranks, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 3, coords);

    /* Directions 0..26 as (dx, dy, dz) = (d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1); 13 is the
     * centre and is skipped. */
    for (int d = 0; d < 27; d++) {
        int dx = d % 3 - 1, dy = d / 3 % 3 - 1, dz = d / 9 - 1, c[3];
        if (d == 13)
            continue;
        for (int a = 0; a < 3; a++) {
            int off = a == 0 ? dx : a == 1 ? dy : dz;
            c[a] = ((coords[a] + off) % dims[a] + dims[a]) % dims[a];
        }
        MPI_Cart_rank(cart, c, &nbr[d]);
        int ss[3], sz[3], rs[3], rz[3], comp[3] = {dx, dy, dz};
        for (int a = 0; a < 3; a++) {
            region(comp[a], 1, &ss[a], &sz[a]);
            region(comp[a], 0, &rs[a], &rz[a]);
        }
        send_t[d] = box_type(ss, sz, d % 2 == 0);
        recv_t[d] = box_type(rs, rz, d % 2 == 1);
        MPI_Type_size(send_t[d], &dsize[d]);
    }

    size_t cells = at(n + radius - 1, n + radius - 1, n + radius - 1) + 1;
    double *grid = malloc(cells * sizeof(double));
    /* What MPI_Pack and MPI_Unpack see: the host grid, or its copy in device memory. */
    void *field = grid;
    CUdeviceptr dgrid = 0;
    int *scount = calloc((size_t)nranks, sizeof(int)),
        *sdispl = calloc((size_t)nranks, sizeof(int));
    int *rcount = calloc((size_t)nranks, sizeof(int)),
        *rdispl = calloc((size_t)nranks, sizeof(int));
    size_t total = 0;
    for (int d = 0; d < 27; d++)
        if (d != 13)
            total += (size_t)dsize[d];
    char *sbuf = device ? pinned(total) : malloc(total);
    char *rbuf = device ? pinned(total) : malloc(total);
    if (!grid || !scount || !sdispl || !rcount || !rdispl || !sbuf || !rbuf)
        die("out of memory");
    if (device) {
        cu_ok(cu.alloc(&dgrid, cells * sizeof(double)), "cuMemAlloc");
        field = (void *)(uintptr_t)dgrid;
    }

    for (int it = 0; it < iters; it++) {
        /* Interior from the global coordinates, ghosts poisoned. */
        for (int z = -radius; z < n + radius; z++)
            for (int y = -radius; y < n + radius; y++)
                for (int x = -radius; x < n + radius; x++) {
                    int inside = x >= 0 && x < n && y >= 0 && y < n && z >= 0 && z < n;
                    grid[at(x, y, z)] =
                        inside ? value(coords[0] * n + x, coords[1] * n + y, coords[2] * n + z)
                               : -1.0;
                }
        if (device)
            cu_ok(cu.htod(dgrid, grid, cells * sizeof(double)), "cuMemcpyHtoD");

        /* Pack grouped by destination, directions in ascending order within each group. */
        double t0 = now();
        int pos = 0;
        for (int r = 0; r < nranks; r++) {
            sdispl[r] = pos;
            for (int d = 0; d < 27; d++)
                if (d != 13 && nbr[d] == r)
                    MPI_Pack(field, 1, send_t[d], sbuf, (int)total, &pos, cart);
            scount[r] = pos - sdispl[r];
        }
        double t1 = now();
        /* What arrives from rank s: the directions d it sent to us, whose ghosts lie on our
         * opposite side (26 - d). */
        int rpos = 0;
        for (int s = 0; s < nranks; s++) {
            rdispl[s] = rpos;
            for (int d = 0; d < 27; d++)
                if (d != 13 && nbr[26 - d] == s)
                    rpos += dsize[d];
            rcount[s] = rpos - rdispl[s];
        }
        MPI_Alltoallv(sbuf, scount, sdispl, MPI_PACKED, rbuf, rcount, rdispl, MPI_PACKED, cart);
        double t2 = now();
        for (int s = 0; s < nranks; s++) {
            int p = rdispl[s];
            for (int d = 0; d < 27; d++)
                if (d != 13 && nbr[26 - d] == s)
                    MPI_Unpack(rbuf, (int)total, &p, field, 1, recv_t[26 - d], cart);
        }
        double t3 = now();
        t_pack += t1 - t0;
        t_exch += t2 - t1;
        t_unpack += t3 - t2;
        if (device)
            cu_ok(cu.dtoh(grid, dgrid, cells * sizeof(double)), "cuMemcpyDtoH");

        /* Every ghost cell holds its owner's value (periodic wrap of the global grid). */
        int gn[3] = {dims[0] * n, dims[1] * n, dims[2] * n};
        for (int z = -radius; z < n + radius; z++)
            for (int y = -radius; y < n + radius; y++)
                for (int x = -radius; x < n + radius; x++) {
                    int g[3] = {coords[0] * n + x, coords[1] * n + y, coords[2] * n + z};
                    for (int a = 0; a < 3; a++)
                        g[a] = (g[a] % gn[a] + gn[a]) % gn[a];
                    if (grid[at(x, y, z)] != value(g[0], g[1], g[2]))
                        bad++;
                }
    }

    long all_bad = 0;
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, cart);
    if (rank == 0 && !quiet) {
        describe_fn describe = (describe_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
        printf("halo3d: %d ranks in a %dx%dx%d grid, %d^3 doubles each, radius %d, %d iterations, "
               "grid in %s memory\n",
               nranks, dims[0], dims[1], dims[2], n, radius, iters, device ? "device" : "host");
        if (describe == NULL)
            printf("typejit is not loaded: every datatype is handled by the system MPI\n");
        for (int d = 0; d < 27 && describe != NULL; d++) {
            char text[512];
            if (d == 13)
                continue;
            describe(&send_t[d], text, sizeof(text));
            printf("  send (%+d,%+d,%+d) %-8s %6d B: %s\n", d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1,
                   d % 2 == 0 ? "subarray" : "vector", dsize[d], text);
        }
        printf("per iteration: pack %.1f us, alltoallv %.1f us, unpack %.1f us\n",
               1e6 * t_pack / iters, 1e6 * t_exch / iters, 1e6 * t_unpack / iters);
    }
    if (rank == 0)
        printf("%s: %ld wrong ghost cells\n", all_bad == 0 ? "PASS" : "FAIL", all_bad);
    for (int d = 0; d < 27; d++)
        if (d != 13) {
            MPI_Type_free(&send_t[d]);
            MPI_Type_free(&recv_t[d]);
        }
    free(grid);
    if (device) {
        cu.free(dgrid);
        cu.host_free(sbuf);
        cu.host_free(rbuf);
    } else {
        free(sbuf);
        free(rbuf);
    }
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return all_bad == 0 || rank != 0 ? 0 : 1;
}
