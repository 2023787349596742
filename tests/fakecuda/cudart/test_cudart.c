/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime stand-in's own test: a program of the runtime API, built against the toolkit's
 * libcudart (or CUDA 12's), run with the stand-in and the test driver first on the library path.
 * Each family of calls: versions, errors and the last error, devices and their properties,
 * threads, device, managed, pinned and registered memory, copies of every kind and memsets,
 * pitched and 3-D memory with its copies and memsets,
 * streams (the legacy and per-thread default ones too) and events, cudaPointerGetAttributes on
 * each kind of memory, the stream-ordered allocator and pools, device memory opened by another
 * process through an IPC handle (a second copy of this test, "ipc FD"), cudaDeviceReset.
 * Calls whose driver entry point the test driver lacks must fail with cudaErrorNotSupported.
 *
 *   test_cudart              everything above (FAKECUDA_DEVICES=2 FAKECUDA_SM=90,80)
 *   test_cudart launch       a registered kernel's launch refused, with one line on stderr; a
 *                            function the stand-in does not emulate, and a 3-D copy of a CUDA
 *                            array: cudaErrorNotSupported, one line each
 *   test_cudart sticky       a sticky error (FAKECUDA_FAIL=cuMemsetD8_v2:1=700): every call
 *                            returns it, neither cudaGetLastError nor cudaDeviceReset clears it
 *   test_cudart old-driver   on a driver older than the runtime: cudaErrorInsufficientDriver */
#include <cuda.h>
#include <cuda_runtime.h> /* make_cudaExtent, make_cudaPitchedPtr, make_cudaPos */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "../child.h"

/* What nvcc's host code and programs built for per-thread default streams call; the headers
 * declare them only for C++ or under other macros. */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                            const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bDim, dim3 *gDim, int *wSize);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                       void *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                   struct cudaExtent extent, cudaStream_t stream);

#define RT(_call) CHECK_EQ_INT((_call), cudaSuccess)

/* The test driver, asked what it has (calls it lacks make the runtime's fail). */
static void *libcuda;

static bool driver_has(const char *symbol)
{
    return dlsym(libcuda, symbol) != NULL;
}

/* cudaSuccess where the driver has @p symbol, else cudaErrorNotSupported. */
static cudaError_t expected(const char *symbol)
{
    return driver_has(symbol) ? cudaSuccess : cudaErrorNotSupported;
}

static CUdevice driver_device(void)
{
    CUresult (*get_device)(CUdevice *) = (CUresult(*)(CUdevice *))dlsym(libcuda, "cuCtxGetDevice");
    CUdevice dev = -1;
    REQUIRE(get_device != NULL && get_device(&dev) == CUDA_SUCCESS);
    return dev;
}

static void check_versions(void)
{
    int v = 0;
    RT(cudaRuntimeGetVersion(&v));
    CHECK_EQ_INT(v, CUDART_VERSION);
    RT(cudaDriverGetVersion(&v));
    CHECK_EQ_INT(v, 13000);
    CHECK_EQ_INT(cudaRuntimeGetVersion(NULL), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);
}

static void check_errors(void)
{
    CHECK(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0);
    CHECK(strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
    CHECK(strcmp(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory") == 0);
    CHECK(strcmp(cudaGetErrorName((cudaError_t)12345), "unrecognized error code") == 0);
    CHECK(strcmp(cudaGetErrorString((cudaError_t)12345), "unrecognized error code") == 0);
    /* The last error: set by a failed call, kept by a successful one, read by Peek, cleared by
     * Get. */
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
    CHECK_EQ_INT(cudaSetDevice(99), cudaErrorInvalidDevice);
    RT(cudaSetDevice(0));
    CHECK_EQ_INT(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_EQ_INT(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
}

static void *other_thread(void *arg)
{
    int dev = -1;
    void *p = NULL;
    struct cudaPointerAttributes a;
    (void)arg;
    /* A new thread starts on device 0 and has its own last error. */
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
    RT(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 0);
    RT(cudaMalloc(&p, 64));
    RT(cudaPointerGetAttributes(&a, p));
    CHECK_EQ_INT(a.device, 0);
    CHECK_EQ_INT(driver_device(), 0);
    /* Its own per-thread default stream, which goes when the thread does. */
    RT(cudaMemsetAsync(p, 0, 64, cudaStreamPerThread));
    RT(cudaStreamSynchronize(cudaStreamPerThread));
    RT(cudaFree(p));
    CHECK_EQ_INT(cudaSetDevice(-1), cudaErrorInvalidDevice);
    return NULL;
}

static void check_devices(void)
{
    struct cudaDeviceProp prop;
    int n = 0, dev = -1, value = 0;
    pthread_t t;

    RT(cudaGetDeviceCount(&n));
    CHECK_EQ_INT(n, 2);
    RT(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 0);
    /* cudaFree(0) makes the primary context current; cudaSetDevice binds another one. */
    RT(cudaFree(NULL));
    CHECK_EQ_INT(driver_device(), 0);
    RT(cudaSetDevice(1));
    RT(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 1);
    CHECK_EQ_INT(driver_device(), 1);
    REQUIRE(pthread_create(&t, NULL, other_thread, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
    RT(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 1);
    /* cudaInitDevice initialises a device without making it current. */
    RT(cudaInitDevice(0, 0, 0));
    RT(cudaGetDevice(&dev));
    CHECK_EQ_INT(dev, 1);
    CHECK_EQ_INT(cudaInitDevice(2, 0, 0), cudaErrorInvalidDevice);

    RT(cudaGetDeviceProperties(&prop, 0));
    CHECK(strcmp(prop.name, "fakecuda sm_90") == 0);
    CHECK_EQ_INT(prop.major, 9);
    CHECK_EQ_INT(prop.minor, 0);
    CHECK_EQ_INT(prop.totalGlobalMem, 16ull << 30);
    CHECK_EQ_INT(prop.warpSize, 32);
    CHECK_EQ_INT(prop.maxThreadsPerBlock, 1024);
    CHECK_EQ_INT(prop.maxThreadsDim[2], 64);
    CHECK_EQ_INT(prop.maxGridSize[1], 65535);
    CHECK_EQ_INT(prop.sharedMemPerBlock, 48 * 1024);
    CHECK_EQ_INT(prop.unifiedAddressing, 1);
    CHECK_EQ_INT(prop.managedMemory, 1);
    CHECK_EQ_INT(prop.canMapHostMemory, 1);
    CHECK_EQ_INT(prop.pciBusID, 1);
    CHECK_EQ_INT(prop.texturePitchAlignment, 32);
    CHECK_EQ_INT(prop.memPitch, 2147483647);
    RT(cudaGetDeviceProperties(&prop, 1));
    CHECK_EQ_INT(prop.major, 8);
    CHECK_EQ_INT(prop.pciBusID, 2);
    CHECK_EQ_INT(cudaGetDeviceProperties(&prop, 2), cudaErrorInvalidDevice);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 1));
    CHECK_EQ_INT(value, 8);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrUnifiedAddressing, 0));
    CHECK_EQ_INT(value, 1);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrTexturePitchAlignment, 1));
    CHECK_EQ_INT(value, 32);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrMaxPitch, 1));
    CHECK_EQ_INT(value, 2147483647);
    CHECK_EQ_INT(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 5), cudaErrorInvalidDevice);
    RT(cudaDeviceSynchronize());
    RT(cudaSetDevice(0));
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidDevice);
}

