/* SPDX-License-Identifier: BSD-3-Clause */
/* Events: cudaEvent_t is the driver's CUevent, and the event flags have the driver's values. */
#include "cudart.h"

RT_EXPORT cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    CUevent ev = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && (event == NULL || (flags & ~known) != 0))
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuEventCreate, &ev, flags);
    if (e == cudaSuccess)
        *event = (cudaEvent_t)ev;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, false, cuEventRecord, (CUevent)event, s);
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
    RT_FORWARD_STREAM(stream, true, cuEventRecord, (CUevent)event, s);
}

/* cudaSuccess once the work the event captured is done, cudaErrorNotReady before. */
RT_EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
    RT_FORWARD(cuEventQuery, (CUevent)event);
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    RT_FORWARD(cuEventSynchronize, (CUevent)event);
}

/* The driver's newest form of the call (cuEventElapsedTime_v2 from 12.8 on). */
static cudaError_t elapsed(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    cudaError_t e = rt_enter(NULL);
    if (e == cudaSuccess && ms == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && rt_drv.cuEventElapsedTime_v2 != NULL)
        e = RT_CALL(cuEventElapsedTime_v2, ms, (CUevent)start, (CUevent)end);
    else if (e == cudaSuccess)
        e = RT_CALL(cuEventElapsedTime_v1, ms, (CUevent)start, (CUevent)end);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    return elapsed(ms, start, end);
}

#if CUDART_VERSION < 13000
RT_EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime_v2(float *ms, cudaEvent_t start,
                                                        cudaEvent_t end)
{
    return elapsed(ms, start, end);
}
#endif

RT_EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
    RT_FORWARD(cuEventDestroy, (CUevent)event);
}
