/* SPDX-License-Identifier: BSD-3-Clause */
/* Scopes: while one is entered, typejit's driver calls run in its context on the calling
 * thread, and leaving restores exactly the context the caller had; and which context, and which
 * instance of it, a thread works in. */
#include "gpu/cuda_internal.h"

static void scope_opened(tj_gpu_scope_t *scope, ctx_entry_t *e, bool quiet)
{
    scope->entry = e;
    scope->releasing = quiet;
    tj_gpu_thread.releasing += quiet;
    tj_gpu_thread.here = e;
    scope->prev_scope = tj_gpu_thread.innermost;
    tj_gpu_thread.innermost = scope;
}

static tj_status_t enter(tj_gpu_ctx_t ctx, bool quiet, tj_gpu_scope_t *scope)
{
    CUcontext cur = NULL, popped;
    ctx_entry_t *e;
    tj_status_t st;

    scope->entry = NULL;
    scope->prev = tj_gpu_thread.here;
    scope->pushed = false;
    scope->releasing = false;
    scope->assumed = false;
    if ((st = tj_gpu_ready()) != TJ_OK)
        return st;
    if (ctx == NULL)
        return TJ_ERR_INVALID;
    if ((st = CU_CHECK(cuCtxGetCurrent(&cur))) != TJ_OK)
        return st;
    if (tj_gpu_thread.here == NULL)
        tj_gpu_thread.last_current = cur;
    if (cur != (CUcontext)ctx) {
        if (quiet && tj_gpu.cu.cuCtxPushCurrent((CUcontext)ctx) != CUDA_SUCCESS)
            return TJ_ERR_CONTEXT;
        if (!quiet && (st = CU_CHECK(cuCtxPushCurrent((CUcontext)ctx))) != TJ_OK)
            return st;
        scope->pushed = true;
    }
    e = tj_gpu_entry_for((CUcontext)ctx);
    if (e != NULL)
        tj_gpu_renew_if_replaced(e);
    if (e == NULL || atomic_load(&e->dead)) {
        if (scope->pushed)
            tj_gpu.cu.cuCtxPopCurrent(&popped);
        scope->pushed = false;
        return e == NULL ? TJ_ERR_CUDA : TJ_ERR_CONTEXT;
    }
    scope_opened(scope, e, quiet);
    return TJ_OK;
}

tj_status_t tj_gpu_enter(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    return enter(ctx, false, scope);
}

/* Open @p scope in @p e's context without a driver call, when the context current on the thread
 * is known to be it: the enclosing scope's (exactly known), or outside any scope the one this
 * thread had at typejit's last check (assumed). */
static inline bool enter_known(ctx_entry_t *e, tj_gpu_scope_t *scope)
{
    ctx_entry_t *here = tj_gpu_thread.here;
    CUcontext cur = here != NULL ? here->ctx : tj_gpu_thread.last_current;

    if (cur != e->ctx || atomic_load_explicit(&e->dead, memory_order_relaxed))
        return false;
    scope->prev = here;
    scope->pushed = false;
    scope->releasing = false;
    scope->assumed = here == NULL;
    scope_opened(scope, e, false);
    return true;
}

tj_status_t tj_gpu_enter_at(const tj_gpu_ptr_t *p, tj_gpu_scope_t *scope)
{
    ctx_entry_t *e = tj_gpu_thread.here;
    tj_status_t st;

    /* Inside a scope of the same context (entered for this buffer earlier in the call), or the
     * context assumed current, its instance known by the allocation seen in it before. */
    if (e == NULL || e->ctx != (CUcontext)p->ctx) {
        e = tj_gpu_entry_known((CUcontext)p->ctx);
        if (e == NULL || p->id == 0 ||
            atomic_load_explicit(&e->seen[p->id & (TJ_GPU_SEEN - 1)], memory_order_relaxed) !=
                p->id)
            goto slow;
    }
    if (enter_known(e, scope))
        return TJ_OK;
slow:
    if ((st = enter(p->ctx, false, scope)) == TJ_OK && p->id != 0)
        /* Entering checked the instance (tj_gpu_renew_if_replaced): the allocation is its. */
        atomic_store_explicit(&((ctx_entry_t *)scope->entry)->seen[p->id & (TJ_GPU_SEEN - 1)],
                              p->id, memory_order_relaxed);
    return st;
}

tj_status_t tj_gpu_enter_again(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    ctx_entry_t *e = tj_gpu_entry_known((CUcontext)ctx);

    if (e != NULL && enter_known(e, scope))
        return TJ_OK;
    return enter(ctx, false, scope);
}

bool tj_gpu_check_assumed(void)
{
    tj_gpu_scope_t *scope = tj_gpu_thread.innermost;
    CUcontext cur = NULL, ctx;

    if (scope == NULL || !scope->assumed)
        return false;
    scope->assumed = false;
    if (tj_gpu.cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return false;
    tj_gpu_thread.last_current = cur;
    ctx = tj_gpu_thread.here->ctx;
    if (cur == ctx || tj_gpu.cu.cuCtxPushCurrent(ctx) != CUDA_SUCCESS)
        return false;
    scope->pushed = true;
    return true;
}

tj_status_t tj_gpu_enter_to_release(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    return enter(ctx, true, scope);
}

tj_status_t tj_gpu_enter_instance_to_release(tj_gpu_ctx_t ctx, unsigned gen, tj_gpu_scope_t *scope)
{
    tj_status_t st = enter(ctx, true, scope);

    if (st == TJ_OK && atomic_load(&tj_gpu_thread.here->gen) != gen) {
        tj_gpu_leave(scope);
        st = TJ_ERR_CONTEXT;
    }
    return st;
}

void tj_gpu_leave(tj_gpu_scope_t *scope)
{
    CUcontext popped;
    if (scope->pushed) {
        CU_CHECK(cuCtxPopCurrent(&popped));
        scope->pushed = false;
    }
    if (scope->releasing) {
        tj_gpu_thread.releasing--;
        scope->releasing = false;
    }
    tj_gpu_thread.here = scope->prev;
    tj_gpu_thread.innermost = scope->prev_scope;
}

unsigned tj_gpu_generation(void)
{
    ctx_entry_t *e = tj_gpu_entry_here();
    return e != NULL ? atomic_load(&e->gen) : 0;
}

tj_gpu_ctx_t tj_gpu_current(void)
{
    CUcontext cur = NULL;
    if (tj_gpu_thread.here != NULL)
        return tj_gpu_thread.here->ctx;
    if (tj_gpu_ready() != TJ_OK || tj_gpu.cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return NULL;
    return cur;
}

tj_gpu_ctx_t tj_gpu_current_instance(unsigned *generation)
{
    ctx_entry_t *e = tj_gpu_thread.here;

    if (e == NULL && (e = tj_gpu_entry_current()) == NULL) {
        *generation = 0;
        return tj_gpu_current();
    }
    *generation = atomic_load(&e->gen);
    return e->ctx;
}

int tj_gpu_current_device(void)
{
    CUdevice dev;
    if (tj_gpu_thread.here != NULL)
        return tj_gpu_thread.here->ordinal;
    if (tj_gpu_current() == NULL || tj_gpu.cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
        return -1;
    return (int)dev;
}