/* Each kind of memory as cudaPointerGetAttributes sees it. */
static void check_attributes(const void *p, enum cudaMemoryType type, int device, const void *dptr,
                             const void *hptr)
{
    struct cudaPointerAttributes a;
    memset(&a, 0x5a, sizeof a);
    RT(cudaPointerGetAttributes(&a, p));
    CHECK_EQ_INT(a.type, type);
    CHECK_EQ_INT(a.device, device);
    CHECK(a.devicePointer == dptr);
    CHECK(a.hostPointer == hptr);
}

static void check_memory(void)
{
    enum { N = 4096 };
    unsigned char *h = malloc(N), *back = malloc(N), stack_byte = 0;
    void *d = NULL, *d2 = NULL, *pinned = NULL, *mapped = NULL, *dp = NULL;
    char *m = NULL;
    size_t free_bytes = 0, total = 0;

    REQUIRE(h && back);
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 7 + 1);
    /* Device memory: copies of every kind. */
    RT(cudaMalloc(&d, N));
    RT(cudaMalloc(&d2, N));
    check_attributes(d, cudaMemoryTypeDevice, 0, d, NULL);
    check_attributes((char *)d + 100, cudaMemoryTypeDevice, 0, (char *)d + 100, NULL);
    RT(cudaMemcpy(d, h, N, cudaMemcpyHostToDevice));
    RT(cudaMemcpy(d2, d, N, cudaMemcpyDeviceToDevice));
    memset(back, 0, N);
    RT(cudaMemcpy(back, d2, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, h, N) == 0);
    RT(cudaMemcpy(d2, h + 1, N - 1, cudaMemcpyDefault));
    memset(back, 0, N);
    RT(cudaMemcpy(back, d2, N - 1, cudaMemcpyDefault));
    CHECK(memcmp(back, h + 1, N - 1) == 0);
    memset(back, 0, N);
    RT(cudaMemcpy(back, h, N, cudaMemcpyHostToHost));
    CHECK(memcmp(back, h, N) == 0);
    CHECK_EQ_INT(cudaMemcpy(back, d, N, cudaMemcpyHostToHost), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMemcpy(back, d, N, (enum cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
    /* memsets, 1-D and 2-D (rows of 100 bytes 256 apart), and a 2-D copy. */
    RT(cudaMemset(d, 0xab, N));
    RT(cudaMemset2D(d, 256, 0x11, 100, 4));
    RT(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        if (back[i] != (i < 4 * 256 && i % 256 < 100 ? 0x11 : 0xab)) {
            CHECK(!"memset bytes");
            break;
        }
    CHECK_EQ_INT(cudaMemset2D(d, 50, 0, 100, 4), cudaErrorInvalidPitchValue);
    RT(cudaMemcpy2D(d2, 64, h, 128, 32, 8, cudaMemcpyHostToDevice));
    RT(cudaMemcpy2D(back, 32, d2, 64, 32, 8, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 8; r++)
        CHECK(memcmp(back + r * 32, h + r * 128, 32) == 0);
    /* 0 bytes: no memory; freeing NULL: nothing; a bad pointer or a second free: an error. */
    dp = h;
    RT(cudaMalloc(&dp, 0));
    CHECK(dp == NULL);
    RT(cudaFree(NULL));
    CHECK_EQ_INT(cudaFree(h), cudaErrorInvalidValue);
    RT(cudaFree(d2));
    CHECK_EQ_INT(cudaFree(d2), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);

    /* Managed memory: the host reads and writes it; advice and prefetches. */
    RT(cudaMallocManaged((void **)&m, N, cudaMemAttachGlobal));
    check_attributes(m, cudaMemoryTypeManaged, 0, m, m);
    memset(m, 3, N);
    RT(cudaMemcpy(back, m, N, cudaMemcpyDefault));
    CHECK(back[N - 1] == 3);
    CHECK_EQ_INT(cudaMallocManaged(&dp, 0, cudaMemAttachGlobal), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMallocManaged(&dp, 16, 4), cudaErrorInvalidValue);
#if CUDART_VERSION >= 13000
    {
        struct cudaMemLocation dev0 = {cudaMemLocationTypeDevice, 0};
        CHECK_EQ_INT(cudaMemAdvise(m, N, cudaMemAdviseSetPreferredLocation, dev0),
                     expected("cuMemAdvise_v2"));
        CHECK_EQ_INT(cudaMemPrefetchAsync(m, N, dev0, 0, NULL), expected("cuMemPrefetchAsync_v2"));
    }
#else
    CHECK_EQ_INT(cudaMemAdvise(m, N, cudaMemAdviseSetPreferredLocation, 0),
                 expected("cuMemAdvise_v2"));
    CHECK_EQ_INT(cudaMemPrefetchAsync(m, N, 0, NULL), expected("cuMemPrefetchAsync_v2"));
#endif
    RT(cudaDeviceSynchronize());
    RT(cudaFree(m));

    /* Pinned memory: mapped at the same address; write-combined too. */
    RT(cudaMallocHost(&pinned, N));
    check_attributes(pinned, cudaMemoryTypeHost, 0, pinned, pinned);
    RT(cudaHostAlloc(&mapped, N, cudaHostAllocWriteCombined));
    check_attributes(mapped, cudaMemoryTypeHost, 0, mapped, mapped);
    RT(cudaHostGetDevicePointer(&dp, mapped, 0));
    CHECK(dp == mapped);
    CHECK_EQ_INT(cudaHostGetDevicePointer(&dp, mapped, 1), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaHostAlloc(&dp, N, 0x40), cudaErrorInvalidValue);
    memcpy(pinned, h, N);
    RT(cudaMemcpy(d, pinned, N, cudaMemcpyHostToDevice));
    RT(cudaMemcpy(mapped, d, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(mapped, h, N) == 0);
    RT(cudaFreeHost(pinned));
    RT(cudaFreeHost(mapped));
    CHECK_EQ_INT(cudaFreeHost(h), cudaErrorInvalidValue);

    /* Registered memory, then unregistered memory (the heap and the stack). */
    RT(cudaHostRegister(back, N, cudaHostRegisterDefault));
    check_attributes(back + 10, cudaMemoryTypeHost, 0, back + 10, back + 10);
    CHECK_EQ_INT(cudaHostRegister(back, N, 0), cudaErrorHostMemoryAlreadyRegistered);
    RT(cudaHostUnregister(back));
    CHECK_EQ_INT(cudaHostUnregister(back), cudaErrorHostMemoryNotRegistered);
    check_attributes(back, cudaMemoryTypeUnregistered, cudaInvalidDeviceId, NULL, back);
    check_attributes(&stack_byte, cudaMemoryTypeUnregistered, cudaInvalidDeviceId, NULL,
                     &stack_byte);
    CHECK_EQ_INT(cudaPointerGetAttributes(NULL, back), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);

    CHECK_EQ_INT(cudaMemGetInfo(&free_bytes, &total), expected("cuMemGetInfo_v2"));
    if (driver_has("cuMemGetInfo_v2"))
        CHECK(total == 16ull << 30 && free_bytes <= total);
    cudaGetLastError();
    RT(cudaFree(d));
    free(h);
    free(back);
}

/* A pitched pointer of @p g's memory moved by @p x bytes, @p y rows and @p z slices. */
static struct cudaPitchedPtr moved(struct cudaPitchedPtr g, size_t x, size_t y, size_t z)
{
    g.ptr = (char *)g.ptr + (z * g.ysize + y) * g.pitch + x;
    return g;
}

/* Every byte of the D slices of @p g (padding too) against @p want, read with one 3-D copy. */
static void check_grid(struct cudaPitchedPtr g, size_t depth, const unsigned char *want,
                       const char *what)
{
    size_t n = g.pitch * g.ysize * depth, bad = 0;
    unsigned char *back = malloc(n);
    struct cudaMemcpy3DParms c;

    REQUIRE(back != NULL);
    memset(back, 0, n);
    memset(&c, 0, sizeof c);
    c.srcPtr = g;
    c.dstPtr = make_cudaPitchedPtr(back, g.pitch, g.pitch, g.ysize);
    c.extent = make_cudaExtent(g.pitch, g.ysize, depth);
    c.kind = cudaMemcpyDeviceToHost;
    RT(cudaMemcpy3D(&c));
    for (size_t i = 0; i < n; i++)
        bad += back[i] != want[i];
    if (bad != 0)
        fprintf(stderr, "%s: %zu wrong bytes\n", what, bad);
    CHECK(bad == 0);
    free(back);
}

/* What @p want holds after setting a box of @p g's layout (x, y, z its corner, w bytes, h rows,
 * d slices) to @p v. */
static void model_set(unsigned char *want, struct cudaPitchedPtr g, size_t x, size_t y, size_t z,
                      size_t w, size_t h, size_t d, unsigned char v)
{
    for (size_t k = z; k < z + d; k++)
        for (size_t j = y; j < y + h; j++)
            memset(want + (k * g.ysize + j) * g.pitch + x, v, w);
}

/* Pitched and 3-D memory: cudaMallocPitch and cudaMalloc3D (the pitch a multiple of the texture
 * pitch alignment: 512 bytes, as the real runtime's; the padding device memory host code cannot
 * touch), cudaMemcpy3D and cudaMemcpy2D between host and pitched memory, device to device, with
 * positions in bytes, every cudaMemcpyKind, on a stream; cudaMemset3D of sub-boxes, slice by
 * slice and in one; every byte of the allocation checked after each; and the documented errors. */
static void check_pitched(void)
{
    enum { W = 40, H = 5, D = 4 };
    struct cudaPitchedPtr g, g2, z;
    struct cudaMemcpy3DParms c;
    unsigned char grid[D][H][W], *want, *want2, box[3][4][16], hbox[3][4][16];
    void *p = NULL, *q = &p;
    size_t pitch = 0, n;
    int align = 0;
    cudaStream_t s = NULL;

    for (int k = 0; k < D; k++)
        for (int j = 0; j < H; j++)
            for (int i = 0; i < W; i++)
                grid[k][j][i] = (unsigned char)(1 + i + 7 * j + 31 * k);
    RT(cudaDeviceGetAttribute(&align, cudaDevAttrTexturePitchAlignment, 0));
    RT(cudaStreamCreate(&s));

    /* cudaMallocPitch: rows of 512 bytes; the padding is device memory. */
    RT(cudaMallocPitch(&p, &pitch, 100, 3));
    CHECK_EQ_INT(pitch, 512);
    CHECK(pitch % (size_t)align == 0);
    check_attributes((char *)p + 2 * pitch + 300, cudaMemoryTypeDevice, 0,
                     (char *)p + 2 * pitch + 300, NULL);
    CHECK(child_touch_faults((char *)p + 100, false));
    {
        unsigned char rows[3][100], rows_back[3][100];
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 100; i++)
                rows[j][i] = (unsigned char)(i ^ (j << 5));
        RT(cudaMemset2D(p, pitch, 0x33, pitch, 3));
        RT(cudaMemcpy2D(p, pitch, rows, 100, 100, 3, cudaMemcpyHostToDevice));
        RT(cudaMemset2D((char *)p + pitch + 10, pitch, 0x44, 20, 2));
        memset(rows_back, 0, sizeof rows_back);
        RT(cudaMemcpy2D(rows_back, 100, p, pitch, 100, 3, cudaMemcpyDefault));
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 100; i++)
                CHECK(rows_back[j][i] == (j >= 1 && i >= 10 && i < 30 ? 0x44 : rows[j][i]));
        RT(cudaMemcpy2D(rows_back, 100, (char *)p + 100, pitch, 4, 3, cudaMemcpyDeviceToHost));
        CHECK(rows_back[2][3] == 0x33); /* the padding holds what it was set to */
        /* A pitch below the width, or above cudaDevAttrMaxPitch. */
        CHECK_EQ_INT(cudaMemcpy2D(p, 99, rows, 100, 100, 3, cudaMemcpyHostToDevice),
                     cudaErrorInvalidPitchValue);
        CHECK_EQ_INT(cudaMemcpy2D(p, (size_t)1 << 31, rows, 100, 100, 1, cudaMemcpyHostToDevice),
                     cudaErrorInvalidPitchValue);
    }
    RT(cudaFree(p));
    /* 0 bytes: no memory; NULL outputs are invalid. */
    p = q;
    RT(cudaMallocPitch(&p, &pitch, 0, 8));
    CHECK(p == NULL && pitch == 0);
    CHECK_EQ_INT(cudaMallocPitch(NULL, &pitch, 8, 8), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMallocPitch(&p, NULL, 8, 8), cudaErrorInvalidValue);
    RT(cudaMalloc3D(&z, make_cudaExtent(16, 4, 0)));
    CHECK(z.ptr == NULL && z.pitch == 0 && z.xsize == 16 && z.ysize == 4);
    CHECK_EQ_INT(cudaMalloc3D(NULL, make_cudaExtent(16, 4, 4)), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMalloc3D(&z, make_cudaExtent(16, SIZE_MAX, 2)), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);

    /* cudaMalloc3D: every byte set, the grid copied in from the host, read back. */
    RT(cudaMalloc3D(&g, make_cudaExtent(W, H, D)));
    CHECK(g.ptr != NULL && g.pitch == 512 && g.xsize == W && g.ysize == H);
    CHECK(child_touch_faults((char *)g.ptr + W, false));
    n = g.pitch * H * D;
    REQUIRE((want = malloc(n)) != NULL);
    RT(cudaMemset3D(g, 0x5a, make_cudaExtent(g.pitch, H, D)));
    memset(want, 0x5a, n);
    check_grid(g, D, want, "cudaMemset3D of the whole allocation");
    memset(&c, 0, sizeof c);
    c.srcPtr = make_cudaPitchedPtr(grid, W, W, H);
    c.dstPtr = g;
    c.extent = make_cudaExtent(W, H, D);
    c.kind = cudaMemcpyHostToDevice;
    RT(cudaMemcpy3D(&c));
    for (size_t k = 0; k < D; k++)
        for (size_t j = 0; j < H; j++)
            memcpy(want + (k * H + j) * g.pitch, grid[k][j], W);
    check_grid(g, D, want, "cudaMemcpy3D from the host");

    /* cudaMemset3D of a box of 3 rows of 5 slices' 4: one memset per slice (ysize 5 > 3). */
    RT(cudaMemset3D(moved(g, 7, 1, 1), 0xc3, make_cudaExtent(11, 3, 2)));
    model_set(want, g, 7, 1, 1, 11, 3, 2, 0xc3);
    check_grid(g, D, want, "cudaMemset3D of a sub-box");
    /* Full-height slices, on a stream (per-thread form too): one 2-D memset. */
    RT(cudaMemset3DAsync(moved(g, 30, 0, 2), 0x17, make_cudaExtent(3, H, 2), s));
    RT(cudaStreamSynchronize(s));
    model_set(want, g, 30, 0, 2, 3, H, 2, 0x17);
    RT(cudaMemset3DAsync_ptsz(moved(g, 0, 4, 0), 0x29, make_cudaExtent(2, 1, 1),
                              cudaStreamPerThread));
    RT(cudaStreamSynchronize(cudaStreamPerThread));
    model_set(want, g, 0, 4, 0, 2, 1, 1, 0x29);
    check_grid(g, D, want, "cudaMemset3DAsync");

    /* A box at (3, 1, 1) out to the host at (2, 1, 0) of a poisoned buffer, cudaMemcpyDefault;
     * and host to host. */
    memset(box, 0xff, sizeof box);
    memset(&c, 0, sizeof c);
    c.srcPtr = g;
    c.srcPos = make_cudaPos(3, 1, 1);
    c.dstPtr = make_cudaPitchedPtr(box, 16, 16, 4);
    c.dstPos = make_cudaPos(2, 1, 0);
    c.extent = make_cudaExtent(10, 3, 2);
    c.kind = cudaMemcpyDefault;
    RT(cudaMemcpy3D(&c));
    for (size_t k = 0; k < 3; k++)
        for (size_t j = 0; j < 4; j++)
            for (size_t i = 0; i < 16; i++) {
                bool in = k < 2 && j >= 1 && j < 4 && i >= 2 && i < 12;
                CHECK(box[k][j][i] ==
                      (in ? want[((k + 1) * H + j) * g.pitch + i + 1] : (unsigned char)0xff));
            }
    memset(hbox, 0, sizeof hbox);
    c.srcPtr = c.dstPtr;
    c.srcPos = c.dstPos;
    c.dstPtr = make_cudaPitchedPtr(hbox, 16, 16, 4);
    c.kind = cudaMemcpyHostToHost;
    RT(cudaMemcpy3D_ptds(&c));
    for (size_t k = 0; k < 2; k++)
        for (size_t j = 1; j < 4; j++)
            CHECK(memcmp(&hbox[k][j][2], &box[k][j][2], 10) == 0);
    c.srcPtr = g;
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidValue); /* device memory, host to host */

    /* Device to device on a stream into a grid of 6-row slices, set to 0 first. */
    RT(cudaMalloc3D(&g2, make_cudaExtent(W, H + 1, D)));
    RT(cudaMemset3DAsync(g2, 0, make_cudaExtent(g2.pitch, H + 1, D), s));
    memset(&c, 0, sizeof c);
    c.srcPtr = g;
    c.dstPtr = g2;
    c.dstPos = make_cudaPos(0, 1, 0);
    c.extent = make_cudaExtent(W, H, D);
    c.kind = cudaMemcpyDeviceToDevice;
    RT(cudaMemcpy3DAsync(&c, s));
    RT(cudaStreamSynchronize(s));
    REQUIRE((want2 = calloc(g2.pitch * (H + 1), D)) != NULL);
    for (size_t k = 0; k < D; k++)
        for (size_t j = 0; j < H; j++)
            memcpy(want2 + (k * (H + 1) + j + 1) * g2.pitch, want + (k * H + j) * g.pitch, W);
    check_grid(g2, D, want2, "cudaMemcpy3DAsync device to device");

    /* The documented errors; none of them writes a byte. */
    CHECK_EQ_INT(cudaMemcpy3D(NULL), cudaErrorInvalidValue);
    c.srcArray = (cudaArray_t)(uintptr_t)1; /* a source twice */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidValue);
    c.srcArray = NULL;
    c.dstPtr.ptr = NULL; /* no destination */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidValue);
    c.dstPtr = g2;
    c.kind = (enum cudaMemcpyKind)7;
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidMemcpyDirection);
    c.kind = cudaMemcpyDeviceToDevice;
    c.dstPos.x = g2.pitch - W + 1; /* past the pitch */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidPitchValue);
    c.dstPos.x = 0;
    c.srcPtr.pitch = W - 1;
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidPitchValue);
    c.srcPtr.pitch = (size_t)1 << 31; /* above cudaDevAttrMaxPitch */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidPitchValue);
    c.srcPtr = g;
    c.srcPos.y = 1; /* slices too short for the rows */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidValue);
    c.srcPos.y = 0;
    c.srcPos.z = 1; /* past the allocation */
    CHECK_EQ_INT(cudaMemcpy3DAsync(&c, s), cudaErrorInvalidValue);
    c.srcPos.z = 0;
    c.kind = cudaMemcpyHostToDevice; /* the source is no host memory */
    CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorInvalidValue);
    c.extent.depth = 0; /* nothing to copy */
    RT(cudaMemcpy3D(&c));
    CHECK_EQ_INT(cudaMemset3D(g, 1, make_cudaExtent(g.pitch + 1, 2, 1)), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMemset3D(g, 1, make_cudaExtent(W, H + 1, 2)), cudaErrorInvalidValue);
    CHECK_EQ_INT(cudaMemset3D(moved(g, 0, 0, 2), 1, make_cudaExtent(W, 2, 3)),
                 cudaErrorInvalidValue); /* its last slice past the allocation */
    CHECK_EQ_INT(cudaMemset3D(make_cudaPitchedPtr(grid, W, W, H), 1, make_cudaExtent(W, 2, 2)),
                 cudaErrorInvalidValue); /* host memory */
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);
    {
        /* One row: the pitch is not looked at. */
        struct cudaPitchedPtr row = g;
        row.pitch = 0;
        RT(cudaMemset3D(row, 0x61, make_cudaExtent(4, 1, 1)));
        model_set(want, g, 0, 0, 0, 4, 1, 1, 0x61);
    }
    check_grid(g, D, want, "after the refused calls");
    check_grid(g2, D, want2, "after the refused calls");

    RT(cudaStreamDestroy(s));
    RT(cudaFree(g.ptr));
    RT(cudaFree(g2.ptr));
    free(want);
    free(want2);
}

