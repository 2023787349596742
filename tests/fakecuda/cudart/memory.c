/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory that is not stream ordered: device memory, managed memory with its advice and
 * prefetches, page-locked host memory (allocated or registered), and the free and total amounts. */
#include <stdint.h>

#include "cudart.h"

/* The real runtime returns no memory and cudaSuccess for 0 bytes (assumption: it does, as
 * programs that allocate empty arrays rely on); the driver refuses 0 bytes. */
RT_EXPORT cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
    CUdeviceptr d = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && devPtr == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && size > 0)
        e = RT_CALL(cuMemAlloc, &d, size);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)d;
    return rt_return(e);
}

/* CUDA Runtime API, Memory Management, cudaMallocPitch and cudaMalloc3D: "at least width (in
 * bytes) * height bytes of linear memory", each row padded "to ensure that corresponding pointers
 * in any given row will continue to meet the alignment requirements", the pitch "the width in
 * bytes of the allocation". The driver's cuMemAllocPitch pads the rows (to 512 bytes, as current
 * GPUs do: the test driver says why, tests/fakecuda/memory.c), asked for 16-byte elements, the
 * widest a kernel moves at once; the padding is device memory like the rest. cudaMalloc3D's
 * slices are height rows each of one allocation of height * depth rows; its cudaPitchedPtr
 * carries xsize and ysize, "the logical width and height of the allocation". Assumption: an
 * empty extent gives no memory (NULL), a pitch of 0 and cudaSuccess, as cudaMalloc does for 0
 * bytes (alpaka's runtime buffers rely on zero-sized pitched allocations succeeding, alpaka pull
 * request 198). */
static cudaError_t alloc_pitch(size_t width, size_t rows, void **ptr, size_t *pitch)
{
    CUdeviceptr d = 0;
    size_t p = 0;
    cudaError_t e = cudaSuccess;

    if (width > 0 && rows > 0)
        e = RT_CALL(cuMemAllocPitch, &d, &p, width, rows, 16);
    if (e == cudaSuccess) {
        *ptr = (void *)(uintptr_t)d;
        *pitch = p;
    }
    return e;
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                                                size_t height)
{
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (devPtr == NULL || pitch == NULL))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = alloc_pitch(width, height, devPtr, pitch);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMalloc3D(struct cudaPitchedPtr *pitchedDevPtr,
                                             struct cudaExtent extent)
{
    struct cudaPitchedPtr p;
    size_t rows = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess &&
        (pitchedDevPtr == NULL || __builtin_mul_overflow(extent.height, extent.depth, &rows)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = alloc_pitch(extent.width, rows, &p.ptr, &p.pitch);
    if (e == cudaSuccess) {
        p.xsize = extent.width;
        p.ysize = extent.height;
        *pitchedDevPtr = p;
    }
    return rt_return(e);
}

/* CUDA Runtime API, Memory Management, cudaFree: "If devPtr is 0, no operation is performed"
 * (the cudaFree(0) idiom still initialises the runtime, as every call does). Memory of the
 * stream-ordered allocator is freed without synchronising, as the driver's cuMemFree does. */
RT_EXPORT cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && devPtr != NULL)
        e = RT_CALL(cuMemFree, (CUdeviceptr)(uintptr_t)devPtr);
    return rt_return(e);
}

/* CUDA Runtime API, Memory Management, cudaMallocManaged: size 0 is cudaErrorInvalidValue; flags
 * cudaMemAttachGlobal or cudaMemAttachHost, which are the driver's values. */
RT_EXPORT cudaError_t CUDARTAPI cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    CUdeviceptr d = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (devPtr == NULL || size == 0 ||
                             (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuMemAllocManaged, &d, size, flags);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)d;
    return rt_return(e);
}

/* Page-locked host memory. With unified addressing (every device of the test driver has it) the
 * runtime's pinned memory is portable and mapped at the same address whatever the flags say
 * (CUDA Programming Guide, "Unified Virtual Address Space": cudaHostAlloc memory "is
 * automatically portable" and its pointer usable from kernels). */
static cudaError_t host_alloc(void **ptr, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (ptr == NULL || (flags & ~known) != 0))
        e = cudaErrorInvalidValue;
    /* Assumption: 0 bytes gives no memory, as cudaMalloc does. */
    if (e == cudaSuccess && size == 0)
        *ptr = NULL;
    else if (e == cudaSuccess)
        e = RT_CALL(cuMemHostAlloc, ptr, size,
                    flags | CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    return e;
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size)
{
    return rt_return(host_alloc(ptr, size, cudaHostAllocDefault));
}

RT_EXPORT cudaError_t CUDARTAPI cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    return rt_return(host_alloc(pHost, size, flags));
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && ptr != NULL)
        e = RT_CALL(cuMemFreeHost, ptr);
    return rt_return(e);
}

