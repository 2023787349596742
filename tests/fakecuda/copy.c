/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies and memsets, with the synchronisation cuda.h documents under "API synchronization
 * behavior": what is asynchronous is queued, what is synchronous runs before the call returns. */
#include <stdlib.h>
#include <string.h>

#include "fakecuda.h"

/* Where one side of a copy lives. Managed memory counts as device memory: its copies are
 * ordered with the stream's other work. */
typedef enum { SIDE_DEVICE, SIDE_PINNED, SIDE_PAGEABLE } side_t;

typedef struct {
    uintptr_t addr;
    size_t pitch, slice; /* bytes from one row to the next, from one slice to the next */
    side_t side;
    bool managed;
} end_t;

/* Pool and VMM memory whose pages the host may touch (host-located, granted to the host). */
static bool host_touchable(const fc_alloc_t *a)
{
    return (a->kind == FC_MEM_POOL || a->kind == FC_MEM_VMM) && a->host_prot != 0;
}

/* A pointer passed as device memory: it must lie, with the whole span, inside one live
 * allocation usable by the current context (mapped page-locked memory counts, through UVA).
 * Assumption (stricter than a GPU, whose copy engines may reach further): device memory of
 * another context is refused unless it is a peer (cuCtxEnablePeerAccess), and pool and VMM memory
 * must be accessible to the current context's device (cuMemPoolSetAccess, cuMemSetAccess), as for
 * its kernels. */
