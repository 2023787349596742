/* SPDX-License-Identifier: BSD-3-Clause */
/* Streams: cudaStream_t is the driver's CUstream. The legacy default stream is the driver's; the
 * per-thread default stream, which the test driver does not have, is a stream of the runtime's
 * own per thread and context, made at first use: a blocking stream (CUDA Runtime API, "Stream
 * synchronization behavior": the per-thread default stream "is not a non-blocking stream and will
 * synchronize with the legacy default stream", and with no other stream). */
#include <pthread.h>
#include <stdlib.h>

#include "cudart.h"

#define PER_THREAD_MAX 16

/* The calling thread's per-thread default streams, one per context it used one in. */
typedef struct {
    CUcontext ctx;
    int device;
    unsigned generation; /* rt_device_generation when it was made */
    CUstream stream;
} per_thread_t;

static _Thread_local per_thread_t per_thread[PER_THREAD_MAX];
static _Thread_local int n_per_thread;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* At thread exit, its per-thread default streams go with it (those of a context still alive). */
static void thread_exit(void *unused)
{
    (void)unused;
    for (int i = 0; i < n_per_thread; i++) {
        per_thread_t *p = &per_thread[i];
        CUcontext popped;
        if (p->generation != rt_device_generation(p->device) || rt_drv.cuCtxPushCurrent == NULL ||
            rt_drv.cuCtxPopCurrent == NULL || rt_drv.cuStreamDestroy == NULL ||
            rt_drv.cuCtxPushCurrent(p->ctx) != CUDA_SUCCESS)
            continue;
        rt_drv.cuStreamDestroy(p->stream);
        rt_drv.cuCtxPopCurrent(&popped);
    }
    n_per_thread = 0;
}

static void make_key(void)
{
    pthread_key_create(&exit_key, thread_exit);
}

static cudaError_t per_thread_stream(CUstream *out)
{
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    per_thread_t *slot = NULL;
    cudaError_t e = rt_error(rt_drv.cuCtxGetCurrent(&ctx));

    if (e == cudaSuccess)
        e = rt_error(rt_drv.cuCtxGetDevice(&dev));
    if (e != cudaSuccess)
        return e;
    for (int i = 0; i < n_per_thread; i++)
        if (per_thread[i].ctx == ctx) {
            slot = &per_thread[i];
            if (slot->generation == rt_device_generation(dev)) {
                *out = slot->stream;
                return cudaSuccess;
            }
        }
    if (slot == NULL) {
        if (n_per_thread == PER_THREAD_MAX)
            return cudaErrorMemoryAllocation;
        slot = &per_thread[n_per_thread];
    }
    e = RT_CALL(cuStreamCreate, &slot->stream, CU_STREAM_DEFAULT);
    if (e != cudaSuccess)
        return e;
    if (slot == &per_thread[n_per_thread]) {
        pthread_once(&key_once, make_key);
        pthread_setspecific(exit_key, per_thread);
        n_per_thread++;
    }
    slot->ctx = ctx;
    slot->device = dev;
    slot->generation = rt_device_generation(dev);
    *out = slot->stream;
    return cudaSuccess;
}

cudaError_t rt_stream(cudaStream_t s, bool per_thread_default, CUstream *out)
{
    if (s == cudaStreamPerThread || (s == NULL && per_thread_default))
        return per_thread_stream(out);
    /* 0 and cudaStreamLegacy are the driver's legacy stream (CU_STREAM_LEGACY has the value of
     * cudaStreamLegacy); any other handle is the driver's to check. */
    *out = (CUstream)s;
    return cudaSuccess;
}

/* Neither default stream can be created, destroyed or have flags. */
static bool is_default(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* cudaStreamNonBlocking and CU_STREAM_NON_BLOCKING have the same value. CUDA Runtime API, Stream
 * Management, cudaStreamCreateWithPriority: a priority outside the device's range is clamped to it
 * (the driver does it). */
static cudaError_t create(cudaStream_t *pStream, unsigned int flags, bool with_priority,
                          int priority)
{
    CUstream s = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess &&
        (pStream == NULL || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking)))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = with_priority ? RT_CALL(cuStreamCreateWithPriority, &s, flags, priority)
                          : RT_CALL(cuStreamCreate, &s, flags);
    if (e == cudaSuccess)
        *pStream = (cudaStream_t)s;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    return create(pStream, flags, false, 0);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    return create(pStream, cudaStreamDefault, false, 0);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream,
                                                             unsigned int flags, int priority)
{
    return create(pStream, flags, true, priority);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                                                 int *greatestPriority)
{
    RT_FORWARD(cuCtxGetStreamPriorityRange, leastPriority, greatestPriority);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && is_default(stream))
        e = cudaErrorInvalidResourceHandle;
    if (e == cudaSuccess)
        e = RT_CALL(cuStreamDestroy, (CUstream)stream);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, false, cuStreamSynchronize, s);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, true, cuStreamSynchronize, s);
}

/* cudaSuccess when the stream's work is done, cudaErrorNotReady while it is not. */
RT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, false, cuStreamQuery, s);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, true, cuStreamQuery, s);
}

/* cudaEventWaitDefault and CU_EVENT_WAIT_DEFAULT: 0; the external flag is for graph capture,
 * which the stand-in does not have. */
static cudaError_t wait_event(cudaStream_t stream, cudaEvent_t event, unsigned int flags,
                              bool per_thread_default)
{
    CUstream s = NULL;
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && flags != cudaEventWaitDefault)
        e = flags == cudaEventWaitExternal ? cudaErrorNotSupported : cudaErrorInvalidValue;
    if (e == cudaSuccess && (e = rt_stream(stream, per_thread_default, &s)) == cudaSuccess)
        e = RT_CALL(cuStreamWaitEvent, s, (CUevent)event, 0);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                                    unsigned int flags)
{
    return wait_event(stream, event, flags, false);
}

RT_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                                         unsigned int flags)
{
    return wait_event(stream, event, flags, true);
}

/* cudaStreamGetFlags and cudaStreamGetPriority: the default streams have no flags or priority of
 * their own to ask the driver for: both block (legacy stream semantics), at priority 0. */
#define STREAM_PROPERTY(_name, _driver, _type, _default)                                           \
    RT_EXPORT cudaError_t CUDARTAPI _name(cudaStream_t hStream, _type *out)                        \
    {                                                                                              \
        cudaError_t e = rt_enter(NULL);                                                            \
        if (e == cudaSuccess && out == NULL)                                                       \
            e = cudaErrorInvalidValue;                                                             \
        if (e == cudaSuccess && is_default(hStream))                                               \
            *out = (_default);                                                                     \
        else if (e == cudaSuccess)                                                                 \
            e = RT_CALL(_driver, (CUstream)hStream, out);                                          \
        return rt_return(e);                                                                       \
    }

STREAM_PROPERTY(cudaStreamGetFlags, cuStreamGetFlags, unsigned int, cudaStreamDefault)
STREAM_PROPERTY(cudaStreamGetPriority, cuStreamGetPriority, int, 0)
