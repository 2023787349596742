/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime stand-in's own test: a program of the runtime API, built against the toolkit's
 * libcudart (or CUDA 12's), run with the stand-in and the test driver first on the library path.
 * Each family of calls: versions, errors and the last error, devices and their properties,
 * threads, device, managed, pinned and registered memory, copies of every kind and memsets,
 * streams (the legacy and per-thread default ones too) and events, cudaPointerGetAttributes on
 * each kind of memory, the stream-ordered allocator and pools, device memory opened by another
 * process through an IPC handle (a second copy of this test, "ipc FD"), cudaDeviceReset.
 * Calls whose driver entry point the test driver lacks must fail with cudaErrorNotSupported.
 *
 *   test_cudart              everything above (FAKECUDA_DEVICES=2 FAKECUDA_SM=90,80)
 *   test_cudart launch       a registered kernel's launch refused, with one line on stderr; a
 *                            function the stand-in does not emulate: cudaErrorNotSupported, one
 *                            line
 *   test_cudart sticky       a sticky error (FAKECUDA_FAIL=cuMemsetD8_v2:1=700): every call
 *                            returns it, neither cudaGetLastError nor cudaDeviceReset clears it
 *   test_cudart old-driver   on a driver older than the runtime: cudaErrorInsufficientDriver */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

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
    RT(cudaGetDeviceProperties(&prop, 1));
    CHECK_EQ_INT(prop.major, 8);
    CHECK_EQ_INT(prop.pciBusID, 2);
    CHECK_EQ_INT(cudaGetDeviceProperties(&prop, 2), cudaErrorInvalidDevice);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 1));
    CHECK_EQ_INT(value, 8);
    RT(cudaDeviceGetAttribute(&value, cudaDevAttrUnifiedAddressing, 0));
    CHECK_EQ_INT(value, 1);
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
    int fds[2], status = -1;
    pid_t child;
    char arg[16];

    RT(cudaMalloc(&d, sizeof pattern));
    CHECK_EQ_INT(cudaIpcGetMemHandle(&handle, d), expected("cuIpcGetMemHandle"));
    CHECK_EQ_INT(cudaIpcGetMemHandle(NULL, d), cudaErrorInvalidValue);
    cudaGetLastError();
    if (driver_has("cuIpcGetMemHandle") && driver_has("cuIpcOpenMemHandle_v2")) {
        for (size_t i = 0; i < sizeof pattern; i++)
            pattern[i] = (unsigned char)(i * 3);
        RT(cudaMemcpy(d, pattern, sizeof pattern, cudaMemcpyHostToDevice));
        REQUIRE(pipe(fds) == 0);
        snprintf(arg, sizeof arg, "%d", fds[0]);
        child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            close(fds[1]);
            execl("/proc/self/exe", "test_cudart", "ipc", arg, (char *)NULL);
            _exit(127);
        }
        close(fds[0]);
        REQUIRE(write(fds[1], &handle, sizeof handle) == (ssize_t)sizeof handle);
        close(fds[1]);
        REQUIRE(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
    check_streams();
    check_pools();
    check_ipc();
    check_reset();
    CHECK_DONE();
}
