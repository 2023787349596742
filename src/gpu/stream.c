/* SPDX-License-Identifier: BSD-3-Clause */
/* typejit's stream in the current scope's context, and the wait for the work queued there: the
 * one place typejit waits for its stream. */
#include "gpu/cuda_internal.h"

CUstream tj_gpu_stream(void)
{
    ctx_entry_t *e = tj_gpu_entry_here();
    return e != NULL ? atomic_load(&e->stream) : NULL;
}

tj_status_t tj_gpu_sync(void)
{
    tj_status_t st;
    double t0 = tj_gpu_wait_begin();

    /* Every wait is counted, and its time. */
    IN_SCOPE(st, cuStreamSynchronize(tj_gpu_stream()));
    tj_gpu_wait_end(t0);
    return st;
}