/* CUDA Runtime API, Memory Management, cudaHostRegister: "On a system with unified virtual
 * addressing, the memory will be both mapped and portable". cudaHostRegisterIoMemory and
 * cudaHostRegisterReadOnly are the driver's flags of the same values. */
RT_EXPORT cudaError_t CUDARTAPI cudaHostRegister(void *ptr, size_t size, unsigned int flags)
{
    const unsigned known = cudaHostRegisterPortable | cudaHostRegisterMapped |
                           cudaHostRegisterIoMemory | cudaHostRegisterReadOnly;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (ptr == NULL || size == 0 || (flags & ~known) != 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuMemHostRegister, ptr, size,
                    flags | CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaHostUnregister(void *ptr)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && ptr == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuMemHostUnregister, ptr);
    return rt_return(e);
}

/* CUDA Runtime API, Memory Management, cudaHostGetDevicePointer: flags must be 0. */
RT_EXPORT cudaError_t CUDARTAPI cudaHostGetDevicePointer(void **pDevice, void *pHost,
                                                         unsigned int flags)
{
    CUdeviceptr d = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (pDevice == NULL || flags != 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuMemHostGetDevicePointer, &d, pHost, 0);
    if (e == cudaSuccess)
        *pDevice = (void *)(uintptr_t)d;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free, size_t *total)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && (free == NULL || total == NULL))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuMemGetInfo, free, total);
    return rt_return(e);
}

/* cudaMemLocation and CUmemLocation, cudaMemoryAdvise and CUmem_advise have the same values. */
static CUmemLocation location_of(struct cudaMemLocation l)
{
    CUmemLocation c;
    c.type = (CUmemLocationType)l.type;
    c.id = l.id;
    return c;
}

static cudaError_t advise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                          struct cudaMemLocation location)
{
    RT_FORWARD(cuMemAdvise, (CUdeviceptr)(uintptr_t)devPtr, count, (CUmem_advise)advice,
               location_of(location));
}

static cudaError_t prefetch(const void *devPtr, size_t count, struct cudaMemLocation location,
                            unsigned int flags, cudaStream_t stream, bool per_thread)
{
    RT_FORWARD_STREAM(stream, per_thread, cuMemPrefetchAsync, (CUdeviceptr)(uintptr_t)devPtr, count,
                      location_of(location), flags, s);
}

/* CUDA 13's cudaMemAdvise and cudaMemPrefetchAsync take a cudaMemLocation, as CUDA 12's _v2 forms
 * do: one ABI under two names. */
#if CUDART_VERSION >= 13000
#define MEM_ADVISE_LOCATION        cudaMemAdvise
#define MEM_PREFETCH_LOCATION      cudaMemPrefetchAsync
#define MEM_PREFETCH_LOCATION_PTSZ cudaMemPrefetchAsync_ptsz
#else
#define MEM_ADVISE_LOCATION        cudaMemAdvise_v2
#define MEM_PREFETCH_LOCATION      cudaMemPrefetchAsync_v2
#define MEM_PREFETCH_LOCATION_PTSZ cudaMemPrefetchAsync_v2_ptsz

/* CUDA 12's form names a device, or cudaCpuDeviceId for the host. */
static struct cudaMemLocation location_of_device(int device)
{
    struct cudaMemLocation l;
    l.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    l.id = device == cudaCpuDeviceId ? 0 : device;
    return l;
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemAdvise(const void *devPtr, size_t count,
                                              enum cudaMemoryAdvise advice, int device)
{
    return advise(devPtr, count, advice, location_of_device(device));
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPrefetchAsync(const void *devPtr, size_t count,
                                                     int dstDevice, cudaStream_t stream)
{
    return prefetch(devPtr, count, location_of_device(dstDevice), 0, stream, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                                          int dstDevice, cudaStream_t stream)
{
    return prefetch(devPtr, count, location_of_device(dstDevice), 0, stream, true);
}
#endif

RT_EXPORT cudaError_t CUDARTAPI MEM_ADVISE_LOCATION(const void *devPtr, size_t count,
                                                    enum cudaMemoryAdvise advice,
                                                    struct cudaMemLocation location)
{
    return advise(devPtr, count, advice, location);
}

RT_EXPORT cudaError_t CUDARTAPI MEM_PREFETCH_LOCATION(const void *devPtr, size_t count,
                                                      struct cudaMemLocation location,
                                                      unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, false);
}

RT_EXPORT cudaError_t CUDARTAPI MEM_PREFETCH_LOCATION_PTSZ(const void *devPtr, size_t count,
                                                           struct cudaMemLocation location,
                                                           unsigned int flags, cudaStream_t stream)
{
    return prefetch(devPtr, count, location, flags, stream, true);
}
