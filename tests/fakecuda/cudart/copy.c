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

/* CUDA Runtime API, Memory Management, cudaMemcpy2D and cudaMemcpy3D: "width must not exceed
 * either dpitch or spitch" (3-D: nor the pitch less the x position) and an error "if dpitch or
 * spitch exceeds the maximum allowed": cudaErrorInvalidPitchValue, "one or more of the
 * pitch-related parameters passed to the API call is not within the acceptable range for pitch"
 * (driver_types.h). Assumption: the runtime checks them before the driver, whose answer would be
 * an invalid value, the width only where there is more than one row, the maximum always. */
static cudaError_t pitch_check(int device, size_t pitch, size_t x, size_t width, bool rows)
{
    size_t max = 0;
    cudaError_t e = rt_max_pitch(device, &max);

    if (e == cudaSuccess && (pitch > max || (rows && (pitch < x || pitch - x < width))))
        e = cudaErrorInvalidPitchValue;
    return e;
}

static cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, enum cudaMemcpyKind kind, cudaStream_t stream, bool async,
                           bool per_thread)
{
    CUDA_MEMCPY2D p;
    side_t ds, ss;
    CUstream hs = NULL;
    int device = 0;
    bool wait;
    cudaError_t e = rt_enter(&device);

    if (e == cudaSuccess)
        e = sides(kind, &ds, &ss);
    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e != cudaSuccess || width == 0 || height == 0)
        return rt_return(e);
    if ((e = pitch_check(device, dpitch, 0, width, height > 1)) == cudaSuccess)
        e = pitch_check(device, spitch, 0, width, height > 1);
    if (e == cudaSuccess && ds == SIDE_HOST && ss == SIDE_HOST &&
        (e = host_only(dst)) == cudaSuccess)
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

/* One side of the driver's copy from the runtime's: CUDA_MEMCPY3D and cudaMemcpy3DParms name the
 * fields of each side with its prefix (src, dst); @p _where is where its memory lies. */
#define COPY_3D_SIDE(_c, _p, _side, _where)                                                        \
    do {                                                                                           \
        (_c)._side##XInBytes = (_p)->_side##Pos.x;                                                 \
        (_c)._side##Y = (_p)->_side##Pos.y;                                                        \
        (_c)._side##Z = (_p)->_side##Pos.z;                                                        \
        (_c)._side##MemoryType = memory_type(_where);                                              \
        (_c)._side##Host = (_p)->_side##Ptr.ptr;                                                   \
        (_c)._side##Device = (CUdeviceptr)(uintptr_t)(_p)->_side##Ptr.ptr;                         \
        (_c)._side##Pitch = (_p)->_side##Ptr.pitch;                                                \
        (_c)._side##Height = (_p)->_side##Ptr.ysize;                                               \
    } while (0)

/* CUDA Runtime API, Memory Management, cudaMemcpy3D: "must specify one of srcArray or srcPtr and
 * one of dstArray or dstPtr. Passing more than one non-zero source or destination will cause
 * cudaMemcpy3D() to return an error" (an invalid value, as is passing none); for linear memory
 * the positions and the extent count bytes ("The element for a host or device pointer is assumed
 * to be unsigned char"); each side is its cudaPitchedPtr's pitch and ysize (the height of a
 * slice), the driver's CUDA_MEMCPY3D, whose rules (a slice height that holds the box when there
 * is more than one slice, the box inside the memory) answer cudaErrorInvalidValue. xsize, a
 * logical width, bounds nothing (assumption: the runtime does not check it, programs leave it
 * 0). CUDA arrays are not emulated: cudaErrorNotSupported, said once. */
