/* SPDX-License-Identifier: BSD-3-Clause */
/* The main job: a 3-D halo exchange (TEMPI, section 6.4). Each rank owns an N^3 block of grid
 * points, Q doubles each (8 by default, as in the paper), with a ghost shell of radius R (3 by
 * default) and exchanges all 26 faces, edges and corners with its neighbours in a periodic
 * process grid: every region is an MPI derived datatype (subarray for half of the directions,
 * vector of vectors for the others). Each ghost cell is then checked against the value its owner
 * holds, and rank 0 prints what typejit made of each datatype and the time per iteration.
 *
 * How the halos move (--collective):
 *   pack       MPI_Pack into one buffer grouped by destination, MPI_Alltoallv of the packed
 *              bytes, MPI_Unpack (the default; pack, exchange and unpack are timed apart);
 *   alltoallv  the derived datatypes straight to MPI_Alltoallw, one type per peer: as many
 *              rounds as the most directions any one peer rank takes (one on 27 or more ranks);
 *   neighbor   MPI_Neighbor_alltoallw on a distributed graph of the 26 neighbours, one slot
 *              and one datatype per direction;
 *   isend      MPI_Irecv and MPI_Isend of each region's datatype, then MPI_Waitall; with
 *              --overlap US the host computes for US microseconds between posting them and
 *              the MPI_Waitall (a busy loop, no MPI call), as a halo code computes its interior,
 *              and rank 0 prints per step the host time inside the MPI calls (posting and
 *              MPI_Waitall apart), and typejit's waits for the device and the time they took
 *              (gpu_waits, gpu_wait_us; queue_wait_us for the packs of queued sends): the
 *              device work the compute did not hide.
 * In the last three the packing happens inside the MPI calls (typejit's, when preloaded), so
 * only the whole exchange is timed.
 *
 * With --offset-faces every region's datatype is the box at the array's origin and the calls
 * take the region where it lies: the buffer d + offset (the byte offset of the region's first
 * point) in MPI_Pack, MPI_Unpack, MPI_Isend and MPI_Irecv, and the displacement in the
 * collectives, as hand-written halo codes do; with an odd Q half of those offsets are 8 bytes
 * off a 16-byte boundary.
 *
 * --describe prints the datatypes of the regions (and the fused sets of the neighbor mode) as
 * type descriptions for `typejit warm`, and exits without MPI: warming them leaves nothing for
 * the pack, neighbor and isend modes to compile.
 *
 * With --device the grid lives in GPU memory (the CUDA driver is opened with dlopen, so the host
 * mode needs none); the packed buffers of the pack mode are in page-locked mapped host memory:
 * MPI_Pack and MPI_Unpack run typejit's kernels between the two, and the system MPI, CUDA-aware
 * or not, moves host memory. The check copies the grid back to the host. --alloc chooses how the
 * grids are allocated, as the programs typejit is for allocate: cuMemAlloc (the default), the
 * stream-ordered allocator (pool memory, which has no context), a VMM mapping of device memory or
 * of host memory the CPU may not touch, managed memory, the memory of another device than the
 * rank's own (current) one, or pitched memory whose rows of x points are padded (cuMemAllocPitch,
 * cudaMalloc3D: the datatypes then describe the padded rows, the grid moves with 2-D or 3-D
 * copies, and the padding, poisoned at the start, must be untouched at the end). Built with
 * HALO3D_CUDART (build/tests/halo3d_cudart) the device mode uses the CUDA runtime API instead of
 * the driver, as most GPU programs do: cudaSetDevice, cudaMalloc, cudaMallocAsync,
 * cudaMallocManaged or cudaMalloc3D, cudaMemcpy or cudaMemcpy3D.
 *
 * With --tolerate-errors the MPI calls return their errors, which are counted: a call that fails
 * before it is matched (MPI_Pack, MPI_Unpack, MPI_Isend, MPI_Irecv) is made again at once, and a
 * collective or MPI_Waitall that fails makes every rank redo the iteration's exchange; the ghost
 * cells are checked after each exchange that succeeded on every rank. For runs with injected
 * driver failures (tests/fakecuda's FAKECUDA_FAIL): the run must go on, exactly.
 *
 *   halo3d [--n N] [--radius R] [--per-point Q] [--iters K] [--host | --device [--alloc KIND]]
 *          [--collective pack|alltoallv|neighbor|isend [--overlap US]] [--offset-faces]
 *          [--tolerate-errors] [--quiet] [--describe]
 */
#include <cuda.h>
#ifdef HALO3D_CUDART
#include <cuda_runtime_api.h>
#endif
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

typedef int (*describe_fn)(const void *, char *, size_t);

static int n = 32, radius = 3, q = 8, iters = 10, quiet = 0, device = 0, tolerate = 0;
static int describe_only = 0, offset_faces = 0;
static int overlap_us = -1; /* --overlap: host compute between posting and MPI_Waitall */
static long errors; /* MPI errors met and recovered from (--tolerate-errors) */

typedef enum { EX_PACK, EX_ALLTOALLV, EX_NEIGHBOR, EX_ISEND } exchange_t;
static exchange_t mode = EX_PACK;
static const char *const mode_names[] = {"pack", "alltoallv", "neighbor", "isend"};

static const char usage[] =
    "usage: halo3d [--n N] [--radius R] [--per-point Q] [--iters K]\n"
    "              [--host | --device [--alloc KIND]]\n"
    "              [--collective pack|alltoallv|neighbor|isend [--overlap US]]\n"
    "              [--offset-faces]\n"
    "              [--tolerate-errors] [--quiet] [--describe]\n"
    "  --n N          points per side per rank (default 32)\n"
    "  --radius R     ghost-shell radius, 1 <= R <= N (default 3)\n"
    "  --per-point Q  doubles per grid point (default 8)\n"
    "  --iters K      exchanges, K >= 1 (default 10)\n"
    "  --host         grid in host memory (default)\n"
    "  --device       grid in GPU memory, packed buffers in page-locked host memory\n"
    "  --alloc KIND   with --device, how the grids are allocated: device (cuMemAlloc,\n"
    "                 default), pool (stream-ordered), vmm (cuMemCreate + cuMemMap), vmm_host\n"
    "                 (host memory mapped for the device only), managed, other (the next\n"
    "                 device's memory while the rank's own device is current), pitched\n"
    "                 (cuMemAllocPitch or cudaMalloc3D: padded rows)\n"
    "  --collective   how halos move: pack (MPI_Pack + MPI_Alltoallv + MPI_Unpack, default),\n"
    "                 alltoallv (datatypes to MPI_Alltoallw), neighbor (datatypes to\n"
    "                 MPI_Neighbor_alltoallw on a graph of the 26 neighbours), isend\n"
    "                 (MPI_Isend/MPI_Irecv of each region)\n"
    "  --overlap US   with isend: compute on the host for US microseconds between posting the\n"
    "                 exchange and its MPI_Waitall, and print the time inside MPI calls and\n"
    "                 typejit's device waits per step\n"
    "  --offset-faces every region's datatype at the origin, the calls at d + offset (the\n"
    "                 region's first point) or at that displacement\n"
    "  --tolerate-errors  count MPI errors and redo what failed (for fault injection)\n"
    "  --quiet        print only the PASS/FAIL line\n"
    "  --describe     print the regions' datatypes, and the fused sets of the neighbor mode, as\n"
    "                 type descriptions for `typejit warm`, and exit (no MPI needed)\n";

