/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies and memsets. Each cudaMemcpyKind is the driver copy of those two kinds of memory, so the
 * driver's rules apply: which memory each side may be, and when the call returns ("API
 * synchronization behavior" is one table for both APIs). cudaMemcpyDefault lets the pointers say
 * (unified addressing). */
#include <stdint.h>
#include <string.h>

#include "cudart.h"

/* Where each side of a copy is, from its kind. */
typedef enum { SIDE_HOST, SIDE_DEVICE, SIDE_ANY } side_t;

static cudaError_t sides(enum cudaMemcpyKind kind, side_t *dst, side_t *src)
{
    switch (kind) {
    case cudaMemcpyHostToHost:
        *dst = *src = SIDE_HOST;
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        *dst = SIDE_DEVICE, *src = SIDE_HOST;
        return cudaSuccess;
    case cudaMemcpyDeviceToHost:
        *dst = SIDE_HOST, *src = SIDE_DEVICE;
        return cudaSuccess;
    case cudaMemcpyDeviceToDevice:
        *dst = *src = SIDE_DEVICE;
        return cudaSuccess;
    case cudaMemcpyDefault:
        *dst = *src = SIDE_ANY;
        return cudaSuccess;
    default:
        return cudaErrorInvalidMemcpyDirection;
    }
}

/* Host to host: "Calling cudaMemcpy() with dst and src pointers that do not match the direction
 * of the copy results in an undefined behavior" (CUDA Runtime API, Memory Management); the
 * stand-in refuses device memory there, as strict as it can be. Managed memory is host memory
 * too. */
static cudaError_t host_only(const void *p)
{
    CUpointer_attribute attrs[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned int type = 0, managed = 0;
    void *data[2] = {&type, &managed};
    cudaError_t e = RT_CALL(cuPointerGetAttributes, 2, attrs, data, (CUdeviceptr)(uintptr_t)p);
    if (e == cudaSuccess && type == CU_MEMORYTYPE_DEVICE && !managed)
        e = cudaErrorInvalidValue;
    return e;
}

/* A synchronous copy of a program built for per-thread default streams goes on its per-thread
 * stream: queued there, then waited for unless it is device to device, which the synchronous
 * copies never wait for (assumption: a real per-thread copy returns when the legacy one would;
 * waiting for a host-to-device copy is a little more than that). */
static bool per_thread_sync(bool *async, CUstream hs, side_t ds, side_t ss)
{
    if (*async || hs == NULL)
        return false;
    *async = true;
    return !(ds == SIDE_DEVICE && ss == SIDE_DEVICE);
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                        cudaStream_t stream, bool async, bool per_thread)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)dst, s = (CUdeviceptr)(uintptr_t)src;
    side_t ds, ss;
    CUstream hs = NULL;
    bool wait;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = sides(kind, &ds, &ss);
    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e != cudaSuccess || count == 0)
        return rt_return(e);
    wait = per_thread_sync(&async, hs, ds, ss);
    if (ds == SIDE_HOST && ss == SIDE_HOST) {
        if ((e = host_only(dst)) == cudaSuccess && (e = host_only(src)) == cudaSuccess)
            e = async ? RT_CALL(cuMemcpyAsync, d, s, count, hs) : RT_CALL(cuMemcpy, d, s, count);
    } else if (ds == SIDE_ANY) {
        e = async ? RT_CALL(cuMemcpyAsync, d, s, count, hs) : RT_CALL(cuMemcpy, d, s, count);
    } else if (ds == SIDE_DEVICE && ss == SIDE_HOST) {
        e = async ? RT_CALL(cuMemcpyHtoDAsync, d, src, count, hs)
                  : RT_CALL(cuMemcpyHtoD, d, src, count);
    } else if (ds == SIDE_HOST) {
        e = async ? RT_CALL(cuMemcpyDtoHAsync, dst, s, count, hs)
                  : RT_CALL(cuMemcpyDtoH, dst, s, count);
    } else {
        e = async ? RT_CALL(cuMemcpyDtoDAsync, d, s, count, hs)
                  : RT_CALL(cuMemcpyDtoD, d, s, count);
    }
    if (e == cudaSuccess && wait)
        e = RT_CALL(cuStreamSynchronize, hs);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                                enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
                                                enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                     enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream, true, true);
}

static CUmemorytype memory_type(side_t side)
{
    return side == SIDE_HOST     ? CU_MEMORYTYPE_HOST
           : side == SIDE_DEVICE ? CU_MEMORYTYPE_DEVICE
                                 : CU_MEMORYTYPE_UNIFIED;
}

