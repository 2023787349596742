/* SPDX-License-Identifier: BSD-3-Clause */
/* The records of the contexts typejit works in, one stream each, made anew in a context's new
 * instance; the primary contexts typejit retains. */
#include "gpu/cuda_internal.h"

#include "util/log.h"

/* A primary context in use is retained, so that it outlives the application's last release
 * until tj_gpu_finalize has destroyed typejit's stream and modules in it. */
ctx_entry_t *tj_gpu_entry_for(CUcontext ctx)
{
    ctx_entry_t *e;
    unsigned long long id;
    CUstream stream;
    CUcontext primary;
    unsigned flags;
    int n, active = 0;

    if ((e = tj_gpu_entry_known(ctx)) != NULL)
        return e;
    pthread_mutex_lock(&tj_gpu.entry_lock);
    n = atomic_load_explicit(&tj_gpu.nentries, memory_order_relaxed);
    if ((e = tj_gpu_entry_among(ctx, n)) != NULL)
        goto out_unlock;
    if (n == TJ_GPU_MAX_CONTEXTS) {
        tj_log_warn_once("more than %d cuda contexts in use; buffers of the others go through "
                         "the system MPI's path",
                         TJ_GPU_MAX_CONTEXTS);
        goto out_unlock;
    }
    e = &tj_gpu.entries[n];
    *e = (ctx_entry_t){.ctx = ctx};
    atomic_init(&e->dead, false);
    atomic_init(&e->gen, 1);
    for (int i = 0; i < TJ_GPU_SEEN; i++)
        atomic_init(&e->seen[i], 0);
    if (tj_gpu.cu.cuCtxGetId == NULL || tj_gpu.cu.cuCtxGetId(ctx, &id) != CUDA_SUCCESS)
        id = 0;
    atomic_init(&e->id, id);
    /* A blocking stream: work the application queued on the legacy default stream before its
     * MPI call is ordered before typejit's. */
    if (CU_CHECK(cuCtxGetDevice(&e->dev)) != TJ_OK ||
        CU_CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT)) != TJ_OK) {
        e = NULL;
        goto out_unlock;
    }
    atomic_init(&e->stream, stream);
    e->ordinal = (int)e->dev;
    /* Retaining an inactive primary context would create one: only an active one can be the
     * context of a live allocation, so only then is it compared. */
    if (tj_gpu.cu.cuDevicePrimaryCtxGetState(e->dev, &flags, &active) == CUDA_SUCCESS && active &&
        CU_CHECK(cuDevicePrimaryCtxRetain(&primary, e->dev)) == TJ_OK) {
        if (primary == ctx)
            e->retained = true;
        else
            tj_gpu.cu.cuDevicePrimaryCtxRelease(e->dev);
    }
    atomic_store_explicit(&tj_gpu.nentries, n + 1, memory_order_release);
out_unlock:
    pthread_mutex_unlock(&tj_gpu.entry_lock);
    return e;
}

/* The application reset or replaced the context: what typejit made in the old instance went
 * with it and is never touched again (staging and kernels compare generations), and a sticky
 * error of the old instance is gone too. */
void tj_gpu_renew_if_replaced(ctx_entry_t *e)
{
    unsigned long long id;
    CUstream fresh;

    if (tj_gpu.cu.cuCtxGetId == NULL || tj_gpu.cu.cuCtxGetId(e->ctx, &id) != CUDA_SUCCESS ||
        id == atomic_load(&e->id))
        return;
    pthread_mutex_lock(&tj_gpu.entry_lock);
    if (id != atomic_load(&e->id) && CU_CHECK(cuStreamCreate(&fresh, CU_STREAM_DEFAULT)) == TJ_OK) {
        /* The allocations seen were the old instance's. */
        for (int i = 0; i < TJ_GPU_SEEN; i++)
            atomic_store(&e->seen[i], 0);
        /* The stream first: a thread that sees the new instance's id uses its stream. */
        atomic_store(&e->stream, fresh);
        atomic_store(&e->id, id);
        atomic_fetch_add(&e->gen, 1);
        atomic_store(&e->dead, false);
        tj_log_info("the cuda context of device %d was reset or replaced; typejit's stream, "
                    "kernels and staging there are made anew",
                    e->ordinal);
    }
    pthread_mutex_unlock(&tj_gpu.entry_lock);
}

ctx_entry_t *tj_gpu_entry_current(void)
{
    CUcontext cur = NULL;
    if (tj_gpu_ready() != TJ_OK || tj_gpu.cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur == NULL)
        return NULL;
    return tj_gpu_entry_for(cur);
}

/* Memory without a context of its own runs in this context, released by tj_gpu_finalize.
 * Retaining it creates it when the application has not, as any user of the device's primary
 * context would. */
tj_status_t tj_gpu_primary_of(int ordinal, CUcontext *ctx)
{
    CUcontext c = atomic_load_explicit(&tj_gpu.primaries[ordinal], memory_order_acquire);
    CUdevice dev;
    tj_status_t st = TJ_OK;

    if (c == NULL) {
        pthread_mutex_lock(&tj_gpu.entry_lock);
        c = atomic_load_explicit(&tj_gpu.primaries[ordinal], memory_order_relaxed);
        if (c == NULL && (st = CU_CHECK(cuDeviceGet(&dev, ordinal))) == TJ_OK &&
            (st = CU_CHECK(cuDevicePrimaryCtxRetain(&c, dev))) == TJ_OK)
            atomic_store_explicit(&tj_gpu.primaries[ordinal], c, memory_order_release);
        pthread_mutex_unlock(&tj_gpu.entry_lock);
    }
    if (st == TJ_OK)
        *ctx = c;
    return st;
}

void tj_gpu_contexts_release(void)
{
    CUcontext popped;
    int n;

    pthread_mutex_lock(&tj_gpu.entry_lock);
    n = atomic_load(&tj_gpu.nentries);
    for (int i = 0; i < n; i++) {
        ctx_entry_t *e = &tj_gpu.entries[i];
        /* Plain calls: an application may have destroyed its own context already, and a
         * dead context refuses everything; neither is worth a warning at exit. */
        if (!atomic_load(&e->dead) && tj_gpu.cu.cuCtxPushCurrent(e->ctx) == CUDA_SUCCESS) {
            tj_gpu.cu.cuStreamDestroy(atomic_load(&e->stream));
            tj_gpu.cu.cuCtxPopCurrent(&popped);
        }
        if (e->retained)
            tj_gpu.cu.cuDevicePrimaryCtxRelease(e->dev);
    }
    atomic_store(&tj_gpu.nentries, 0);
    for (int i = 0; i < tj_gpu.nused; i++)
        tj_gpu.cu.cuDevicePrimaryCtxRelease(tj_gpu.used[i]);
    tj_gpu.nused = 0;
    for (int i = 0; i < tj_gpu.ndevices; i++) {
        CUdevice dev;
        if (atomic_load(&tj_gpu.primaries[i]) != NULL &&
            tj_gpu.cu.cuDeviceGet(&dev, i) == CUDA_SUCCESS)
            tj_gpu.cu.cuDevicePrimaryCtxRelease(dev);
        atomic_store(&tj_gpu.primaries[i], NULL);
    }
    pthread_mutex_unlock(&tj_gpu.entry_lock);
}