static void check_streams(void)
{
    enum { N = 1 << 16 };
    unsigned char *h, *back;
    void *d = NULL;
    cudaStream_t s = NULL, s2 = NULL;
    cudaEvent_t start = NULL, stop = NULL, untimed = NULL;
    unsigned int flags = 9;
    float ms = -1;

    RT(cudaMallocHost((void **)&h, N));
    RT(cudaMallocHost((void **)&back, N));
    RT(cudaMalloc(&d, N));
    memset(h, 0x42, N);
    RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    RT(cudaStreamCreate(&s2));
    CHECK_EQ_INT(cudaStreamGetFlags(s, &flags), expected("cuStreamGetFlags"));
    CHECK_EQ_INT(flags, driver_has("cuStreamGetFlags") ? cudaStreamNonBlocking : 9);
    RT(cudaStreamGetFlags(cudaStreamPerThread, &flags));
    CHECK_EQ_INT(flags, cudaStreamDefault);
    CHECK_EQ_INT(cudaStreamCreateWithFlags(&s2, 4), cudaErrorInvalidValue);
    RT(cudaEventCreate(&start));
    RT(cudaEventCreate(&stop));
    RT(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
    CHECK_EQ_INT(cudaEventCreateWithFlags(&untimed, 0x80), cudaErrorInvalidValue);
    cudaGetLastError();
    /* Work queued on a stream is done only once the host waits: a query first says not ready,
     * which is no error. */
    RT(cudaEventRecord(start, s));
    RT(cudaMemcpyAsync(d, h, N, cudaMemcpyHostToDevice, s));
    RT(cudaMemsetAsync(d, 0x17, 16, s));
    RT(cudaEventRecord(stop, s));
    CHECK_EQ_INT(cudaStreamQuery(s), cudaErrorNotReady);
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
    RT(cudaStreamWaitEvent(s2, stop, 0));
    RT(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, s2));
    RT(cudaStreamSynchronize(s2));
    CHECK(back[0] == 0x17 && back[15] == 0x17 && back[16] == 0x42 && back[N - 1] == 0x42);
    RT(cudaEventSynchronize(stop));
    RT(cudaEventQuery(stop));
    RT(cudaEventElapsedTime(&ms, start, stop));
    CHECK(ms >= 0);
    RT(cudaEventRecord(untimed, s));
    RT(cudaEventSynchronize(untimed));
    CHECK_EQ_INT(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
    CHECK_EQ_INT(cudaStreamWaitEvent(s, stop, 0x10), cudaErrorInvalidValue);
    cudaGetLastError();

    /* The default streams as handles: the legacy one, and the per-thread one by handle and by
     * the entry points of programs built with --default-stream per-thread. */
    RT(cudaMemsetAsync(d, 0x21, N, cudaStreamLegacy));
    RT(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, cudaStreamLegacy));
    RT(cudaStreamSynchronize(cudaStreamLegacy));
    CHECK(back[0] == 0x21 && back[N - 1] == 0x21);
    RT(cudaMemsetAsync(d, 0x22, N, cudaStreamPerThread));
    RT(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, cudaStreamPerThread));
    RT(cudaStreamSynchronize(cudaStreamPerThread));
    CHECK(back[0] == 0x22 && back[N - 1] == 0x22);
    RT(cudaMemsetAsync_ptsz(d, 0x23, N, NULL));
    RT(cudaStreamSynchronize_ptsz(NULL));
    RT(cudaMemcpy_ptds(back, d, N, cudaMemcpyDeviceToHost));
    CHECK(back[0] == 0x23 && back[N - 1] == 0x23);
    CHECK_EQ_INT(cudaStreamDestroy(cudaStreamPerThread), cudaErrorInvalidResourceHandle);
    CHECK_EQ_INT(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    {
        cudaStream_t prio = NULL;
        CHECK_EQ_INT(cudaStreamCreateWithPriority(&prio, cudaStreamDefault, 0),
                     expected("cuStreamCreateWithPriority"));
        if (prio != NULL)
            RT(cudaStreamDestroy(prio));
        cudaGetLastError();
    }
    RT(cudaEventDestroy(start));
    RT(cudaEventDestroy(stop));
    RT(cudaEventDestroy(untimed));
    RT(cudaStreamDestroy(s));
    RT(cudaStreamDestroy(s2));
    CHECK_EQ_INT(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    RT(cudaFree(d));
    RT(cudaFreeHost(h));
    RT(cudaFreeHost(back));
}

/* The stream-ordered allocator and pools; cudaErrorNotSupported where the driver has none. */
static void check_pools(void)
{
    enum { N = 8192 };
    cudaError_t want = expected("cuMemAllocAsync");
    unsigned char *h = malloc(N), *back = malloc(N);
    cudaMemPool_t def = NULL, cur = NULL, mine = NULL;
    struct cudaMemPoolProps props;
    struct cudaMemAccessDesc access;
    cudaStream_t s = NULL;
    void *p = NULL, *q = NULL;

    REQUIRE(h && back);
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 5 + 3);
    RT(cudaStreamCreate(&s));
    CHECK_EQ_INT(cudaMallocAsync(&p, N, s), want);
    if (want != cudaSuccess) {
        CHECK_EQ_INT(cudaGetLastError(), cudaErrorNotSupported);
        CHECK_EQ_INT(cudaDeviceGetDefaultMemPool(&def, 0), expected("cuDeviceGetDefaultMemPool"));
        cudaGetLastError();
        RT(cudaStreamDestroy(s));
        free(h);
        free(back);
        return;
    }
    check_attributes(p, cudaMemoryTypeDevice, 0, p, NULL);
    RT(cudaMemcpyAsync(p, h, N, cudaMemcpyHostToDevice, s));
    RT(cudaMemcpyAsync(back, p, N, cudaMemcpyDeviceToHost, s));
    RT(cudaFreeAsync(p, s));
    RT(cudaStreamSynchronize(s));
    CHECK(memcmp(back, h, N) == 0);

    RT(cudaDeviceGetDefaultMemPool(&def, 0));
    RT(cudaDeviceGetMemPool(&cur, 0));
    CHECK(def != NULL && cur == def);
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 1;
    RT(cudaMemPoolCreate(&mine, &props));
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = 1;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    RT(cudaMemPoolSetAccess(mine, &access, 1));
    /* A pool of device 1 while device 0 is current. */
    RT(cudaMallocFromPoolAsync(&q, N, mine, NULL));
    RT(cudaStreamSynchronize(NULL));
    /* Device 0 has no access to it: no device pointer there; device 1 has one. */
    check_attributes(q, cudaMemoryTypeDevice, 1, NULL, NULL);
    RT(cudaSetDevice(1));
    check_attributes(q, cudaMemoryTypeDevice, 1, q, NULL);
    RT(cudaSetDevice(0));
    RT(cudaFreeAsync(q, NULL));
    RT(cudaDeviceSynchronize());
    CHECK_EQ_INT(cudaMallocFromPoolAsync(&q, N, NULL, NULL), cudaErrorInvalidValue);
    cudaGetLastError();
    /* cudaFree of pool memory frees it without waiting. */
    RT(cudaMallocAsync(&p, N, NULL));
    RT(cudaStreamSynchronize(NULL));
    RT(cudaFree(p));
    RT(cudaMemPoolDestroy(mine));
    RT(cudaStreamDestroy(s));
    free(h);
    free(back);
}