/* CUDA Runtime API, Memory Management, cudaMemcpy2D: a pitch narrower than the width is
 * cudaErrorInvalidPitchValue (assumption: the runtime checks it before the driver, whose answer
 * would be an invalid value). */
static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, bool async,
                           bool per_thread)
{
    CUDA_MEMCPY2D p;
    side_t ds, ss;
    CUstream hs = NULL;
    bool wait;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = sides(kind, &ds, &ss);
    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e == cudaSuccess && height > 1 && (dpitch < width || spitch < width))
        e = cudaErrorInvalidPitchValue;
    if (e != cudaSuccess || width == 0 || height == 0)
        return rt_return(e);
    if (ds == SIDE_HOST && ss == SIDE_HOST && (e = host_only(dst)) == cudaSuccess)
        e = host_only(src);
    if (e != cudaSuccess)
        return rt_return(e);
    memset(&p, 0, sizeof p);
    p.srcMemoryType = memory_type(ss);
    p.dstMemoryType = memory_type(ds);
    p.srcHost = src;
    p.srcDevice = (CUdeviceptr)(uintptr_t)src;
    p.srcPitch = spitch;
    p.dstHost = dst;
    p.dstDevice = (CUdeviceptr)(uintptr_t)dst;
    p.dstPitch = dpitch;
    p.WidthInBytes = width;
    p.Height = height;
    wait = per_thread_sync(&async, hs, ds, ss);
    e = async ? RT_CALL(cuMemcpy2DAsync, &p, hs) : RT_CALL(cuMemcpy2D, &p);
    if (e == cudaSuccess && wait)
        e = RT_CALL(cuStreamSynchronize, hs);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                                             size_t spitch, size_t width, size_t height,
                                             enum cudaMemcpyKind kind)
{
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src,
                                                  size_t spitch, size_t width, size_t height,
                                                  enum cudaMemcpyKind kind)
{
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                                  size_t spitch, size_t width, size_t height,
                                                  enum cudaMemcpyKind kind, cudaStream_t stream)
{
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                                       size_t spitch, size_t width, size_t height,
                                                       enum cudaMemcpyKind kind,
                                                       cudaStream_t stream)
{
    return copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, true, true);
}

/* cudaMemset sets bytes to the low byte of @p value. A 2-D memset is one of the driver's, or its
 * rows one by one on the same stream when the driver lacks the 2-D form. */
static cudaError_t set(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                       cudaStream_t stream, bool async, bool per_thread)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)devPtr;
    unsigned char byte = (unsigned char)value;
    CUstream hs = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e == cudaSuccess && height > 1 && pitch < width)
        e = cudaErrorInvalidPitchValue;
    if (e != cudaSuccess || width == 0 || height == 0)
        return rt_return(e);
    if (!async && hs != NULL)
        async = true;
    if (height == 1)
        e = async ? RT_CALL(cuMemsetD8Async, d, byte, width, hs)
                  : RT_CALL(cuMemsetD8, d, byte, width);
    else if (async && rt_drv.cuMemsetD2D8Async != NULL)
        e = RT_CALL(cuMemsetD2D8Async, d, pitch, byte, width, height, hs);
    else if (!async && rt_drv.cuMemsetD2D8 != NULL)
        e = RT_CALL(cuMemsetD2D8, d, pitch, byte, width, height);
    else
        for (size_t r = 0; r < height && e == cudaSuccess; r++)
            e = async ? RT_CALL(cuMemsetD8Async, d + r * pitch, byte, width, hs)
                      : RT_CALL(cuMemsetD8, d + r * pitch, byte, width);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
    return set(devPtr, count, value, count, 1, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset_ptds(void *devPtr, int value, size_t count)
{
    return set(devPtr, count, value, count, 1, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count,
                                                cudaStream_t stream)
{
    return set(devPtr, count, value, count, 1, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                                     cudaStream_t stream)
{
    return set(devPtr, count, value, count, 1, stream, true, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                                             size_t height)
{
    return set(devPtr, pitch, value, width, height, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset2D_ptds(void *devPtr, size_t pitch, int value,
                                                  size_t width, size_t height)
{
    return set(devPtr, pitch, value, width, height, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset2DAsync(void *devPtr, size_t pitch, int value,
                                                  size_t width, size_t height, cudaStream_t stream)
{
    return set(devPtr, pitch, value, width, height, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value,
                                                       size_t width, size_t height,
                                                       cudaStream_t stream)
{
    return set(devPtr, pitch, value, width, height, stream, true, true);
}