static CUresult device_end(struct CUctx_st *ctx, uintptr_t p, size_t span, end_t *e)
{
    fc_alloc_t *a = fc_mem_find_range(p, span);
    if (a == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    switch (a->kind) {
    case FC_MEM_DEVICE:
    case FC_MEM_MANAGED:
    case FC_MEM_IPC:
        if (a->ctx != ctx && (a->kind != FC_MEM_DEVICE || !fc_ctx_peer(ctx, a->ctx)))
            return CUDA_ERROR_INVALID_VALUE;
        e->side = SIDE_DEVICE;
        e->managed = a->kind == FC_MEM_MANAGED;
        break;
    case FC_MEM_POOL:
    case FC_MEM_VMM:
        if (fc_mem_access(a, ctx, UINT64_MAX) == CU_MEM_ACCESS_FLAGS_PROT_NONE)
            return CUDA_ERROR_INVALID_VALUE;
        e->side = SIDE_DEVICE;
        break;
    case FC_MEM_PINNED:
    case FC_MEM_REGISTERED:
        if (a->ctx != ctx && !(a->flags & CU_MEMHOSTALLOC_PORTABLE))
            return CUDA_ERROR_INVALID_VALUE;
        e->side = SIDE_PINNED;
        break;
    }
    e->addr = p;
    return CUDA_SUCCESS;
}

/* A pointer passed as host memory. Device memory there is refused (assumption: a real driver
 * with UVA reports it as an invalid value rather than copying through it); host-located pool and
 * VMM memory the host may touch counts as page-locked. */
static CUresult host_end(struct CUctx_st *ctx, uintptr_t p, size_t span, end_t *e)
{
    fc_alloc_t *a;
    if (p == 0)
        return CUDA_ERROR_INVALID_VALUE;
    a = fc_mem_find_range(p, span);
    if (a != NULL && a->kind == FC_MEM_MANAGED)
        return device_end(ctx, p, span, e);
    if (a != NULL && host_touchable(a)) {
        e->side = SIDE_PINNED;
        e->addr = p;
        return CUDA_SUCCESS;
    }
    if (fc_mem_in_arena(p))
        return CUDA_ERROR_INVALID_VALUE;
    e->side = a != NULL && (a->kind == FC_MEM_PINNED || a->kind == FC_MEM_REGISTERED)
                  ? SIDE_PINNED
                  : SIDE_PAGEABLE;
    e->addr = p;
    return CUDA_SUCCESS;
}

/* CU_MEMORYTYPE_UNIFIED and cuMemcpy: the address says which memory it is (what
 * CU_POINTER_ATTRIBUTE_MEMORY_TYPE answers for it; host-located memory the host may not touch is
 * reached by the device). */
static CUresult unified_end(struct CUctx_st *ctx, uintptr_t p, size_t span, end_t *e)
{
    fc_alloc_t *a = fc_mem_find(p);
    if (a != NULL && host_touchable(a))
        return host_end(ctx, p, span, e);
    if (fc_mem_in_arena(p) || (a != NULL && a->kind == FC_MEM_MANAGED))
        return device_end(ctx, p, span, e);
    return host_end(ctx, p, span, e);
}

static size_t span_of(size_t pitch, size_t width, size_t height)
{
    return height == 0 ? 0 : (height - 1) * pitch + width;
}

/* Copies @p depth slices of @p height rows of @p width bytes (each side's rows and slices
 * @p pitch and @p slice bytes apart). */
static CUresult copy(struct CUctx_st *ctx, struct CUstream_st *s, end_t dst, end_t src,
                     size_t width, size_t height, size_t depth, bool async)
{
    bool host_only = dst.side != SIDE_DEVICE && src.side != SIDE_DEVICE;
    bool run_now;
    fc_op_t *op;

    (void)ctx;
    if (width == 0 || height == 0 || depth == 0)
        return CUDA_SUCCESS;
    if (host_only)
        run_now = true; /* host to host: fully synchronous */
    else if (async)
        run_now = dst.side == SIDE_PAGEABLE; /* to pageable memory: returns when done */
    else
        run_now = !(dst.side == SIDE_DEVICE && src.side == SIDE_DEVICE); /* DtoD: queued */
    op = calloc(1, sizeof *op);
    if (op == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->kind = FC_OP_COPY;
    op->u.copy.dst = dst.addr;
    op->u.copy.dst_pitch = dst.pitch;
    op->u.copy.src = src.addr;
    op->u.copy.src_pitch = src.pitch;
    op->u.copy.width = width;
    op->u.copy.height = height;
    op->u.copy.dst_slice = dst.slice;
    op->u.copy.src_slice = src.slice;
    op->u.copy.depth = depth;
    /* From pageable memory the driver copies to a staging buffer at once, so later host writes
     * to the source do not reach the device. */
    if (src.side == SIDE_PAGEABLE && !run_now) {
        unsigned char *staging =
            width > SIZE_MAX / height / depth ? NULL : malloc(width * height * depth);
        if (staging == NULL) {
            free(op);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (size_t z = 0; z < depth; z++)
            for (size_t r = 0; r < height; r++)
                memcpy(staging + (z * height + r) * width,
                       (const void *)(src.addr + z * src.slice + r * src.pitch), width);
        op->u.copy.staging = staging;
        op->u.copy.src = (uintptr_t)staging;
        op->u.copy.src_pitch = width;
        op->u.copy.src_slice = width * height;
    }
    fc_stream_enqueue(s, op);
    return run_now ? fc_stream_run(s, op->seq) : CUDA_SUCCESS;
}

static void run_op(void *arg)
{
    const fc_op_t *op = arg;
    if (op->kind == FC_OP_MEMSET) {
        for (size_t r = 0; r < op->u.memset.height; r++) {
            unsigned char *row = (unsigned char *)(op->u.memset.dst + r * op->u.memset.pitch);
            unsigned v = op->u.memset.value;
            if (op->u.memset.element == 1) {
                memset(row, (int)v, op->u.memset.width);
            } else if (op->u.memset.element == 2) {
                uint16_t h = (uint16_t)v;
                for (size_t i = 0; i < op->u.memset.width; i++)
                    memcpy(row + 2 * i, &h, 2);
            } else {
                for (size_t i = 0; i < op->u.memset.width; i++)
                    memcpy(row + 4 * i, &v, 4);
            }
        }
        return;
    }
    for (size_t z = 0; z < op->u.copy.depth; z++)
        for (size_t r = 0; r < op->u.copy.height; r++)
            memmove((void *)(op->u.copy.dst + z * op->u.copy.dst_slice + r * op->u.copy.dst_pitch),
                    (const void *)(op->u.copy.src + z * op->u.copy.src_slice +
                                   r * op->u.copy.src_pitch),
                    op->u.copy.width);
}

void fc_copy_execute(struct CUctx_st *ctx, fc_op_t *op)
{
    int sig;

    fc_stats.copies++;
    fc_mem_open(ctx, op->seq);
    for (int i = 0; op->kind == FC_OP_COPY && i < 2; i++)
        if (op->u.copy.peer[i] != NULL)
            fc_mem_open(op->u.copy.peer[i], op->seq);
    sig = fc_fault_guard(run_op, op);
    fc_mem_close();
    if (sig != 0) {
        fc_log("a %s faulted (illegal address): it touched memory its context's device may not",
               op->kind == FC_OP_MEMSET ? "memset" : "copy");
        fc_ctx_poison(ctx, CUDA_ERROR_ILLEGAL_ADDRESS);
    }
}

typedef enum { KIND_HOST, KIND_DEVICE, KIND_UNIFIED } kind_t;

static CUresult linear(kind_t dkind, uintptr_t dst, kind_t skind, uintptr_t src, size_t n,
                       CUstream hStream, bool async)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    end_t d = {0}, e = {0};
    CUresult rc;
    CUresult (*resolve[])(struct CUctx_st *, uintptr_t, size_t, end_t *) = {host_end, device_end,
                                                                            unified_end};

    if ((rc = fc_ctx_current(&ctx)) || (rc = fc_stream_get(ctx, hStream, &s)))
        return rc;
    if (n == 0)
        return CUDA_SUCCESS;
    if ((rc = resolve[dkind](ctx, dst, n, &d)) || (rc = resolve[skind](ctx, src, n, &e)))
        return rc;
    d.pitch = e.pitch = d.slice = e.slice = n;
    return copy(ctx, s, d, e, n, 1, 1, async);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
                                           size_t ByteCount)
{
    FC_BEGIN(cuMemcpyHtoD_v2, true);
    rc = linear(KIND_DEVICE, dstDevice, KIND_HOST, (uintptr_t)srcHost, ByteCount, NULL, false);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    FC_BEGIN(cuMemcpyDtoH_v2, true);
    rc = linear(KIND_HOST, (uintptr_t)dstHost, KIND_DEVICE, srcDevice, ByteCount, NULL, false);
    FC_END();
}

/* cuda.h: "For transfers from device memory to device memory, no host-side synchronization is
 * performed": queued on the legacy stream. */
FC_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                           size_t ByteCount)
{
    FC_BEGIN(cuMemcpyDtoD_v2, true);
    rc = linear(KIND_DEVICE, dstDevice, KIND_DEVICE, srcDevice, ByteCount, NULL, false);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                                size_t ByteCount, CUstream hStream)
{
    FC_BEGIN(cuMemcpyHtoDAsync_v2, true);
    rc = linear(KIND_DEVICE, dstDevice, KIND_HOST, (uintptr_t)srcHost, ByteCount, hStream, true);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream)
{
    FC_BEGIN(cuMemcpyDtoHAsync_v2, true);
    rc = linear(KIND_HOST, (uintptr_t)dstHost, KIND_DEVICE, srcDevice, ByteCount, hStream, true);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream)
{
    FC_BEGIN(cuMemcpyDtoDAsync_v2, true);
    rc = linear(KIND_DEVICE, dstDevice, KIND_DEVICE, srcDevice, ByteCount, hStream, true);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    FC_BEGIN(cuMemcpy, true);
    rc = linear(KIND_UNIFIED, dst, KIND_UNIFIED, src, ByteCount, NULL, false);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                         CUstream hStream)
{
    FC_BEGIN(cuMemcpyAsync, true);
    rc = linear(KIND_UNIFIED, dst, KIND_UNIFIED, src, ByteCount, hStream, true);
    FC_END();
}

/* cuda.h, cuMemcpyPeer: "Copies from device memory in one context to device memory in another
 * context"; "asynchronous with respect to the host, but serialized with respect all pending and
 * future asynchronous work in to the current context, srcContext, and dstContext" (queued on the
 * current context's legacy stream, all three contexts' work run first); cuMemcpyPeerAsync queues
 * it on a stream of the current context. Each side must be memory its context may reach. */
static CUresult peer_copy(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src,
                          CUcontext srcContext, size_t n, CUstream hStream, bool async)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    end_t d = {0}, e = {0};
    fc_op_t *op;
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) || (rc = fc_stream_get(ctx, hStream, &s)))
        return rc;
    if (dstContext == NULL || srcContext == NULL || dstContext->magic != FC_MAGIC_CTX ||
        srcContext->magic != FC_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dstContext->active || !srcContext->active)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (n == 0)
        return CUDA_SUCCESS;
    if ((rc = device_end(dstContext, dst, n, &d)) || (rc = device_end(srcContext, src, n, &e)))
        return rc;
    if (!async && ((rc = fc_ctx_run_all(dstContext)) || (rc = fc_ctx_run_all(srcContext)) ||
                   (rc = fc_ctx_run_all(ctx))))
        return rc;
    if ((op = calloc(1, sizeof *op)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->kind = FC_OP_COPY;
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.dst_pitch = op->u.copy.src_pitch = op->u.copy.width = n;
    op->u.copy.dst_slice = op->u.copy.src_slice = n;
    op->u.copy.height = op->u.copy.depth = 1;
    op->u.copy.peer[0] = dstContext;
    op->u.copy.peer[1] = srcContext;
    fc_stream_enqueue(s, op);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext,
                                        CUdeviceptr srcDevice, CUcontext srcContext,
                                        size_t ByteCount)
{
    FC_BEGIN(cuMemcpyPeer, true);
    rc = peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, false);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                             CUdeviceptr srcDevice, CUcontext srcContext,
                                             size_t ByteCount, CUstream hStream)
{
    FC_BEGIN(cuMemcpyPeerAsync, true);
    rc = peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, true);
    FC_END();
}

