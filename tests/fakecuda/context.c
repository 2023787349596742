/* SPDX-License-Identifier: BSD-3-Clause */
/* Contexts: primary contexts with reference counts, created contexts, the per-thread stack. */
#include <stdlib.h>

#include "fakecuda.h"

#define STACK_MAX 64

static struct CUctx_st primaries[FC_MAX_DEVICES];
static struct CUctx_st *created; /* every cuCtxCreate context, destroyed ones included */

/* The calling thread's context stack; the top is the current context. */
static _Thread_local struct CUctx_st *stack[STACK_MAX];
static _Thread_local int depth;

/* Handles are never freed, so a destroyed one is still recognised (and refused). */
static bool known(CUcontext ctx)
{
    if (ctx >= &primaries[0] && ctx < &primaries[FC_MAX_DEVICES])
        return ctx->magic == FC_MAGIC_CTX;
    for (struct CUctx_st *c = created; c != NULL; c = c->next)
        if (c == ctx)
            return true;
    return false;
}

struct CUctx_st *fc_ctx_top(void)
{
    return depth > 0 ? stack[depth - 1] : NULL;
}

CUresult fc_ctx_current(struct CUctx_st **ctx)
{
    struct CUctx_st *top = fc_ctx_top();
    if (top == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    /* cuda.h: "the context current to the calling thread has been destroyed using cuCtxDestroy,
     * or is a primary context which has not yet been initialized". */
    if (!top->active)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (top->sticky != CUDA_SUCCESS)
        return top->sticky;
    *ctx = top;
    return CUDA_SUCCESS;
}

void fc_ctx_poison(struct CUctx_st *ctx, CUresult code)
{
    if (ctx->sticky == CUDA_SUCCESS)
        ctx->sticky = code;
    fc_ctx_drop_work(ctx);
}

/* cuda.h: cuCtxGetId's ID is "unique for the life of the program for this instance of CUDA".
 * Assumption: a primary context reset (cuDevicePrimaryCtxReset) ends that context, and the one
 * the handle refers to afterwards is a new instance with a new ID, as a cuCtxCreate after a
 * cuCtxDestroy would be. */
static unsigned long long last_id;

static void activate(struct CUctx_st *ctx)
{
    ctx->id = ++last_id;
    ctx->npeers = 0;
    ctx->active = true;
    ctx->sticky = CUDA_SUCCESS;
    ctx->null_stream = fc_stream_new_null(ctx);
}

/* Everything the context owns goes; the handle stays so later use is recognised. */
static void teardown(struct CUctx_st *ctx)
{
    fc_ctx_drop_work(ctx);
    fc_module_release_ctx(ctx);
    fc_stream_release_ctx(ctx);
    fc_mem_release_ctx(ctx);
    ctx->active = false;
    ctx->sticky = CUDA_SUCCESS;
}

static struct CUctx_st *primary(CUdevice dev)
{
    struct CUctx_st *ctx = &primaries[dev];
    if (ctx->magic != FC_MAGIC_CTX) {
        ctx->magic = FC_MAGIC_CTX;
        ctx->device = dev;
        ctx->primary = true;
    }
    return ctx;
}

static bool valid_device(CUdevice dev)
{
    return dev >= 0 && dev < fc_config.ndevices;
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FC_BEGIN(cuDevicePrimaryCtxRetain, true);
    if (pctx == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (!valid_device(dev)) {
        rc = CUDA_ERROR_INVALID_DEVICE;
    } else {
        struct CUctx_st *ctx = primary(dev);
        if (ctx->refcount++ == 0)
            activate(ctx);
        *pctx = ctx;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    FC_BEGIN(cuDevicePrimaryCtxRelease_v2, true);
    if (!valid_device(dev)) {
        rc = CUDA_ERROR_INVALID_DEVICE;
    } else {
        struct CUctx_st *ctx = primary(dev);
        /* cuda.h: releasing a primary context not retained fails with INVALID_CONTEXT. */
        if (ctx->refcount == 0)
            rc = CUDA_ERROR_INVALID_CONTEXT;
        else if (--ctx->refcount == 0)
            teardown(ctx);
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
                                                      int *active)
{
    FC_BEGIN(cuDevicePrimaryCtxGetState, true);
    if (flags == NULL || active == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (!valid_device(dev)) {
        rc = CUDA_ERROR_INVALID_DEVICE;
    } else {
        struct CUctx_st *ctx = primary(dev);
        *flags = ctx->flags;
        *active = ctx->active ? 1 : 0;
    }
    FC_END();
}

/* cuda.h: destroys every resource of the primary context but does not release it; a retained
 * context is usable again at once, empty. Not after a fault: cuda.h says of
 * CUDA_ERROR_ILLEGAL_ADDRESS (and the other sticky errors) that the process is left in an
 * inconsistent state, any further CUDA work returns the same error, and the process must be
 * terminated to use CUDA again; so the reset of a poisoned context returns its error and the
 * context stays poisoned (some drivers recover there; a program may not count on it). */
FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    FC_BEGIN(cuDevicePrimaryCtxReset_v2, true);
    if (!valid_device(dev)) {
        rc = CUDA_ERROR_INVALID_DEVICE;
    } else if (primary(dev)->active && primary(dev)->sticky != CUDA_SUCCESS) {
        rc = primary(dev)->sticky;
    } else {
        struct CUctx_st *ctx = primary(dev);
        if (ctx->active)
            teardown(ctx);
        if (ctx->refcount > 0)
            activate(ctx);
    }
    FC_END();
}

static CUresult create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    struct CUctx_st *ctx;

    if (pctx == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (depth == STACK_MAX)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx->magic = FC_MAGIC_CTX;
    ctx->device = dev;
    ctx->flags = flags;
    ctx->next = created;
    created = ctx;
    activate(ctx);
    /* cuda.h: the new context is pushed onto the calling thread's stack. */
    stack[depth++] = ctx;
    *pctx = ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FC_BEGIN(cuCtxCreate_v2, true);
    rc = create(pctx, flags, dev);
    FC_END();
}

/* CUctxCreateParams (execution affinity, CIG) came with CUDA 12.5; cuCtxCreate maps here from the
 * 13.0 headers on. Affinity and CIG are not emulated: asking for them is NOT_SUPPORTED. */
#if FAKECUDA_VERSION >= 12050
FC_EXPORT CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                          unsigned int flags, CUdevice dev)
{
    FC_BEGIN(cuCtxCreate_v4, true);
    if (ctxCreateParams != NULL &&
        (ctxCreateParams->numExecAffinityParams != 0 || ctxCreateParams->cigParams != NULL))
        rc = CUDA_ERROR_NOT_SUPPORTED;
    else
        rc = create(pctx, flags, dev);
    FC_END();
}
#endif

FC_EXPORT CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    FC_BEGIN(cuCtxDestroy_v2, true);
    /* A primary context is released, never destroyed (assumption: the driver refuses it as an
     * invalid context, which cuda.h lists among cuCtxDestroy's errors). */
    if (ctx == NULL || !known(ctx) || ctx->primary || !ctx->active) {
        rc = CUDA_ERROR_INVALID_CONTEXT;
    } else {
        teardown(ctx);
        /* cuda.h: popped if current to the calling thread; other threads keep it and get
         * CONTEXT_IS_DESTROYED. */
        if (fc_ctx_top() == ctx)
            depth--;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    FC_BEGIN(cuCtxSetCurrent, true);
    if (ctx != NULL && !known(ctx)) {
        rc = CUDA_ERROR_INVALID_CONTEXT;
    } else if (ctx == NULL) {
        /* cuda.h: with NULL, pops the top of the stack (a no-op on an empty one). */
        if (depth > 0)
            depth--;
    } else if (depth == 0) {
        stack[depth++] = ctx;
    } else {
        stack[depth - 1] = ctx;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    FC_BEGIN(cuCtxGetCurrent, true);
    rc = FC_OUT(pctx, fc_ctx_top());
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    FC_BEGIN(cuCtxPushCurrent_v2, true);
    if (ctx == NULL || !known(ctx))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (depth == STACK_MAX)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else
        stack[depth++] = ctx;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FC_BEGIN(cuCtxPopCurrent_v2, true);
    if (depth == 0) {
        rc = CUDA_ERROR_INVALID_CONTEXT;
    } else {
        depth--;
        if (pctx != NULL)
            *pctx = stack[depth];
    }
    FC_END();
}

/* The queries of the current context: INVALID_VALUE for a NULL output first, then the context. */
#define CTX_QUERY(_name, _type, _field)                                                            \
    FC_EXPORT CUresult CUDAAPI _name(_type *out)                                                   \
    {                                                                                              \
        struct CUctx_st *ctx = NULL;                                                               \
        FC_BEGIN(_name, true);                                                                     \
        if (out == NULL)                                                                           \
            rc = CUDA_ERROR_INVALID_VALUE;                                                         \
        else if ((rc = fc_ctx_current(&ctx)) == CUDA_SUCCESS)                                      \
            *out = ctx->_field;                                                                    \
        FC_END();                                                                                  \
    }

CTX_QUERY(cuCtxGetDevice, CUdevice, device)
CTX_QUERY(cuCtxGetFlags, unsigned int, flags)

FC_EXPORT CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    FC_BEGIN(cuCtxGetId, true);
    /* cuda.h: NULL asks for the current context's ID. */
    if (ctxId == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (ctx == NULL)
        rc = fc_ctx_current(&ctx);
    else if (!known(ctx))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (!ctx->active)
        rc = CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (rc == CUDA_SUCCESS)
        *ctxId = ctx->id;
    FC_END();
}

bool fc_ctx_peer(const struct CUctx_st *ctx, const struct CUctx_st *peer)
{
    for (int i = 0; i < ctx->npeers; i++)
        if (ctx->peers[i] == peer && ctx->peer_ids[i] == peer->id && peer->active)
            return true;
    return false;
}

/* cuda.h: "on success all allocations from peerContext will immediately be accessible by the
 * current context"; "access granted by this call is unidirectional"; PEER_ACCESS_UNSUPPORTED when
 * cuDeviceCanAccessPeer says no (two contexts of one device included), ALREADY_ENABLED,
 * TOO_MANY_PEERS, INVALID_CONTEXT "if there is no current context, peerContext is not a valid
 * context, or if the current context is peerContext", INVALID_VALUE "if Flags is not 0". The
 * access ends with either context's instance (a destroyed or reset context). */
FC_EXPORT CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuCtxEnablePeerAccess, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (peerContext == NULL || !known(peerContext) || !peerContext->active ||
             peerContext == ctx)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (Flags != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (!fc_device_can_access(ctx->device, peerContext->device))
        rc = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    else if (fc_ctx_peer(ctx, peerContext))
        rc = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    else {
        int free_slot = -1;
        for (int i = 0; i < ctx->npeers && free_slot < 0; i++)
            if (!fc_ctx_peer(ctx, ctx->peers[i]))
                free_slot = i;
        if (free_slot < 0 && ctx->npeers == FC_MAX_PEERS)
            rc = CUDA_ERROR_TOO_MANY_PEERS;
        else {
            if (free_slot < 0)
                free_slot = ctx->npeers++;
            ctx->peers[free_slot] = peerContext;
            ctx->peer_ids[free_slot] = peerContext->id;
        }
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuCtxDisablePeerAccess, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (peerContext == NULL || !known(peerContext))
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (!fc_ctx_peer(ctx, peerContext))
        rc = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    else
        for (int i = 0; i < ctx->npeers; i++)
            if (ctx->peers[i] == peerContext)
                ctx->peers[i] = NULL;
    FC_END();
}

/* cuda.h: the flags of the primary context (CU_CTX_SCHED_*, CU_CTX_MAP_HOST,
 * CU_CTX_LMEM_RESIZE_TO_MAX, ...), which cudaSetDeviceFlags sets; they are the emulation's to
 * remember, not to act on. */
FC_EXPORT CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    FC_BEGIN(cuDevicePrimaryCtxSetFlags_v2, true);
    if (!valid_device(dev))
        rc = CUDA_ERROR_INVALID_DEVICE;
    else if ((flags & ~(unsigned)CU_CTX_FLAGS_MASK) != 0 ||
             (flags & CU_CTX_SCHED_MASK) > CU_CTX_SCHED_BLOCKING_SYNC ||
             (flags & CU_CTX_SCHED_MASK) == 3)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        primary(dev)->flags = flags;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuCtxSynchronize, true);
    if ((rc = fc_ctx_current(&ctx)) == CUDA_SUCCESS)
        rc = fc_ctx_run_all(ctx);
    FC_END();
}
