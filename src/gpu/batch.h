/* SPDX-License-Identifier: BSD-3-Clause */
/* Batches: the contexts a call left device work in, each waited on once. The device work of a
 * send, a collective or a completion call (pack and unpack kernels, and the copies around them)
 * is launched region by region on the streams of the contexts it belongs to, and waited for once,
 * before the MPI is given the bytes or the application its buffer (move/wait_once.h). MPI_Pack and
 * MPI_Unpack wait in the call itself (no batch). */
#ifndef TJ_GPU_BATCH_H
#define TJ_GPU_BATCH_H

#include <stdbool.h>

#include "gpu/cuda.h"

/* Contexts one batch waits on; work in another one waits for itself. */
#define TJ_BATCH_CONTEXTS 4

/* A call's work left to one wait: on the caller's stack, never shared between threads, so that
 * whether a thread has waited never depends on another thread's calls. */
typedef struct {
    tj_gpu_ctx_t ctx[TJ_BATCH_CONTEXTS]; /* contexts with work to wait for */
    int nctx;
    int deferred; /* launches and copies left to the wait */
} tj_batch_t;

void tj_batch_init(tj_batch_t *b);

/* After queuing work in the current scope's context: leave the wait to @p b, or, without a batch
 * (NULL) or with one that holds as many contexts as it can, wait now. The status of the wait
 * (TJ_OK when it was left to the batch). */
tj_status_t tj_batch_defer_wait(tj_batch_t *b);

/* Wait once on the stream of each context @p b holds, then empty it. TJ_OK when everything it
 * was left completed; otherwise (an injected or real driver error, a context that died) the
 * effects of the work are unknown, and the caller does it again, each step waiting for itself. */
tj_status_t tj_batch_wait(tj_batch_t *b);

#endif /* TJ_GPU_BATCH_H */