/* One side of a CUDA_MEMCPY2D or CUDA_MEMCPY3D: its memory type, base, position, pitch and (3-D)
 * the height of its slices. */
typedef struct {
    CUmemorytype type;
    const void *host;
    CUdeviceptr device;
    size_t x, y, z, pitch, slice_height;
} place_t;

/* The initializers of the place_t of side @p _side (src or dst) of a CUDA_MEMCPY2D (PLACE_2D) or
 * CUDA_MEMCPY3D (PLACE_3D), which name each side's fields with its prefix. */
#define PLACE_2D(_p, _side)                                                                        \
    .type = (_p)->_side##MemoryType, .host = (_p)->_side##Host, .device = (_p)->_side##Device,     \
    .x = (_p)->_side##XInBytes, .y = (_p)->_side##Y, .pitch = (_p)->_side##Pitch
#define PLACE_3D(_p, _side)                                                                        \
    PLACE_2D(_p, _side), .z = (_p)->_side##Z, .slice_height = (_p)->_side##Height

/* a * b + c, false when it does not fit. */
static bool mul_add(size_t a, size_t b, size_t c, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out) && !__builtin_add_overflow(*out, c, out);
}

/* cuda.h, cuMemcpy2D and cuMemcpy3D: the start is base + (z * height + y) * pitch + x; "srcPitch
 * must be greater than or equal to WidthInBytes + srcXInBytes" and "srcHeight must be greater
 * than or equal to Height + srcY" (the slice height "may be 0 if Depth==1"); "an error if any
 * pitch is greater than the maximum allowed (CU_DEVICE_ATTRIBUTE_MAX_PITCH)". Assumption: the
 * width binds the pitch only where there is more than one row (the double's 2-D copies and
 * memsets always took a single row's pitch as unused). Arrays are not emulated; an address that
 * does not fit is an invalid value. */