/* The child of check_ipc (test_cudart ipc FD): opens the handle read from FD, checks the parent's
 * bytes, writes its own and closes the handle. */
static int ipc_child(const char *fd_text)
{
    cudaIpcMemHandle_t handle;
    unsigned char back[4096], mine[4096];
    void *p = NULL;
    int fd = atoi(fd_text);

    REQUIRE(read(fd, &handle, sizeof handle) == (ssize_t)sizeof handle);
    CHECK_EQ_INT(cudaIpcOpenMemHandle(&p, handle, 0), cudaErrorInvalidValue);
    RT(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess));
    check_attributes(p, cudaMemoryTypeDevice, 0, p, NULL);
    RT(cudaMemcpy(back, p, sizeof back, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < sizeof back; i++)
        if (back[i] != (unsigned char)(i * 3)) {
            CHECK(!"the exporter's bytes");
            break;
        }
    memset(mine, 0x5c, sizeof mine);
    RT(cudaMemcpy(p, mine, sizeof mine, cudaMemcpyHostToDevice));
    RT(cudaIpcCloseMemHandle(p));
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_DONE();
}

/* Device memory shared with another process through an IPC handle (a second copy of this test). */
static void check_ipc(void)
{
    cudaIpcMemHandle_t handle;
    unsigned char pattern[4096], back[4096];
    void *d = NULL;

    RT(cudaMalloc(&d, sizeof pattern));
    CHECK_EQ_INT(cudaIpcGetMemHandle(&handle, d), expected("cuIpcGetMemHandle"));
    CHECK_EQ_INT(cudaIpcGetMemHandle(NULL, d), cudaErrorInvalidValue);
    cudaGetLastError();
    if (driver_has("cuIpcGetMemHandle") && driver_has("cuIpcOpenMemHandle_v2")) {
        for (size_t i = 0; i < sizeof pattern; i++)
            pattern[i] = (unsigned char)(i * 3);
        RT(cudaMemcpy(d, pattern, sizeof pattern, cudaMemcpyHostToDevice));
        CHECK(child_succeeded(
            child_run_piped("/proc/self/exe", "test_cudart", "ipc", &handle, sizeof handle)));
        RT(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));
        CHECK(back[0] == 0x5c && back[sizeof back - 1] == 0x5c);
    }
    RT(cudaFree(d));
}

