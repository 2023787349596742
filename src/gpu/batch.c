/* SPDX-License-Identifier: BSD-3-Clause */
/* Batches: the contexts a call left work in, each waited on once. A batch is one call's and
 * lives on its stack: a thread's wait covers its own launches (and, on a shared stream, any
 * other thread's launched before them, which only finishes those sooner), and a thread never
 * skips a wait because another thread waited. */
#include "gpu/batch.h"

void tj_batch_init(tj_batch_t *b)
{
    b->nctx = 0;
    b->deferred = 0;
}

tj_status_t tj_batch_defer_wait(tj_batch_t *b)
{
    tj_gpu_ctx_t ctx;
    int i = 0;

    if (b == NULL || (ctx = tj_gpu_current()) == NULL)
        return tj_gpu_sync();
    while (i < b->nctx && b->ctx[i] != ctx)
        i++;
    if (i == TJ_BATCH_CONTEXTS)
        return tj_gpu_sync();
    if (i == b->nctx)
        b->ctx[b->nctx++] = ctx;
    b->deferred++;
    return TJ_OK;
}

tj_status_t tj_batch_wait(tj_batch_t *b)
{
    tj_status_t st = TJ_OK;

    /* Every context is waited on, also after a failure, so that nothing of the call is still
     * running when its staging goes back to the pool. */
    for (int i = 0; i < b->nctx; i++) {
        tj_gpu_scope_t scope;
        tj_status_t one = tj_gpu_enter_again(b->ctx[i], &scope);
        if (one == TJ_OK) {
            one = tj_gpu_sync();
            tj_gpu_leave(&scope);
        }
        if (st == TJ_OK)
            st = one;
    }
    tj_batch_init(b);
    return st;
}