static CUresult end_of(struct CUctx_st *ctx, const place_t *p, size_t width, size_t height,
                       size_t depth, end_t *e)
{
    size_t start, span, slice = 0, end;
    uintptr_t base;
    CUresult rc;

    if (p->pitch > FC_MAX_PITCH)
        return CUDA_ERROR_INVALID_VALUE;
    if ((height > 1 || depth > 1) && (__builtin_add_overflow(p->x, width, &end) || p->pitch < end))
        return CUDA_ERROR_INVALID_VALUE;
    if (depth > 1 && (__builtin_add_overflow(p->y, height, &end) || p->slice_height < end))
        return CUDA_ERROR_INVALID_VALUE;
    if ((depth > 1 || p->z > 0) && __builtin_mul_overflow(p->pitch, p->slice_height, &slice))
        return CUDA_ERROR_INVALID_VALUE;
    if (!mul_add(p->z, p->slice_height, p->y, &start) || !mul_add(start, p->pitch, p->x, &start) ||
        !mul_add(height - 1, p->pitch, width, &span) || !mul_add(depth - 1, slice, span, &span))
        return CUDA_ERROR_INVALID_VALUE;
    switch (p->type) {
    case CU_MEMORYTYPE_HOST:
        if (p->host == NULL || __builtin_add_overflow((uintptr_t)p->host, start, &base))
            return CUDA_ERROR_INVALID_VALUE;
        rc = host_end(ctx, base, span, e);
        break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        if (__builtin_add_overflow(p->device, start, &base))
            return CUDA_ERROR_INVALID_VALUE;
        rc = p->type == CU_MEMORYTYPE_DEVICE ? device_end(ctx, base, span, e)
                                             : unified_end(ctx, base, span, e);
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    e->pitch = p->pitch;
    e->slice = slice;
    return rc;
}

static CUresult copy_3d(const place_t *dst, const place_t *src, size_t width, size_t height,
                        size_t depth, CUstream hStream, bool async)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    end_t d = {0}, e = {0};
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) || (rc = fc_stream_get(ctx, hStream, &s)))
        return rc;
    if (width == 0 || height == 0 || depth == 0)
        return CUDA_SUCCESS;
    if ((rc = end_of(ctx, dst, width, height, depth, &d)) ||
        (rc = end_of(ctx, src, width, height, depth, &e)))
        return rc;
    return copy(ctx, s, d, e, width, height, depth, async);
}