/* cudaDeviceReset frees the device's memory; the device is usable at the next call. */
static void check_reset(void)
{
    void *d = NULL;
    struct cudaPointerAttributes a;
    RT(cudaMalloc(&d, 4096));
    RT(cudaMemsetAsync(d, 1, 4096, cudaStreamPerThread));
    RT(cudaDeviceReset());
    RT(cudaPointerGetAttributes(&a, d));
    CHECK_EQ_INT(a.type, cudaMemoryTypeUnregistered);
    RT(cudaMalloc(&d, 4096));
    RT(cudaMemsetAsync(d, 2, 4096, cudaStreamPerThread));
    RT(cudaStreamSynchronize(cudaStreamPerThread));
    RT(cudaFree(d));
    CHECK_EQ_INT(cudaGetLastError(), cudaSuccess);
}

static void kernel_stub(void) {}

static void not_a_kernel(void) {}

/* A program's own kernel: registered at start-up, refused at launch with one line on stderr. */
static int check_launch(void)
{
    static char image[64] = "not a fatbinary";
    dim3 grid = {2, 1, 1}, block = {32, 1, 1}, g, b;
    size_t shared = 1;
    cudaStream_t stream = (cudaStream_t)1;
    cudaKernel_t kernel = NULL;
    void **handle = __cudaRegisterFatBinary(image);

    __cudaRegisterFunction(handle, (const char *)(uintptr_t)kernel_stub, (char *)"_Z6kernelv",
                           "_Z6kernelv", -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
    /* <<<grid, block>>> as nvcc's code does it: push, pop, launch. */
    CHECK_EQ_INT(__cudaPushCallConfiguration(grid, block, 0, NULL), 0);
    RT(__cudaPopCallConfiguration(&g, &b, &shared, &stream));
    CHECK(g.x == 2 && b.x == 32 && shared == 0 && stream == NULL);
    CHECK_EQ_INT(__cudaPopCallConfiguration(&g, &b, &shared, &stream),
                 cudaErrorMissingConfiguration);
    CHECK_EQ_INT(cudaLaunchKernel((const void *)(uintptr_t)kernel_stub, grid, block, NULL, 0, NULL),
                 cudaErrorNotSupported);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorNotSupported);
    RT(__cudaGetKernel(&kernel, (const void *)(uintptr_t)kernel_stub));
    CHECK_EQ_INT(__cudaLaunchKernel(kernel, grid, block, NULL, 0, NULL), cudaErrorNotSupported);
    CHECK_EQ_INT(
        cudaLaunchKernel((const void *)(uintptr_t)not_a_kernel, grid, block, NULL, 0, NULL),
        cudaErrorInvalidDeviceFunction);
    CHECK_EQ_INT(__cudaGetKernel(&kernel, (const void *)(uintptr_t)not_a_kernel),
                 cudaErrorInvalidDeviceFunction);
    /* Not sticky: the device goes on. */
    RT(cudaDeviceSynchronize());
    cudaGetLastError();
    __cudaUnregisterFatBinary(handle);
    CHECK_EQ_INT(cudaLaunchKernel((const void *)(uintptr_t)kernel_stub, grid, block, NULL, 0, NULL),
                 cudaErrorInvalidDeviceFunction);
    /* A 3-D copy of a CUDA array, twice: cudaErrorNotSupported, one line. */
    {
        static char dst[64];
        struct cudaMemcpy3DParms c;
        memset(&c, 0, sizeof c);
        c.srcArray = (cudaArray_t)(uintptr_t)1;
        c.dstPtr = make_cudaPitchedPtr(dst, 8, 8, 8);
        c.extent = make_cudaExtent(8, 8, 1);
        c.kind = cudaMemcpyDeviceToHost;
        CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorNotSupported);
        CHECK_EQ_INT(cudaMemcpy3D(&c), cudaErrorNotSupported);
        CHECK_EQ_INT(cudaGetLastError(), cudaErrorNotSupported);
    }
    /* A function the stand-in does not emulate, twice: one line. */
    CHECK_EQ_INT(cudaDeviceSetLimit(cudaLimitStackSize, 4096), cudaErrorNotSupported);
    CHECK_EQ_INT(cudaDeviceSetLimit(cudaLimitStackSize, 4096), cudaErrorNotSupported);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorNotSupported);
    CHECK_DONE();
}