static cudaError_t copy_3d(const struct cudaMemcpy3DParms *p, cudaStream_t stream, bool async,
                           bool per_thread)
{
    static int said[2];
    CUDA_MEMCPY3D c;
    side_t ds, ss;
    CUstream hs = NULL;
    int device = 0;
    bool rows, wait;
    cudaError_t e = rt_enter(&device);

    if (e == cudaSuccess && (p == NULL || (p->srcArray != NULL) == (p->srcPtr.ptr != NULL) ||
                             (p->dstArray != NULL) == (p->dstPtr.ptr != NULL)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (p->srcArray != NULL || p->dstArray != NULL))
        return (cudaError_t)rt_unsupported(async ? "cudaMemcpy3DAsync of a CUDA array"
                                                 : "cudaMemcpy3D of a CUDA array",
                                           &said[async]);
    if (e == cudaSuccess)
        e = sides(p->kind, &ds, &ss);
    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e != cudaSuccess || p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0)
        return rt_return(e);
    rows = p->extent.height > 1 || p->extent.depth > 1;
    if ((e = pitch_check(device, p->dstPtr.pitch, p->dstPos.x, p->extent.width, rows)) ==
        cudaSuccess)
        e = pitch_check(device, p->srcPtr.pitch, p->srcPos.x, p->extent.width, rows);
    if (e == cudaSuccess && ds == SIDE_HOST && ss == SIDE_HOST &&
        (e = host_only(p->dstPtr.ptr)) == cudaSuccess)
        e = host_only(p->srcPtr.ptr);
    if (e != cudaSuccess)
        return rt_return(e);
    memset(&c, 0, sizeof c);
    COPY_3D_SIDE(c, p, src, ss);
    COPY_3D_SIDE(c, p, dst, ds);
    c.WidthInBytes = p->extent.width;
    c.Height = p->extent.height;
    c.Depth = p->extent.depth;
    wait = per_thread_sync(&async, hs, ds, ss);
    e = async ? RT_CALL(cuMemcpy3DAsync, &c, hs) : RT_CALL(cuMemcpy3D, &c);
    if (e == cudaSuccess && wait)
        e = RT_CALL(cuStreamSynchronize, hs);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    return copy_3d(p, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p)
{
    return copy_3d(p, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p,
                                                  cudaStream_t stream)
{
    return copy_3d(p, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                                       cudaStream_t stream)
{
    return copy_3d(p, stream, true, true);
}

/* @p height rows of @p width bytes, @p pitch apart, set to @p byte on stream @p hs: one driver
 * memset, or its rows one by one on the same stream when the driver lacks the 2-D form. */
static cudaError_t set_rows(CUdeviceptr d, size_t pitch, unsigned char byte, size_t width,
                            size_t height, CUstream hs, bool async)
{
    cudaError_t e = cudaSuccess;

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
    return e;
}

/* cudaMemset sets bytes to the low byte of @p value; a synchronous memset on a per-thread default
 * stream is queued there, as the driver's on the legacy stream is. */
static cudaError_t set(void *devPtr, size_t pitch, int value, size_t width, size_t height,
                       cudaStream_t stream, bool async, bool per_thread)
{
    CUstream hs = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e == cudaSuccess && height > 1 && pitch < width)
        e = cudaErrorInvalidPitchValue;
    if (e != cudaSuccess || width == 0 || height == 0)
        return rt_return(e);
    e = set_rows((CUdeviceptr)(uintptr_t)devPtr, pitch, (unsigned char)value, width, height, hs,
                 async || hs != NULL);
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

/* The BUFFER_ID of the memory at @p p (0: none the driver knows). */
static unsigned long long buffer_of(CUdeviceptr p)
{
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_BUFFER_ID;
    unsigned long long id = 0;
    void *data = &id;
    if (RT_CALL(cuPointerGetAttributes, 1, &attr, &data, p) != cudaSuccess)
        id = 0;
    return id;
}

/* CUDA Runtime API, Memory Management, cudaMemset3D: the pitch "is ignored when height and depth
 * are both equal to 1", ysize is "the height of each 2D slice in rows", the extent's width counts
 * bytes. The one error it documents is an invalid value: a pitch narrower than the width, and
 * (assumption) a height above ysize when there are several slices, which would overlap. Slices
 * as high as the extent are one 2-D memset of height * depth rows; others one memset each, in
 * stream order, once the whole box is known to lie in one allocation (BUFFER_ID of its first and
 * last byte), so that no slice is set when a later one would be refused. */
static cudaError_t set_3d(struct cudaPitchedPtr p, int value, struct cudaExtent extent,
                          cudaStream_t stream, bool async, bool per_thread)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)p.ptr, last;
    unsigned char byte = (unsigned char)value;
    size_t slice = 0, rows = 0, span = 0;
    CUstream hs = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess)
        e = rt_stream(stream, per_thread, &hs);
    if (e != cudaSuccess || extent.width == 0 || extent.height == 0 || extent.depth == 0)
        return rt_return(e);
    if ((extent.height > 1 || extent.depth > 1) && p.pitch < extent.width)
        e = cudaErrorInvalidValue;
    if (extent.depth > 1 &&
        (p.ysize < extent.height || __builtin_mul_overflow(p.pitch, p.ysize, &slice)))
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return rt_return(e);
    async = async || hs != NULL;
    if (extent.depth == 1 || p.ysize == extent.height) {
        if (__builtin_mul_overflow(extent.height, extent.depth, &rows))
            e = cudaErrorInvalidValue;
        else
            e = set_rows(d, p.pitch, byte, extent.width, rows, hs, async);
        return rt_return(e);
    }
    if (__builtin_mul_overflow(extent.depth - 1, slice, &span) ||
        __builtin_add_overflow(span, (extent.height - 1) * p.pitch + extent.width, &span) ||
        __builtin_add_overflow(d, span - 1, &last) ||
        (buffer_of(d) != 0 && buffer_of(last) != buffer_of(d)))
        e = cudaErrorInvalidValue;
    for (size_t z = 0; z < extent.depth && e == cudaSuccess; z++)
        e = set_rows(d + z * slice, p.pitch, byte, extent.width, extent.height, hs, async);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset3D(struct cudaPitchedPtr pitchedDevPtr, int value,
                                             struct cudaExtent extent)
{
    return set_3d(pitchedDevPtr, value, extent, NULL, false, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                                  struct cudaExtent extent)
{
    return set_3d(pitchedDevPtr, value, extent, NULL, false, true);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset3DAsync(struct cudaPitchedPtr pitchedDevPtr, int value,
                                                  struct cudaExtent extent, cudaStream_t stream)
{
    return set_3d(pitchedDevPtr, value, extent, stream, true, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr,
                                                       int value, struct cudaExtent extent,
                                                       cudaStream_t stream)
{
    return set_3d(pitchedDevPtr, value, extent, stream, true, true);
}