/* A parameter block that is NULL or malformed: INVALID_VALUE, once a usable context is current. */
static CUresult no_params(void)
{
    struct CUctx_st *ctx = NULL;
    CUresult rc = fc_ctx_current(&ctx);
    return rc != CUDA_SUCCESS ? rc : CUDA_ERROR_INVALID_VALUE;
}

static CUresult copy_2d(const CUDA_MEMCPY2D *p, CUstream hStream, bool async)
{
    if (p == NULL)
        return no_params();
    place_t d = {PLACE_2D(p, dst)}, e = {PLACE_2D(p, src)};
    return copy_3d(&d, &e, p->WidthInBytes, p->Height, 1, hStream, async);
}

/* A copy by parameter block and its Async form: @p _impl(pCopy, hStream, async). */
#define COPY_BY_PARAMS(_name, _async_name, _params, _impl)                                         \
    FC_EXPORT CUresult CUDAAPI _name(const _params *pCopy)                                         \
    {                                                                                              \
        FC_BEGIN(_name, true);                                                                     \
        rc = _impl(pCopy, NULL, false);                                                            \
        FC_END();                                                                                  \
    }                                                                                              \
    FC_EXPORT CUresult CUDAAPI _async_name(const _params *pCopy, CUstream hStream)                 \
    {                                                                                              \
        FC_BEGIN(_async_name, true);                                                               \
        rc = _impl(pCopy, hStream, true);                                                          \
        FC_END();                                                                                  \
    }

COPY_BY_PARAMS(cuMemcpy2D_v2, cuMemcpy2DAsync_v2, CUDA_MEMCPY2D, copy_2d)

/* cuda.h: as cuMemcpy2D without its pitch and alignment limits for arrays (none are emulated). */
FC_EXPORT CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    FC_BEGIN(cuMemcpy2DUnaligned_v2, true);
    rc = copy_2d(pCopy, NULL, false);
    FC_END();
}

/* cuda.h, cuMemcpy3D: "The srcLOD and dstLOD members of the CUDA_MEMCPY3D structure must be set
 * to 0", reserved0 and reserved1 "Must be NULL". */
static CUresult copy_3d_params(const CUDA_MEMCPY3D *p, CUstream hStream, bool async)
{
    if (p == NULL || p->srcLOD != 0 || p->dstLOD != 0 || p->reserved0 != NULL ||
        p->reserved1 != NULL)
        return no_params();
    place_t d = {PLACE_3D(p, dst)}, e = {PLACE_3D(p, src)};
    return copy_3d(&d, &e, p->WidthInBytes, p->Height, p->Depth, hStream, async);
}