/* FAKECUDA_FAIL=cuMemsetD8_v2:1=700: the first memset poisons the context. */
static int check_sticky(void)
{
    void *d = NULL, *e = NULL;
    RT(cudaMalloc(&d, 4096));
    CHECK_EQ_INT(cudaMemset(d, 0, 4096), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaMalloc(&e, 4096), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaPeekAtLastError(), cudaErrorIllegalAddress);
    /* The process must end to use CUDA again: a reset does not bring the device back. */
    CHECK_EQ_INT(cudaDeviceReset(), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaMalloc(&e, 4096), cudaErrorIllegalAddress);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorIllegalAddress);
    CHECK_DONE();
}

/* On the 12.4 driver the CUDA 13 runtime cannot start; the driver's version is still told. */
static int check_old_driver(void)
{
    int n = -1, v = 0;
    void *d = NULL;
    CHECK_EQ_INT(cudaGetDeviceCount(&n), cudaErrorInsufficientDriver);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(cudaMalloc(&d, 64), cudaErrorInsufficientDriver);
    CHECK_EQ_INT(cudaGetLastError(), cudaErrorInsufficientDriver);
    RT(cudaDriverGetVersion(&v));
    CHECK_EQ_INT(v, 12040);
    CHECK_DONE();
}

int main(int argc, char **argv)
{
    libcuda = dlopen("libcuda.so.1", RTLD_NOW);
    REQUIRE(libcuda != NULL);
    if (argc > 1 && strcmp(argv[1], "launch") == 0)
        return check_launch();
    if (argc > 1 && strcmp(argv[1], "sticky") == 0)
        return check_sticky();
    if (argc > 1 && strcmp(argv[1], "old-driver") == 0)
        return check_old_driver();
    if (argc > 2 && strcmp(argv[1], "ipc") == 0)
        return ipc_child(argv[2]);
    REQUIRE(argc == 1);
    check_versions();
    check_errors();
    check_devices();
    check_memory();
    check_pitched();
    check_streams();
    check_pools();
    check_ipc();
    check_reset();
    CHECK_DONE();
}