/* Busy host work for @p us microseconds, with no MPI call: what --overlap hides the exchange
 * behind. */
static void compute(int us)
{
    double until = tj_clock_seconds() + us * 1e-6;
    volatile double x = 1.0;
    while (tj_clock_seconds() < until)
        for (int i = 0; i < 64; i++)
            x = x * 1.0000001 + 1e-9;
}

/* Counter @p key of the preloaded library (its stats line, tj_stats_format); 0 without it. */
static long counter(const char *key)
{
    int (*fmt)(char *, size_t) =
        (int (*)(char *, size_t))(uintptr_t)dlsym(RTLD_DEFAULT, "tj_stats_format");
    char text[4096] = " ", pat[64];
    const char *at;

    if (fmt == NULL)
        return 0;
    fmt(text + 1, sizeof(text) - 1);
    snprintf(pat, sizeof(pat), " %s=", key);
    at = strstr(text, pat);
    return at != NULL ? atol(at + strlen(pat)) : 0;
}

static void die(const char *what)
{
    fprintf(stderr, "halo3d: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The few device calls the device mode makes, as an application would: device_open, dev_alloc,
 * dev_free, pinned, pinned_free, to_device, to_host, and for --alloc pitched pitched_alloc,
 * pitched_to_device, pitched_to_host. --alloc chooses how dev_alloc allocates the grids (the
 * stream-ordered allocator on the legacy stream, so the copies that follow are ordered after the
 * allocation). */
typedef enum {
    A_DEVICE,
    A_POOL,
    A_VMM,
    A_VMM_HOST,
    A_MANAGED,
    A_OTHER,
    A_PITCHED,
    A_KINDS
} alloc_t;
static const char *const alloc_names[A_KINDS] = {"device",  "pool",  "vmm",    "vmm_host",
                                                 "managed", "other", "pitched"};
static alloc_t alloc_kind = A_DEVICE;
static int own_device, other_device; /* the rank's device, and the next one (--alloc other) */

/* A grid of --alloc pitched: @p slices slices of @p rows rows of @p width bytes each, a row every
 * *pitch bytes (set by the allocation). */
static void *pitched_alloc(size_t width, size_t rows, size_t slices, size_t *pitch);
static void pitched_to_device(void *dst, size_t pitch, const void *src, size_t width, size_t rows,
                              size_t slices);
static void pitched_to_host(void *dst, const void *src, size_t pitch, size_t width, size_t rows,
                            size_t slices);

#ifdef HALO3D_CUDART
static void rt_ok(cudaError_t e, const char *call)
{
    char text[160];
    if (e == cudaSuccess)
        return;
    snprintf(text, sizeof(text), "%s failed (%s: %s)", call, cudaGetErrorName(e),
             cudaGetErrorString(e));
    die(text);
}

/* Make device (local rank mod devices) current. */
static void device_open(MPI_Comm world)
{
    MPI_Comm node;
    int local, ndev = 0;

    rt_ok(cudaGetDeviceCount(&ndev), "cudaGetDeviceCount");
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    own_device = local % ndev;
    other_device = (local + 1) % ndev;
    if (alloc_kind == A_VMM || alloc_kind == A_VMM_HOST)
        die("--alloc vmm and vmm_host need the driver API (the halo3d of the driver build)");
    if (alloc_kind == A_OTHER && ndev < 2)
        die("--alloc other needs two devices");
    rt_ok(cudaSetDevice(own_device), "cudaSetDevice");
}

static void *dev_alloc(size_t len)
{
    void *p = NULL;
    switch (alloc_kind) {
    case A_POOL:
        rt_ok(cudaMallocAsync(&p, len, NULL), "cudaMallocAsync");
        break;
    case A_MANAGED:
        rt_ok(cudaMallocManaged(&p, len, cudaMemAttachGlobal), "cudaMallocManaged");
        break;
    case A_OTHER:
        rt_ok(cudaSetDevice(other_device), "cudaSetDevice");
        rt_ok(cudaMalloc(&p, len), "cudaMalloc");
        rt_ok(cudaSetDevice(own_device), "cudaSetDevice");
        break;
    default:
        rt_ok(cudaMalloc(&p, len), "cudaMalloc");
        break;
    }
    return p;
}

static void dev_free(void *p)
{
    rt_ok(alloc_kind == A_POOL ? cudaFreeAsync(p, NULL) : cudaFree(p), "cudaFree");
}

/* Page-locked host memory the device can write (the packed buffers of the device mode). */
static void *pinned(size_t len)
{
    void *p = NULL;
    rt_ok(cudaHostAlloc(&p, len ? len : 1, cudaHostAllocMapped | cudaHostAllocPortable),
          "cudaHostAlloc");
    return p;
}

static void pinned_free(void *p)
{
    rt_ok(cudaFreeHost(p), "cudaFreeHost");
}

static void to_device(void *dst, const void *src, size_t len)
{
    rt_ok(cudaMemcpy(dst, src, len, cudaMemcpyHostToDevice), "cudaMemcpy");
}

static void to_host(void *dst, const void *src, size_t len)
{
    rt_ok(cudaMemcpy(dst, src, len, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

/* As TEMPI's halo exchange allocates its grids: cudaMalloc3D, the extent's width in bytes. */
static void *pitched_alloc(size_t width, size_t rows, size_t slices, size_t *pitch)
{
    struct cudaPitchedPtr p;
    struct cudaExtent e = {.width = width, .height = rows, .depth = slices};
    rt_ok(cudaMalloc3D(&p, e), "cudaMalloc3D");
    *pitch = p.pitch;
    return p.ptr;
}

/* One cudaMemcpy3D between the dense host grid and the pitched device grid. */
static void copy_3d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t rows, size_t slices, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms c;
    memset(&c, 0, sizeof(c));
    c.srcPtr = (struct cudaPitchedPtr){
        .ptr = (void *)(uintptr_t)src, .pitch = spitch, .xsize = width, .ysize = rows};
    c.dstPtr = (struct cudaPitchedPtr){.ptr = dst, .pitch = dpitch, .xsize = width, .ysize = rows};
    c.extent = (struct cudaExtent){.width = width, .height = rows, .depth = slices};
    c.kind = kind;
    rt_ok(cudaMemcpy3D(&c), "cudaMemcpy3D");
}

static void pitched_to_device(void *dst, size_t pitch, const void *src, size_t width, size_t rows,
                              size_t slices)
{
    copy_3d(dst, pitch, src, width, width, rows, slices, cudaMemcpyHostToDevice);
}

static void pitched_to_host(void *dst, const void *src, size_t pitch, size_t width, size_t rows,
                            size_t slices)
{
    copy_3d(dst, width, src, pitch, width, rows, slices, cudaMemcpyDeviceToHost);
}
#else
/* The driver, opened with dlopen so that the host mode needs none. */
static struct {
    __typeof__(&cuInit) init;
    __typeof__(&cuDeviceGetCount) device_count;
    __typeof__(&cuDeviceGet) device_get;
    __typeof__(&cuDevicePrimaryCtxRetain) retain;
    __typeof__(&cuCtxSetCurrent) set_current;
    __typeof__(&cuMemAlloc) alloc;
    __typeof__(&cuMemFree) free;
    __typeof__(&cuMemAllocAsync) alloc_async;
    __typeof__(&cuMemFreeAsync) free_async;
    __typeof__(&cuMemAllocManaged) alloc_managed;
    __typeof__(&cuMemGetAllocationGranularity) granularity;
    __typeof__(&cuMemCreate) create;
    __typeof__(&cuMemRelease) release;
    __typeof__(&cuMemAddressReserve) reserve;
    __typeof__(&cuMemAddressFree) unreserve;
    __typeof__(&cuMemMap) map;
    __typeof__(&cuMemUnmap) unmap;
    __typeof__(&cuMemSetAccess) set_access;
    __typeof__(&cuCtxPushCurrent) push;
    __typeof__(&cuCtxPopCurrent) pop;
    __typeof__(&cuMemHostAlloc) host_alloc;
    __typeof__(&cuMemFreeHost) host_free;
    __typeof__(&cuMemcpyHtoD) htod;
    __typeof__(&cuMemcpyDtoH) dtoh;
    __typeof__(&cuMemAllocPitch) alloc_pitch;
    __typeof__(&cuMemcpy2D) copy_2d;
} cu;

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
    *(void **)&cu.alloc_async = dlsym(lib, "cuMemAllocAsync");
    *(void **)&cu.free_async = dlsym(lib, "cuMemFreeAsync");
    *(void **)&cu.alloc_managed = dlsym(lib, "cuMemAllocManaged");
    *(void **)&cu.granularity = dlsym(lib, "cuMemGetAllocationGranularity");
    *(void **)&cu.create = dlsym(lib, "cuMemCreate");
    *(void **)&cu.release = dlsym(lib, "cuMemRelease");
    *(void **)&cu.reserve = dlsym(lib, "cuMemAddressReserve");
    *(void **)&cu.unreserve = dlsym(lib, "cuMemAddressFree");
    *(void **)&cu.map = dlsym(lib, "cuMemMap");
    *(void **)&cu.unmap = dlsym(lib, "cuMemUnmap");
    *(void **)&cu.set_access = dlsym(lib, "cuMemSetAccess");
    *(void **)&cu.push = dlsym(lib, "cuCtxPushCurrent_v2");
    *(void **)&cu.pop = dlsym(lib, "cuCtxPopCurrent_v2");
    *(void **)&cu.host_alloc = dlsym(lib, "cuMemHostAlloc");
    *(void **)&cu.host_free = dlsym(lib, "cuMemFreeHost");
    *(void **)&cu.htod = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **)&cu.dtoh = dlsym(lib, "cuMemcpyDtoH_v2");
    *(void **)&cu.alloc_pitch = dlsym(lib, "cuMemAllocPitch_v2");
    *(void **)&cu.copy_2d = dlsym(lib, "cuMemcpy2D_v2");
    if (!cu.init || !cu.device_count || !cu.device_get || !cu.retain || !cu.set_current ||
        !cu.alloc || !cu.free || !cu.host_alloc || !cu.host_free || !cu.htod || !cu.dtoh)
        die("the CUDA driver lacks a function --device needs");
    if ((alloc_kind == A_POOL && (!cu.alloc_async || !cu.free_async)) ||
        (alloc_kind == A_MANAGED && !cu.alloc_managed) ||
        ((alloc_kind == A_VMM || alloc_kind == A_VMM_HOST) &&
         (!cu.granularity || !cu.create || !cu.release || !cu.reserve || !cu.unreserve || !cu.map ||
          !cu.unmap || !cu.set_access)) ||
        (alloc_kind == A_OTHER && (!cu.push || !cu.pop)) ||
        (alloc_kind == A_PITCHED && (!cu.alloc_pitch || !cu.copy_2d)))
        die("the CUDA driver lacks a function --alloc needs");
    cu_ok(cu.init(0), "cuInit");
    cu_ok(cu.device_count(&ndev), "cuDeviceGetCount");
    if (ndev < 1)
        die("--device needs a CUDA device");
    if (alloc_kind == A_OTHER && ndev < 2)
        die("--alloc other needs two devices");
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    own_device = local % ndev;
    other_device = (local + 1) % ndev;
    cu_ok(cu.device_get(&dev, own_device), "cuDeviceGet");
    cu_ok(cu.retain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    cu_ok(cu.set_current(ctx), "cuCtxSetCurrent");
}

/* --alloc other: the other device's primary context pushed around its allocations and copies. */
static CUcontext other_ctx;

static void other_enter(void)
{
    CUdevice dev;
    if (alloc_kind != A_OTHER)
        return;
    if (other_ctx == NULL) {
        cu_ok(cu.device_get(&dev, other_device), "cuDeviceGet");
        cu_ok(cu.retain(&other_ctx, dev), "cuDevicePrimaryCtxRetain");
    }
    cu_ok(cu.push(other_ctx), "cuCtxPushCurrent");
}

static void other_leave(void)
{
    CUcontext popped;
    if (alloc_kind == A_OTHER)
        cu_ok(cu.pop(&popped), "cuCtxPopCurrent");
}

/* VMM mappings (--alloc vmm, vmm_host): the two grids' address ranges, handles and sizes. */
static struct {
    CUdeviceptr va;
    CUmemGenericAllocationHandle handle;
    size_t size;
} vmm[2];

/* A VMM mapping of device memory of the rank's device, or of host memory (a host NUMA node)
 * that only the rank's device may touch. */
static CUdeviceptr vmm_alloc(size_t len)
{
    CUmemAllocationProp prop;
    CUmemAccessDesc access;
    size_t gran = 0;
    int i = vmm[0].va != 0;

    if (vmm[i].va != 0)
        die("--alloc vmm: more than two grids");
    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type =
        alloc_kind == A_VMM_HOST ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = alloc_kind == A_VMM_HOST ? 0 : own_device;
    cu_ok(cu.granularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "cuMemGetAllocationGranularity");
    vmm[i].size = (len + gran - 1) / gran * gran;
    cu_ok(cu.create(&vmm[i].handle, vmm[i].size, &prop, 0), "cuMemCreate");
    cu_ok(cu.reserve(&vmm[i].va, vmm[i].size, 0, 0, 0), "cuMemAddressReserve");
    cu_ok(cu.map(vmm[i].va, vmm[i].size, 0, vmm[i].handle, 0), "cuMemMap");
    memset(&access, 0, sizeof(access));
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = own_device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cu_ok(cu.set_access(vmm[i].va, vmm[i].size, &access, 1), "cuMemSetAccess");
    return vmm[i].va;
}

static void *dev_alloc(size_t len)
{
    CUdeviceptr d = 0;
    switch (alloc_kind) {
    case A_POOL:
        cu_ok(cu.alloc_async(&d, len, NULL), "cuMemAllocAsync");
        break;
    case A_MANAGED:
        cu_ok(cu.alloc_managed(&d, len, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
        break;
    case A_VMM:
    case A_VMM_HOST:
        d = vmm_alloc(len);
        break;
    default:
        other_enter();
        cu_ok(cu.alloc(&d, len), "cuMemAlloc");
        other_leave();
        break;
    }
    return (void *)(uintptr_t)d;
}

static void dev_free(void *p)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)p;
    switch (alloc_kind) {
    case A_POOL:
        cu_ok(cu.free_async(d, NULL), "cuMemFreeAsync");
        break;
    case A_VMM:
    case A_VMM_HOST:
        for (int i = 0; i < 2; i++)
            if (vmm[i].va == d) {
                cu_ok(cu.unmap(d, vmm[i].size), "cuMemUnmap");
                cu_ok(cu.release(vmm[i].handle), "cuMemRelease");
                cu_ok(cu.unreserve(d, vmm[i].size), "cuMemAddressFree");
                vmm[i].va = 0;
            }
        break;
    default:
        other_enter();
        cu_ok(cu.free(d), "cuMemFree");
        other_leave();
        break;
    }
}

/* Page-locked host memory the device can write (the packed buffers of the device mode). */
static void *pinned(size_t len)
{
    void *p;
    cu_ok(cu.host_alloc(&p, len ? len : 1, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
          "cuMemHostAlloc");
    return p;
}

static void pinned_free(void *p)
{
    cu_ok(cu.host_free(p), "cuMemFreeHost");
}

static void to_device(void *dst, const void *src, size_t len)
{
    other_enter();
    cu_ok(cu.htod((CUdeviceptr)(uintptr_t)dst, src, len), "cuMemcpyHtoD");
    other_leave();
}

static void to_host(void *dst, const void *src, size_t len)
{
    other_enter();
    cu_ok(cu.dtoh(dst, (CUdeviceptr)(uintptr_t)src, len), "cuMemcpyDtoH");
    other_leave();
}

/* cuMemAllocPitch of rows * slices rows (16-byte elements, the widest a kernel moves); the
 * copies are cuMemcpy2D of as many rows, as a driver-API program moves a pitched allocation. */
static void *pitched_alloc(size_t width, size_t rows, size_t slices, size_t *pitch)
{
    CUdeviceptr d = 0;
    cu_ok(cu.alloc_pitch(&d, pitch, width, rows * slices, 16), "cuMemAllocPitch");
    return (void *)(uintptr_t)d;
}

static void pitched_to_device(void *dst, size_t pitch, const void *src, size_t width, size_t rows,
                              size_t slices)
{
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = src;
    c.srcPitch = width;
    c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
    c.dstPitch = pitch;
    c.WidthInBytes = width;
    c.Height = rows * slices;
    cu_ok(cu.copy_2d(&c), "cuMemcpy2D");
}

static void pitched_to_host(void *dst, const void *src, size_t pitch, size_t width, size_t rows,
                            size_t slices)
{
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof(c));
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = (CUdeviceptr)(uintptr_t)src;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = dst;
    c.dstPitch = width;
    c.WidthInBytes = width;
    c.Height = rows * slices;
    cu_ok(cu.copy_2d(&c), "cuMemcpy2D");
}
#endif

/* A positive int option value, or the usage. */
static int int_arg(const char *opt, const char *text, int min)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < min || v > 1 << 20) {
        fprintf(stderr, "halo3d: %s needs an integer >= %d, not \"%s\"\n%s", opt, min, text, usage);
        exit(2);
    }
    return (int)v;
}

/* The value of option @p name at argv[*i], written `NAME VALUE` (*i moves past it) or
 * `NAME=VALUE`; NULL when argv[*i] is another option. A missing value prints the usage. */
static const char *value_of(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);

    if (strncmp(argv[*i], name, len) != 0)
        return NULL;
    if (argv[*i][len] == '=')
        return argv[*i] + len + 1;
    if (argv[*i][len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        fprintf(stderr, "halo3d: %s needs a value\n%s", name, usage);
        exit(2);
    }
    return argv[++*i];
}

/* Index of a cell in the padded local array, coordinates from -radius to n + radius - 1. */
static size_t at(int x, int y, int z)
{
    size_t p = (size_t)(n + 2 * radius);
    return ((size_t)(z + radius) * p + (size_t)(y + radius)) * p + (size_t)(x + radius);
}

/* The grid the MPI calls see: bytes from one row of x points to the next (p points of Q
 * doubles, or the longer rows of --alloc pitched), and the byte offset of a cell in it. */
static size_t row_pitch;

static size_t offset_of(int x, int y, int z)
{
    size_t p = (size_t)(n + 2 * radius);
    return ((size_t)(z + radius) * p + (size_t)(y + radius)) * row_pitch +
           (size_t)(x + radius) * (size_t)q * sizeof(double);
}

/* The padding of each row of --alloc pitched holds this byte from the allocation on. */
#define PADDING_BYTE 0xa5

/* A device grid of @p values doubles, p = @p side points a side, rows of @p row_bytes: one
 * allocation of dev_alloc, or (--alloc pitched) a pitched one whose padding is poisoned, whose
 * pitch becomes row_pitch, the datatypes' row (a whole number of points). */
static void *grid_alloc(size_t values, size_t row_bytes, size_t side)
{
    size_t pitch = 0;
    void *d;
    unsigned char *poison;

    if (alloc_kind != A_PITCHED)
        return dev_alloc(values * sizeof(double));
    d = pitched_alloc(row_bytes, side, side, &pitch);
    if (pitch < row_bytes || pitch % ((size_t)q * sizeof(double)) != 0) {
        char text[160];
        snprintf(text, sizeof(text),
                 "--alloc pitched: a pitch of %zu bytes is no whole number of points of %d "
                 "doubles",
                 pitch, q);
        die(text);
    }
    row_pitch = pitch;
    if ((poison = malloc(pitch * side * side)) == NULL)
        die("out of memory");
    memset(poison, PADDING_BYTE, pitch * side * side);
    to_device(d, poison, pitch * side * side);
    free(poison);
    return d;
}

static void grid_to_device(void *d, const double *grid, size_t values, size_t row_bytes,
                           size_t side)
{
    if (alloc_kind == A_PITCHED)
        pitched_to_device(d, row_pitch, grid, row_bytes, side, side);
    else
        to_device(d, grid, values * sizeof(double));
}

static void grid_to_host(double *grid, const void *d, size_t values, size_t row_bytes, size_t side)
{
    if (alloc_kind == A_PITCHED)
        pitched_to_host(grid, d, row_pitch, row_bytes, side, side);
    else
        to_host(grid, d, values * sizeof(double));
}

/* The bytes of a pitched grid's padding that no longer hold PADDING_BYTE (0 for other kinds):
 * the datatypes never reach them. */
static long padding_written(const void *d, size_t row_bytes, size_t side)
{
    size_t len = row_pitch * side * side;
    unsigned char *all;
    long written = 0;

    if (alloc_kind != A_PITCHED)
        return 0;
    if ((all = malloc(len)) == NULL)
        die("out of memory");
    to_host(all, d, len);
    for (size_t r = 0; r < side * side; r++)
        for (size_t i = row_bytes; i < row_pitch; i++)
            written += all[r * row_pitch + i] != PADDING_BYTE;
    free(all);
    return written;
}

/* The value component c of a point holds: a function of its global coordinates, so any rank can
 * check it. */
static double value(int gx, int gy, int gz, int c)
{
    return (gx + 1000.0 * gy + 1000000.0 * gz) * q + c;
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

/* Where a region's datatype places it, and the byte offset of the buffer the calls pass: the
 * region itself and 0, or with --offset-faces the array's origin and the offset of the region's
 * first point. */
static void region_place(const int start[3], int box[3], MPI_Aint *offset)
{
    for (int a = 0; a < 3; a++)
        box[a] = offset_faces ? -radius : start[a];
    *offset = offset_faces ? (MPI_Aint)offset_of(start[0], start[1], start[2]) : 0;
}

/* A box of the padded array as a datatype: subarray of points (Q contiguous doubles), or the
 * same layout as an hvector of vectors of doubles, so that both constructions meet typejit; rows
 * row_pitch bytes apart (a whole number of points). It is named (MPI_Type_set_name), as a careful
 * application names its types: typejit's debug log shows the names. With --offset-faces the box
 * is at the origin (region_place). */
static MPI_Datatype box_type(const int region_start[3], const int size[3], int as_subarray,
                             const char *name)
{
    int p = n + 2 * radius, row = (int)(row_pitch / ((size_t)q * sizeof(double))), start[3];
    MPI_Aint plane_bytes = (MPI_Aint)p * (MPI_Aint)row_pitch, unused;
    MPI_Datatype t, rows, plane, point;
    region_place(region_start, start, &unused);
    if (as_subarray) {
        int sizes[3] = {p, p, row};
        int subs[3] = {size[2], size[1], size[0]};
        int starts[3] = {start[2] + radius, start[1] + radius, start[0] + radius};
        MPI_Type_contiguous(q, MPI_DOUBLE, &point);
        MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, point, &t);
        MPI_Type_free(&point);
    } else {
        /* x runs of size[0] points, size[1] of them a row apart, size[2] planes p rows apart;
         * the displacement of the box origin comes from a struct with one member. */
        MPI_Aint disp = (MPI_Aint)offset_of(start[0], start[1], start[2]);
        int one = 1;
        MPI_Datatype moved;
        MPI_Type_vector(size[1], size[0] * q, row * q, MPI_DOUBLE, &rows);
        MPI_Type_create_hvector(size[2], 1, plane_bytes, rows, &plane);
        MPI_Type_create_struct(1, &one, &disp, &plane, &moved);
        /* The extent of the whole padded array, as for the subarray. */
        MPI_Type_create_resized(moved, 0, (MPI_Aint)p * plane_bytes, &t);
        MPI_Type_free(&rows);
        MPI_Type_free(&plane);
        MPI_Type_free(&moved);
    }
    MPI_Type_set_name(t, name);
    MPI_Type_commit(&t);
    return t;
}

/* A call that fails before it is matched with a peer's: made again, up to 1000 times. */
#define RETRY(_call)                                                                               \
    do {                                                                                           \
        int _tries = 0;                                                                            \
        while ((_call) != MPI_SUCCESS) {                                                           \
            if (!tolerate || ++_tries == 1000)                                                     \
                die(#_call " failed");                                                             \
            errors++;                                                                              \
        }                                                                                          \
    } while (0)

/* The type description (typejit's `inspect`/`warm` syntax) of box_type's datatype, written the
 * way box_type builds it. */
static void box_text(const int region_start[3], const int size[3], int as_subarray, char *buf,
                     size_t len)
{
    long long p = n + 2 * radius, row = (long long)(row_pitch / ((size_t)q * sizeof(double)));
    long long plane_bytes = p * (long long)row_pitch;
    int start[3];
    MPI_Aint unused;
    region_place(region_start, start, &unused);
    if (as_subarray)
        snprintf(buf, len,
                 "subarray({%lld,%lld,%lld}, {%d,%d,%d}, {%d,%d,%d}, C, contiguous(%d, "
                 "double))",
                 p, p, row, size[2], size[1], size[0], start[2] + radius, start[1] + radius,
                 start[0] + radius, q);
    else
        snprintf(buf, len,
                 "resized(0, %lld, struct({1}, {%lld}, {hvector(%d, 1, %lld, vector(%d, %d, %lld, "
                 "double))}))",
                 p * plane_bytes, (long long)offset_of(start[0], start[1], start[2]), size[2],
                 plane_bytes, size[1], size[0] * q, row * q);
}

/* The regions of direction d (0..26 but 13): what is sent, what is received. */
static void regions(int d, int ss[3], int sz[3], int rs[3], int rz[3])
{
    int comp[3] = {d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1};
    for (int a = 0; a < 3; a++) {
        region(comp[a], 1, &ss[a], &sz[a]);
        region(comp[a], 0, &rs[a], &rz[a]);
    }
}

/* A member of a fused set: with --offset-faces the region's datatype at its displacement (a
 * struct of one member), since the word each member moves depends on where it lies. */
static void member_text(const char *type, MPI_Aint offset)
{
    if (offset_faces)
        printf("struct({1}, {%lld}, {%s})", (long long)offset, type);
    else
        printf("%s", type);
}

/* --describe: every region's datatype, then the neighbor mode's two fused sets (its slots in
 * order: slot k is direction d_k, sent as send_t[d_k], received as recv_t[26 - d_k]). */
static void describe_types(void)
{
    char send[27][512], recv[27][512];
    MPI_Aint soff[27], roff[27];
    for (int d = 0; d < 27; d++) {
        int ss[3], sz[3], rs[3], rz[3], box[3];
        if (d == 13)
            continue;
        regions(d, ss, sz, rs, rz);
        box_text(ss, sz, d % 2 == 0, send[d], sizeof(send[d]));
        box_text(rs, rz, d % 2 == 1, recv[d], sizeof(recv[d]));
        region_place(ss, box, &soff[d]);
        region_place(rs, box, &roff[d]);
    }
    printf("# halo3d --n %d --radius %d --per-point %d%s: the datatypes of the regions\n", n,
           radius, q, offset_faces ? " --offset-faces" : "");
    for (int d = 0; d < 27; d++)
        if (d != 13)
            printf("%s\n%s\n", send[d], recv[d]);
    printf("# --collective neighbor: one fused launch per side, the slots in order%s\nfused(",
           offset_faces ? ", each member at its displacement" : "");
    for (int d = 0, k = 0; d < 27; d++)
        if (d != 13) {
            printf("%s", k++ ? ", " : "");
            member_text(send[d], soff[d]);
        }
    printf(")\nfused(");
    for (int d = 0, k = 0; d < 27; d++)
        if (d != 13) {
            printf("%s", k++ ? ", " : "");
            member_text(recv[26 - d], roff[26 - d]);
        }
    printf(")\n");
}

/* @p buf moved on by @p offset bytes: a region's place with --offset-faces. */
static void *shifted(void *buf, MPI_Aint offset)
{
    return (char *)buf + offset;
}

int main(int argc, char **argv)
{
    int rank, nranks, dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, coords[3], placed = 0,
                      allocated = 0;
    MPI_Comm cart;
    MPI_Datatype send_t[27], recv_t[27];
    MPI_Aint soff[27], roff[27]; /* where the calls place each region (--offset-faces) */
    int nbr[27], dsize[27];
    long bad = 0;
    double t_pack = 0, t_unpack = 0, t_exch = 0;
    /* --overlap: the steps after the first (which makes kernels and staging), and typejit's
     * counters over them. */
    double t_post = 0, t_compute = 0, t_waitall = 0;
    long waits0 = 0, wait_us0 = 0, queue_us0 = 0, wait_us_post = 0, wait_us_waitall = 0, mark = 0;
    int measured = 0;

    /* Arguments first: a usage error or --help must not need MPI. */
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if ((v = value_of(argc, argv, &i, "--n")) != NULL) {
            n = int_arg("--n", v, 1);
        } else if ((v = value_of(argc, argv, &i, "--radius")) != NULL) {
            radius = int_arg("--radius", v, 1);
        } else if ((v = value_of(argc, argv, &i, "--per-point")) != NULL) {
            q = int_arg("--per-point", v, 1);
        } else if ((v = value_of(argc, argv, &i, "--collective")) != NULL) {
            const char *m = v;
            int k = 0;
            while (k < 4 && strcmp(m, mode_names[k]) != 0)
                k++;
            if (k == 4) {
                fprintf(stderr, "halo3d: unknown --collective \"%s\"\n%s", m, usage);
                return 2;
            }
            mode = (exchange_t)k;
        } else if ((v = value_of(argc, argv, &i, "--overlap")) != NULL) {
            overlap_us = int_arg("--overlap", v, 0);
        } else if ((v = value_of(argc, argv, &i, "--iters")) != NULL) {
            iters = int_arg("--iters", v, 1);
        } else if (strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--tolerate-errors") == 0) {
            tolerate = 1;
        } else if (strcmp(argv[i], "--device") == 0 || strcmp(argv[i], "--host") == 0) {
            int want = strcmp(argv[i], "--device") == 0;
            if (placed && device != want) {
                fprintf(stderr, "halo3d: --host and --device exclude each other\n%s", usage);
                return 2;
            }
            device = want;
            placed = 1;
        } else if ((v = value_of(argc, argv, &i, "--alloc")) != NULL) {
            int k = 0;
            while (k < A_KINDS && strcmp(v, alloc_names[k]) != 0)
                k++;
            if (k == A_KINDS) {
                fprintf(stderr, "halo3d: unknown --alloc \"%s\"\n%s", v, usage);
                return 2;
            }
            alloc_kind = (alloc_t)k;
            allocated = 1;
        } else if (strcmp(argv[i], "--describe") == 0) {
            describe_only = 1;
        } else if (strcmp(argv[i], "--offset-faces") == 0) {
            offset_faces = 1;
        } else {
            fprintf(stderr, "halo3d: unknown or incomplete argument \"%s\"\n%s", argv[i], usage);
            return 2;
        }
    }
    if (n < radius) {
        fprintf(stderr, "halo3d: need radius <= n\n%s", usage);
        return 2;
    }
    if (overlap_us >= 0 && mode != EX_ISEND) {
        fprintf(stderr, "halo3d: --overlap needs --collective isend\n%s", usage);
        return 2;
    }
    if (allocated && !device) {
        fprintf(stderr, "halo3d: --alloc needs --device\n%s", usage);
        return 2;
    }
    row_pitch = (size_t)(n + 2 * radius) * (size_t)q * sizeof(double);
    if (describe_only) {
        describe_types();
        return 0;
    }
    MPI_Init(&argc, &argv);
    if (tolerate)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (device)
        device_open(MPI_COMM_WORLD);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Dims_create(nranks, 3, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);
    MPI_Cart_coords(cart, rank, 3, coords);

    /* The grid: on the host, and in device memory; pitched device grids first, since their
     * pitch is the datatypes' row. */
    size_t cells = at(n + radius - 1, n + radius - 1, n + radius - 1) + 1;
    size_t values = cells * (size_t)q;
    size_t row_bytes = row_pitch, side = (size_t)(n + 2 * radius);
    bool two = mode == EX_ALLTOALLV || mode == EX_NEIGHBOR;
    void *dgrid = NULL, *drgrid = NULL;
    if (device)
        dgrid = grid_alloc(values, row_bytes, side);
    if (device && two)
        drgrid = grid_alloc(values, row_bytes, side);

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
        int ss[3], sz[3], rs[3], rz[3], box[3];
        regions(d, ss, sz, rs, rz);
        region_place(ss, box, &soff[d]);
        region_place(rs, box, &roff[d]);
        char name[64];
        snprintf(name, sizeof(name), "halo send (%+d,%+d,%+d)", dx, dy, dz);
        send_t[d] = box_type(ss, sz, d % 2 == 0, name);
        snprintf(name, sizeof(name), "halo receive (%+d,%+d,%+d)", dx, dy, dz);
        recv_t[d] = box_type(rs, rz, d % 2 == 1, name);
        MPI_Type_size(send_t[d], &dsize[d]);
    }

    if (offset_faces && mode == EX_ALLTOALLV && row_pitch * side * side > INT_MAX)
        die("--offset-faces with --collective alltoallv: the grid is too large for the int "
            "displacements of MPI_Alltoallw");
    double *grid = malloc(values * sizeof(double));
    /* What the MPI calls see: the host grid, or its copy in device memory. A collective may not
     * take one buffer as both its send and its receive buffer, so the alltoallv and neighbor
     * modes receive into a second copy of the grid (`rfield`), whose ghosts are checked. */
    void *field = grid, *rfield = grid;
    double *rgrid = two && !device ? malloc(values * sizeof(double)) : NULL;
    int *scount = calloc((size_t)nranks, sizeof(int)),
        *sdispl = calloc((size_t)nranks, sizeof(int));
    int *rcount = calloc((size_t)nranks, sizeof(int)),
        *rdispl = calloc((size_t)nranks, sizeof(int));
    MPI_Datatype *stypes = calloc((size_t)nranks, sizeof(MPI_Datatype)),
                 *rtypes = calloc((size_t)nranks, sizeof(MPI_Datatype));
    size_t total = 0;
    for (int d = 0; d < 27; d++)
        if (d != 13)
            total += (size_t)dsize[d];
    char *sbuf = mode != EX_PACK ? NULL : device ? pinned(total) : malloc(total);
    char *rbuf = mode != EX_PACK ? NULL : device ? pinned(total) : malloc(total);
    if (!grid || !scount || !sdispl || !rcount || !rdispl || !stypes || !rtypes ||
        (mode == EX_PACK && (!sbuf || !rbuf)) || (two && !device && !rgrid))
        die("out of memory");
    rfield = two ? (void *)rgrid : field;
    if (device) {
        field = rfield = dgrid;
        if (two)
            rfield = drgrid;
    }

    /* The directions each peer rank takes, in ascending order: what goes to rank r, and what
     * arrives from rank s (the directions d it sends to us land in our ghosts on side 26 - d;
     * the process grid is periodic, so every rank has the same pattern). The alltoallv mode
     * exchanges the k-th of each in round k. */
    int rounds = 0, *nto = calloc((size_t)nranks, sizeof(int));
    int(*to)[26] = calloc((size_t)nranks, sizeof(*to)),
    (*from)[26] = calloc((size_t)nranks, sizeof(*from));
    if (!nto || !to || !from)
        die("out of memory");
    for (int r = 0; r < nranks; r++) {
        int k = 0, j = 0;
        for (int d = 0; d < 27; d++) {
            if (d != 13 && nbr[d] == r)
                to[r][k++] = d;
            if (d != 13 && nbr[26 - d] == r)
                from[r][j++] = d;
        }
        nto[r] = k;
        if (k > rounds)
            rounds = k;
    }
    /* The neighbor mode's graph: slot k is direction d_k, sent to nbr[d_k] and received from
     * nbr[26 - d_k]; two slots between one pair of ranks are matched in slot order. */
    MPI_Comm graph = MPI_COMM_NULL;
    int gsrc[26], gdst[26], gcnt[26], weights[26];
    MPI_Aint gsdis[26], grdis[26];
    MPI_Datatype gs_t[26], gr_t[26];
    for (int d = 0, k = 0; d < 27; d++) {
        if (d == 13)
            continue;
        gdst[k] = nbr[d];
        gsrc[k] = nbr[26 - d];
        gs_t[k] = send_t[d];
        gr_t[k] = recv_t[26 - d];
        gcnt[k] = 1;
        gsdis[k] = soff[d];
        grdis[k] = roff[26 - d];
        weights[k] = 1;
        k++;
    }
    if (mode == EX_NEIGHBOR)
        MPI_Dist_graph_create_adjacent(cart, 26, gsrc, weights, 26, gdst, weights, MPI_INFO_NULL, 0,
                                       &graph);

    for (int it = 0; it < iters; it++) {
        if (it == (iters > 1 ? 1 : 0)) {
            waits0 = counter("gpu_waits");
            wait_us0 = counter("gpu_wait_us");
            queue_us0 = counter("queue_wait_us");
            t_post = t_compute = t_waitall = 0;
            wait_us_post = wait_us_waitall = 0;
            measured = 0;
        }
        measured++;
        /* Interior from the global coordinates, ghosts poisoned. */
        for (int z = -radius; z < n + radius; z++)
            for (int y = -radius; y < n + radius; y++)
                for (int x = -radius; x < n + radius; x++) {
                    int inside = x >= 0 && x < n && y >= 0 && y < n && z >= 0 && z < n;
                    for (int c = 0; c < q; c++)
                        grid[at(x, y, z) * q + c] =
                            inside
                                ? value(coords[0] * n + x, coords[1] * n + y, coords[2] * n + z, c)
                                : -1.0;
                }
        if (device)
            grid_to_device(dgrid, grid, values, row_bytes, side);
        if (device && two)
            grid_to_device(drgrid, grid, values, row_bytes, side);
        else if (two)
            memcpy(rgrid, grid, values * sizeof(double));

        double t0 = tj_clock_seconds(), t1 = t0, t2 = t0, t3;
        int failed, anywhere = 1;
        for (int attempt = 0; anywhere; attempt++) {
            failed = 0;
            if (attempt == 100)
                die("an exchange failed 100 times in a row");
            if (mode == EX_PACK) {
                /* Pack grouped by destination, directions in ascending order within each group. */
                int pos = 0;
                for (int r = 0; r < nranks; r++) {
                    sdispl[r] = pos;
                    for (int k = 0; k < nto[r]; k++) {
                        int was = pos;
                        RETRY(
                            (pos = was, MPI_Pack(shifted(field, soff[to[r][k]]), 1,
                                                 send_t[to[r][k]], sbuf, (int)total, &pos, cart)));
                    }
                    scount[r] = pos - sdispl[r];
                }
                t1 = tj_clock_seconds();
                int rpos = 0;
                for (int s = 0; s < nranks; s++) {
                    rdispl[s] = rpos;
                    for (int k = 0; k < nto[s]; k++)
                        rpos += dsize[from[s][k]];
                    rcount[s] = rpos - rdispl[s];
                }
                failed |= MPI_Alltoallv(sbuf, scount, sdispl, MPI_PACKED, rbuf, rcount, rdispl,
                                        MPI_PACKED, cart) != MPI_SUCCESS;
                t2 = tj_clock_seconds();
                for (int s = 0; s < nranks; s++) {
                    int p = rdispl[s];
                    for (int k = 0; k < nto[s]; k++) {
                        int was = p;
                        RETRY((p = was, MPI_Unpack(rbuf, (int)total, &p,
                                                   shifted(field, roff[26 - from[s][k]]), 1,
                                                   recv_t[26 - from[s][k]], cart)));
                    }
                }
            } else if (mode == EX_ALLTOALLV) {
                for (int k = 0; k < rounds; k++) {
                    for (int r = 0; r < nranks; r++) {
                        int has = k < nto[r];
                        scount[r] = rcount[r] = has;
                        sdispl[r] = has ? (int)soff[to[r][k]] : 0;
                        rdispl[r] = has ? (int)roff[26 - from[r][k]] : 0;
                        stypes[r] = has ? send_t[to[r][k]] : MPI_DOUBLE;
                        rtypes[r] = has ? recv_t[26 - from[r][k]] : MPI_DOUBLE;
                    }
                    failed |= MPI_Alltoallw(field, scount, sdispl, stypes, rfield, rcount, rdispl,
                                            rtypes, cart) != MPI_SUCCESS;
                }
            } else if (mode == EX_NEIGHBOR) {
                failed |= MPI_Neighbor_alltoallw(field, gcnt, gsdis, gs_t, rfield, gcnt, grdis,
                                                 gr_t, graph) != MPI_SUCCESS;
            } else {
                MPI_Request reqs[52];
                /* Statuses, not MPI_STATUSES_IGNORE: MPICH's header declares the array's size to
                 * GCC, which then warns about its sentinel (a pointer to nothing). */
                MPI_Status sts[52];
                int nreq = 0;
                if (overlap_us >= 0)
                    mark = counter("gpu_wait_us");
                for (int d = 0; d < 27; d++) {
                    if (d == 13)
                        continue;
                    RETRY(MPI_Irecv(shifted(field, roff[26 - d]), 1, recv_t[26 - d], nbr[26 - d], d,
                                    cart, &reqs[nreq]));
                    nreq++;
                    RETRY(MPI_Isend(shifted(field, soff[d]), 1, send_t[d], nbr[d], d, cart,
                                    &reqs[nreq]));
                    nreq++;
                }
                t1 = tj_clock_seconds();
                if (overlap_us >= 0) {
                    long now = counter("gpu_wait_us");
                    wait_us_post += now - mark;
                    compute(overlap_us);
                    t2 = tj_clock_seconds();
                    mark = counter("gpu_wait_us");
                } else {
                    t2 = t1;
                }
                failed |= MPI_Waitall(nreq, reqs, sts) != MPI_SUCCESS;
                if (overlap_us >= 0)
                    wait_us_waitall += counter("gpu_wait_us") - mark;
            }
            /* A failure anywhere: every rank redoes the exchange (the calls stay matched). */
            anywhere = failed;
            if (tolerate)
                MPI_Allreduce(&failed, &anywhere, 1, MPI_INT, MPI_LOR, cart);
            else if (failed)
                die("an exchange failed");
            errors += failed;
        }
        t3 = tj_clock_seconds();
        if (mode == EX_PACK) {
            t_pack += t1 - t0;
            t_exch += t2 - t1;
            t_unpack += t3 - t2;
        } else if (mode == EX_ISEND) {
            t_exch += t3 - t0;
            t_post += t1 - t0;
            t_compute += t2 - t1;
            t_waitall += t3 - t2;
        } else {
            t_exch += t3 - t0;
        }
        if (device)
            grid_to_host(grid, two ? drgrid : dgrid, values, row_bytes, side);
        else if (two)
            memcpy(grid, rgrid, values * sizeof(double));

        /* Every ghost cell holds its owner's value (periodic wrap of the global grid). */
        int gn[3] = {dims[0] * n, dims[1] * n, dims[2] * n};
        for (int z = -radius; z < n + radius; z++)
            for (int y = -radius; y < n + radius; y++)
                for (int x = -radius; x < n + radius; x++) {
                    int g[3] = {coords[0] * n + x, coords[1] * n + y, coords[2] * n + z};
                    for (int a = 0; a < 3; a++)
                        g[a] = (g[a] % gn[a] + gn[a]) % gn[a];
                    for (int c = 0; c < q; c++)
                        if (grid[at(x, y, z) * q + c] != value(g[0], g[1], g[2], c))
                            bad++;
                }
    }

    long all_bad = 0, all_errors = 0, padding = 0, all_padding = 0;
    if (device)
        padding = padding_written(dgrid, row_bytes, side) +
                  (two ? padding_written(drgrid, row_bytes, side) : 0);
    MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, cart);
    MPI_Reduce(&padding, &all_padding, 1, MPI_LONG, MPI_SUM, 0, cart);
    MPI_Reduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, 0, cart);
    if (rank == 0 && !quiet) {
        describe_fn describe = (describe_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "tj_type_describe");
        printf("halo3d: %d ranks in a %dx%dx%d grid, %d^3 points of %d doubles each, radius %d, "
               "%d iterations, grid in %s memory, exchange by %s%s\n",
               nranks, dims[0], dims[1], dims[2], n, q, radius, iters, device ? "device" : "host",
               mode_names[mode], offset_faces ? ", regions at d + offset" : "");
        if (describe == NULL)
            printf("typejit is not loaded: every datatype is handled by the system MPI\n");
        for (int d = 0; d < 27 && describe != NULL; d++) {
            char text[512];
            if (d == 13)
                continue;
            describe(&send_t[d], text, sizeof(text));
            printf("  send (%+d,%+d,%+d) %-8s %7d B: %s\n", d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1,
                   d % 2 == 0 ? "subarray" : "vector", dsize[d], text);
        }
        if (mode == EX_PACK)
            printf("per iteration: pack %.1f us, exchange (alltoallv) %.1f us, unpack %.1f us\n",
                   1e6 * t_pack / iters, 1e6 * t_exch / iters, 1e6 * t_unpack / iters);
        else
            printf("per iteration: pack - us, exchange (%s, packing inside) %.1f us, unpack - "
                   "us\n",
                   mode == EX_ALLTOALLV  ? "alltoallw"
                   : mode == EX_NEIGHBOR ? "neighbor_alltoallw"
                                         : "isend/irecv",
                   1e6 * t_exch / iters);
    }
    if (rank == 0 && overlap_us >= 0) {
        double per = 1e6 / measured;
        printf("overlap: compute %.1f us a step; in MPI calls %.1f us a step (posting %.1f, "
               "MPI_Waitall %.1f); typejit's device waits %.2f a step, %.1f us a step (posting "
               "%.1f, MPI_Waitall %.1f), for queued packs %.1f us a step\n",
               t_compute * per, (t_post + t_waitall) * per, t_post * per, t_waitall * per,
               (double)(counter("gpu_waits") - waits0) / measured,
               (double)(counter("gpu_wait_us") - wait_us0) / measured,
               (double)wait_us_post / measured, (double)wait_us_waitall / measured,
               (double)(counter("queue_wait_us") - queue_us0) / measured);
    }
    if (rank == 0 && tolerate)
        printf("MPI errors met and recovered from: %ld\n", all_errors);
    if (rank == 0 && all_padding != 0)
        printf("FAIL: %ld wrong ghost cells, %ld bytes of the rows' padding written\n", all_bad,
               all_padding);
    else if (rank == 0)
        printf("%s: %ld wrong ghost cells\n", all_bad == 0 ? "PASS" : "FAIL", all_bad);
    for (int d = 0; d < 27; d++)
        if (d != 13) {
            MPI_Type_free(&send_t[d]);
            MPI_Type_free(&recv_t[d]);
        }
    free(grid);
    free(rgrid);
    if (device) {
        dev_free(dgrid);
        if (two)
            dev_free(drgrid);
        if (mode == EX_PACK) {
            pinned_free(sbuf);
            pinned_free(rbuf);
        }
    } else {
        free(sbuf);
        free(rbuf);
    }
    free(scount);
    free(sdispl);
    free(rcount);
    free(rdispl);
    free(stypes);
    free(rtypes);
    free(nto);
    free(to);
    free(from);
    if (graph != MPI_COMM_NULL)
        MPI_Comm_free(&graph);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return (all_bad == 0 && all_padding == 0) || rank != 0 ? 0 : 1;
}