/* cuda.h, cuMemcpy3D: synchronous as cuMemcpy2D is ("API synchronization behavior"). */
COPY_BY_PARAMS(cuMemcpy3D_v2, cuMemcpy3DAsync_v2, CUDA_MEMCPY3D, copy_3d_params)

/* cuda.h: the synchronous memset is asynchronous to the host except on page-locked host memory
 * or a Unified Memory region. Assumption: a destination not aligned to the element (16 and 32 bits)
 * is an invalid value. */
static CUresult memset_2d(CUdeviceptr dst, size_t pitch, unsigned value, unsigned element,
                          size_t width, size_t height, CUstream hStream, bool async)
{
    struct CUctx_st *ctx = NULL;
    struct CUstream_st *s = NULL;
    end_t d = {0};
    fc_op_t *op;
    CUresult rc;

    if ((rc = fc_ctx_current(&ctx)) || (rc = fc_stream_get(ctx, hStream, &s)))
        return rc;
    if (width == 0 || height == 0)
        return CUDA_SUCCESS;
    if (dst % element != 0 || (height > 1 && (pitch < width * element || pitch % element != 0)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = device_end(ctx, dst, span_of(pitch, width * element, height), &d)))
        return rc;
    op = calloc(1, sizeof *op);
    if (op == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->kind = FC_OP_MEMSET;
    op->u.memset.dst = dst;
    op->u.memset.pitch = pitch;
    op->u.memset.width = width;
    op->u.memset.height = height;
    op->u.memset.value = value;
    op->u.memset.element = element;
    fc_stream_enqueue(s, op);
    if (!async && (d.side == SIDE_PINNED || d.managed))
        return fc_stream_run(s, op->seq);
    return CUDA_SUCCESS;
}

/* A memset of @p _element bytes a value and its Async form, on a range (1D) or a pitched region
 * (2D). */
#define MEMSET_1D(_name, _async_name, _type, _element)                                             \
    FC_EXPORT CUresult CUDAAPI _name(CUdeviceptr dstDevice, _type value, size_t N)                 \
    {                                                                                              \
        FC_BEGIN(_name, true);                                                                     \
        rc = memset_2d(dstDevice, N * _element, value, _element, N, 1, NULL, false);               \
        FC_END();                                                                                  \
    }                                                                                              \
    FC_EXPORT CUresult CUDAAPI _async_name(CUdeviceptr dstDevice, _type value, size_t N,           \
                                           CUstream hStream)                                       \
    {                                                                                              \
        FC_BEGIN(_async_name, true);                                                               \
        rc = memset_2d(dstDevice, N * _element, value, _element, N, 1, hStream, true);             \
        FC_END();                                                                                  \
    }
#define MEMSET_2D(_name, _async_name, _type, _element)                                             \
    FC_EXPORT CUresult CUDAAPI _name(CUdeviceptr dstDevice, size_t dstPitch, _type value,          \
                                     size_t Width, size_t Height)                                  \
    {                                                                                              \
        FC_BEGIN(_name, true);                                                                     \
        rc = memset_2d(dstDevice, dstPitch, value, _element, Width, Height, NULL, false);          \
        FC_END();                                                                                  \
    }                                                                                              \
    FC_EXPORT CUresult CUDAAPI _async_name(CUdeviceptr dstDevice, size_t dstPitch, _type value,    \
                                           size_t Width, size_t Height, CUstream hStream)          \
    {                                                                                              \
        FC_BEGIN(_async_name, true);                                                               \
        rc = memset_2d(dstDevice, dstPitch, value, _element, Width, Height, hStream, true);        \
        FC_END();                                                                                  \
    }

MEMSET_1D(cuMemsetD8_v2, cuMemsetD8Async, unsigned char, 1)
MEMSET_1D(cuMemsetD16_v2, cuMemsetD16Async, unsigned short, 2)
MEMSET_1D(cuMemsetD32_v2, cuMemsetD32Async, unsigned int, 4)
MEMSET_2D(cuMemsetD2D8_v2, cuMemsetD2D8Async, unsigned char, 1)
MEMSET_2D(cuMemsetD2D16_v2, cuMemsetD2D16Async, unsigned short, 2)
MEMSET_2D(cuMemsetD2D32_v2, cuMemsetD2D32Async, unsigned int, 4)
