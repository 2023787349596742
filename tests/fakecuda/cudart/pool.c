/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream-ordered allocator: cudaMallocAsync and cudaFreeAsync on a stream, memory pools (the
 * device's default one, the current one, and pools the program creates), their access and
 * attributes. cudaMemPool_t is the driver's CUmemoryPool. */
#include <stdint.h>
#include <string.h>

#include "cudart.h"

static cudaError_t malloc_async(void **devPtr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
                                bool per_thread)
{
    CUdeviceptr d = 0;
    CUstream s = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && devPtr == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &s);
    if (e == cudaSuccess && pool != NULL)
        e = RT_CALL(cuMemAllocFromPoolAsync, &d, size, (CUmemoryPool)pool, s);
    else if (e == cudaSuccess)
        e = RT_CALL(cuMemAllocAsync, &d, size, s);
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)d;
    return rt_return(e);
}

/* CUDA Runtime API, Stream Ordered Memory Allocator, cudaMallocAsync: "The allocation comes from
 * the memory pool associated with the stream's device" (the driver's cuMemAllocAsync). */
RT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    return malloc_async(devPtr, size, NULL, hStream, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size,
                                                     cudaStream_t hStream)
{
    return malloc_async(devPtr, size, NULL, hStream, true);
}

/* A NULL pool is the driver's to refuse, as cuMemAllocFromPoolAsync does. */
static cudaError_t from_pool(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream,
                             bool per_thread)
{
    if (memPool == NULL) {
        cudaError_t e = rt_enter(NULL);
        return rt_return(e == cudaSuccess ? cudaErrorInvalidValue : e);
    }
    return malloc_async(ptr, size, memPool, stream, per_thread);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void **ptr, size_t size,
                                                        cudaMemPool_t memPool, cudaStream_t stream)
{
    return from_pool(ptr, size, memPool, stream, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size,
                                                             cudaMemPool_t memPool,
                                                             cudaStream_t stream)
{
    return from_pool(ptr, size, memPool, stream, true);
}

static cudaError_t free_async(void *devPtr, cudaStream_t stream, bool per_thread)
{
    RT_FORWARD_STREAM(stream, per_thread, cuMemFreeAsync, (CUdeviceptr)(uintptr_t)devPtr, s);
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    return free_async(devPtr, hStream, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream)
{
    return free_async(devPtr, hStream, true);
}

/* cudaMemPoolProps and CUmemPoolProps: the same fields and values, copied one by one. */
RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t *memPool,
                                                  const struct cudaMemPoolProps *poolProps)
{
    CUmemPoolProps props;
    CUmemoryPool pool = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (memPool == NULL || poolProps == NULL))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        memset(&props, 0, sizeof props);
        props.allocType = (CUmemAllocationType)poolProps->allocType;
        props.handleTypes = (CUmemAllocationHandleType)poolProps->handleTypes;
        props.location.type = (CUmemLocationType)poolProps->location.type;
        props.location.id = poolProps->location.id;
        props.win32SecurityAttributes = poolProps->win32SecurityAttributes;
        props.maxSize = poolProps->maxSize;
        props.usage = poolProps->usage;
        e = RT_CALL(cuMemPoolCreate, &pool, &props);
    }
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)pool;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t memPool)
{
    RT_FORWARD(cuMemPoolDestroy, (CUmemoryPool)memPool);
}

static cudaError_t device_pool(cudaMemPool_t *memPool, int device, bool current)
{
    CUmemoryPool pool = NULL;
    int count = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && memPool == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (e = rt_error(rt_drv.cuDeviceGetCount(&count))) == cudaSuccess &&
        (device < 0 || device >= count))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        e = current ? RT_CALL(cuDeviceGetMemPool, &pool, device)
                    : RT_CALL(cuDeviceGetDefaultMemPool, &pool, device);
    if (e == cudaSuccess)
        *memPool = (cudaMemPool_t)pool;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
    return device_pool(memPool, device, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
    return device_pool(memPool, device, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
    int count = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (e = rt_error(rt_drv.cuDeviceGetCount(&count))) == cudaSuccess &&
        (device < 0 || device >= count))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        e = RT_CALL(cuDeviceSetMemPool, device, (CUmemoryPool)memPool);
    return rt_return(e);
}

/* cudaMemAccessDesc and CUmemAccessDesc: the same fields and values. */
RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolSetAccess(cudaMemPool_t memPool,
                                                     const struct cudaMemAccessDesc *descList,
                                                     size_t count)
{
    CUmemAccessDesc descs[RT_MAX_DEVICES + 2];
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && ((descList == NULL && count > 0) || count > RT_MAX_DEVICES + 2))
        e = cudaErrorInvalidValue;
    for (size_t i = 0; e == cudaSuccess && i < count; i++) {
        descs[i].location.type = (CUmemLocationType)descList[i].location.type;
        descs[i].location.id = descList[i].location.id;
        descs[i].flags = (CUmemAccess_flags)descList[i].flags;
    }
    if (e == cudaSuccess)
        e = RT_CALL(cuMemPoolSetAccess, (CUmemoryPool)memPool, descs, count);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolGetAccess(enum cudaMemAccessFlags *flags,
                                                     cudaMemPool_t memPool,
                                                     struct cudaMemLocation *location)
{
    CUmemAccess_flags f = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    CUmemLocation l;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (flags == NULL || location == NULL))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        l.type = (CUmemLocationType)location->type;
        l.id = location->id;
        e = RT_CALL(cuMemPoolGetAccess, &f, (CUmemoryPool)memPool, &l);
    }
    if (e == cudaSuccess)
        *flags = (enum cudaMemAccessFlags)f;
    return rt_return(e);
}

/* cudaMemPoolAttr and CUmemPool_attribute have the same values and value types. */
RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t memPool,
                                                        enum cudaMemPoolAttr attr, void *value)
{
    RT_FORWARD(cuMemPoolSetAttribute, (CUmemoryPool)memPool, (CUmemPool_attribute)attr, value);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t memPool,
                                                        enum cudaMemPoolAttr attr, void *value)
{
    RT_FORWARD(cuMemPoolGetAttribute, (CUmemoryPool)memPool, (CUmemPool_attribute)attr, value);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep)
{
    RT_FORWARD(cuMemPoolTrimTo, (CUmemoryPool)memPool, minBytesToKeep);
}
