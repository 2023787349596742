/* SPDX-License-Identifier: BSD-3-Clause */
/* Events of typejit's streams: the point of a context's stream up to which its work has run.
 * They are kept for reuse in one process-wide list under a spinning lock (each section a few
 * loads and stores), so that a steady deferred send creates none. */
#include "gpu/cuda_internal.h"

#include <stdlib.h>

struct tj_gpu_event {
    CUevent event;
    CUcontext ctx;
    unsigned gen;     /* the context's instance it was made in */
    atomic_int refs;  /* holders; the last release puts it back */
    atomic_bool done; /* a query or wait saw it complete */
    /* The context's event ticks just before and just after its record: an event whose record
     * ended before another's began is before it on the stream. */
    unsigned long long begun, ended;
    struct tj_gpu_event *next;
};

static void lock_events(void)
{
    while (atomic_flag_test_and_set_explicit(&tj_gpu.events_lock, memory_order_acquire))
        ;
}

static void unlock_events(void)
{
    atomic_flag_clear_explicit(&tj_gpu.events_lock, memory_order_release);
}

/* An event of the current scope's context and instance from the list, or NULL. */
static tj_gpu_event_t *event_reuse(CUcontext ctx, unsigned gen)
{
    tj_gpu_event_t *e, **at;

    lock_events();
    for (at = &tj_gpu.events_free; *at != NULL; at = &(*at)->next)
        if ((*at)->ctx == ctx && (*at)->gen == gen)
            break;
    e = *at;
    if (e != NULL)
        *at = e->next;
    unlock_events();
    return e;
}

tj_status_t tj_gpu_event_record(tj_gpu_event_t **out)
{
    ctx_entry_t *e = tj_gpu_thread.here;
    tj_gpu_event_t *ev;
    tj_status_t st;
    unsigned gen;

    if (e == NULL)
        return TJ_ERR_CONTEXT;
    gen = atomic_load(&e->gen);
    if ((ev = event_reuse(e->ctx, gen)) == NULL) {
        if ((ev = calloc(1, sizeof(*ev))) == NULL)
            return TJ_ERR_NOMEM;
        tj_gpu_check_assumed();
        if ((st = CU_CHECK(cuEventCreate(&ev->event, CU_EVENT_DISABLE_TIMING))) != TJ_OK) {
            free(ev);
            return st;
        }
        ev->ctx = e->ctx;
        ev->gen = gen;
    }
    ev->begun = atomic_fetch_add_explicit(&e->event_ticks, 1, memory_order_relaxed);
    IN_SCOPE(st, cuEventRecord(ev->event, tj_gpu_stream()));
    if (st != TJ_OK) {
        tj_gpu_event_release(ev);
        return st;
    }
    ev->ended = atomic_fetch_add_explicit(&e->event_ticks, 1, memory_order_relaxed);
    atomic_store_explicit(&ev->refs, 1, memory_order_relaxed);
    atomic_store_explicit(&ev->done, false, memory_order_relaxed);
    *out = ev;
    return TJ_OK;
}

tj_gpu_event_t *tj_gpu_event_hold(tj_gpu_event_t *ev)
{
    atomic_fetch_add_explicit(&ev->refs, 1, memory_order_relaxed);
    return ev;
}

/* Enter @p ev's context; TJ_ERR_CONTEXT when the instance it was made in is gone (a reset or
 * a sticky error took the work along). */
static tj_status_t event_enter(const tj_gpu_event_t *ev, tj_gpu_scope_t *scope)
{
    tj_status_t st = tj_gpu_enter_again(ev->ctx, scope);

    if (st == TJ_OK && atomic_load(&tj_gpu_thread.here->gen) != ev->gen) {
        tj_gpu_leave(scope);
        st = TJ_ERR_CONTEXT;
    }
    return st;
}

tj_status_t tj_gpu_event_query(tj_gpu_event_t *ev, bool *done)
{
    tj_gpu_scope_t scope;
    tj_status_t st;
    CUresult rc;

    *done = atomic_load_explicit(&ev->done, memory_order_acquire);
    if (*done)
        return TJ_OK;
    if ((st = event_enter(ev, &scope)) != TJ_OK)
        return st;
    rc = tj_gpu.cu.cuEventQuery(ev->event);
    if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY && tj_gpu_check_assumed())
        rc = tj_gpu.cu.cuEventQuery(ev->event);
    if (rc == CUDA_SUCCESS) {
        atomic_store_explicit(&ev->done, true, memory_order_release);
        *done = true;
    } else if (rc != CUDA_ERROR_NOT_READY) {
        st = tj_gpu_check(rc, "cuEventQuery", false, __FILE__, __LINE__);
    }
    tj_gpu_leave(&scope);
    return st;
}

tj_gpu_ctx_t tj_gpu_event_context(const tj_gpu_event_t *ev)
{
    return ev->ctx;
}

bool tj_gpu_event_done(const tj_gpu_event_t *ev)
{
    return atomic_load_explicit(&ev->done, memory_order_acquire);
}

bool tj_gpu_event_implied(tj_gpu_event_t *ev, const tj_gpu_event_t *later)
{
    if (atomic_load_explicit(&ev->done, memory_order_acquire))
        return true;
    if (!atomic_load_explicit(&later->done, memory_order_acquire) || ev->ctx != later->ctx ||
        ev->gen != later->gen || ev->ended >= later->begun)
        return false;
    atomic_store_explicit(&ev->done, true, memory_order_release);
    return true;
}

tj_status_t tj_gpu_event_wait(tj_gpu_event_t *ev)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if (atomic_load_explicit(&ev->done, memory_order_acquire))
        return TJ_OK;
    if ((st = event_enter(ev, &scope)) != TJ_OK)
        return st;
    /* A wait for the device, counted as tj_gpu_sync's are. */
    double t0 = tj_gpu_wait_begin();
    IN_SCOPE(st, cuEventSynchronize(ev->event));
    tj_gpu_wait_end(t0);
    if (st == TJ_OK)
        atomic_store_explicit(&ev->done, true, memory_order_release);
    tj_gpu_leave(&scope);
    return st;
}

void tj_gpu_event_release(tj_gpu_event_t *ev)
{
    if (ev == NULL || atomic_fetch_sub_explicit(&ev->refs, 1, memory_order_acq_rel) > 1)
        return;
    lock_events();
    ev->next = tj_gpu.events_free;
    tj_gpu.events_free = ev;
    unlock_events();
}

void tj_gpu_events_release(void)
{
    tj_gpu_event_t *list;

    lock_events();
    list = tj_gpu.events_free;
    tj_gpu.events_free = NULL;
    unlock_events();
    while (list != NULL) {
        tj_gpu_event_t *ev = list;
        tj_gpu_scope_t scope;
        list = ev->next;
        if (tj_gpu_enter_instance_to_release(ev->ctx, ev->gen, &scope) == TJ_OK) {
            CU_CHECK(cuEventDestroy(ev->event));
            tj_gpu_leave(&scope);
        }
        free(ev);
    }
}
