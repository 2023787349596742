/* SPDX-License-Identifier: BSD-3-Clause */
/* The request table: system request handles of typejit's transfers, in a hash table under one
 * lock. The table's chains run through the records themselves, so that putting a record in never
 * allocates: a request's record is taken (tj_request_reserve) before the system MPI starts the
 * request, and nothing may fail after that. Here too: the completion of a request, its record
 * put back or released. The generalized requests of deferred collectives are in
 * request_deferred.c, the starts of persistent requests in request_start.c, the requests the
 * application freed while active in request_detached.c. */
#include "calls/request.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "calls/request_internal.h"
#include "calls/send_queue.h"
#include "calls/state.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_calls_state.request) *const request_state = &tj_calls_state.request;

/* Records given back are kept per thread for its next requests (at most SPARE_MAX of them), so
 * that a steady request allocates nothing and takes no lock for its record; freed when the
 * thread ends. */
#define SPARE_MAX 64

static void spare_free(void *arg)
{
    tj_request_spare_t *sp = arg;
    while (sp->list != NULL) {
        tj_request_t *next = sp->list->next;
        free(sp->list);
        sp->list = next;
    }
    sp->n = 0;
}

static void spare_init(void)
{
    pthread_key_create(&request_state->spare_key, spare_free);
}

/* A record for reuse, zeroed; NULL when there is none. */
static tj_request_t *spare_take(void)
{
    tj_request_t *r = tj_calls_thread.request.spare.list;

    if (r == NULL)
        return NULL;
    tj_calls_thread.request.spare.list = r->next;
    tj_calls_thread.request.spare.n--;
    memset(r, 0, sizeof(*r));
    return r;
}

static void spare_put(tj_request_t *r)
{
    if (tj_calls_thread.request.spare.n >= SPARE_MAX) {
        free(r);
        return;
    }
    if (!tj_calls_thread.request.spare.known) {
        pthread_once(&request_state->spare_once, spare_init);
        pthread_setspecific(request_state->spare_key, &tj_calls_thread.request.spare);
        tj_calls_thread.request.spare.known = true;
    }
    r->next = tj_calls_thread.request.spare.list;
    tj_calls_thread.request.spare.list = r;
    tj_calls_thread.request.spare.n++;
}

/* Rehash into @p fresh, @p n zeroed buckets (four times the buckets); under table_lock. */
static void grow(tj_request_t **fresh, size_t n)
{
    for (size_t b = 0; b < request_state->nbuckets; b++)
        while (request_state->buckets[b] != NULL) {
            tj_request_t *r = request_state->buckets[b];
            size_t to = tj_request_bucket_of(r->handle, n);
            request_state->buckets[b] = r->chain;
            r->chain = fresh[to];
            fresh[to] = r;
        }
    request_state->buckets = fresh;
    request_state->nbuckets = n;
}

tj_request_t *tj_request_reserve(void)
{
    tj_request_t *r = spare_take();

    if (r == NULL && (r = calloc(1, sizeof(*r))) == NULL) {
        tj_log_error("out of memory recording a request; MPI_ERR_NO_MEM");
        return NULL;
    }
    /* The records in flight outnumber the buckets: grown before this one goes in, the new
     * buckets allocated (and the old ones freed) outside the lock. */
    if ((size_t)atomic_load_explicit(&request_state->count, memory_order_relaxed) >=
        atomic_load_explicit(&request_state->nbuckets, memory_order_relaxed)) {
        size_t n = atomic_load(&request_state->nbuckets) * 4;
        tj_request_t **fresh = calloc(n, sizeof(*fresh)), **old = NULL;
        tj_request_lock_table();
        if (fresh != NULL && request_state->nrecords >= request_state->nbuckets &&
            n == request_state->nbuckets * 4) {
            old = request_state->buckets != request_state->first_buckets ? request_state->buckets
                                                                         : NULL;
            grow(fresh, n);
            fresh = NULL;
        }
        tj_request_unlock_table();
        free(fresh);
        free(old);
    }
    return r;
}

void tj_request_unreserve(tj_request_t *r)
{
    if (r != NULL)
        spare_put(r);
}

void tj_request_add(tj_request_t *r, MPI_Request handle, const tj_xfer_t *x, bool persistent)
{
    r->xfer = *x;
    r->persistent = persistent;
    tj_request_insert(r, handle);
}

void tj_request_add_queued(tj_request_t *r, MPI_Request handle, tj_xfer_t *x)
{
    tj_gpu_event_t *event = x->event;

    x->event = NULL; /* the send queue's from now on */
    r->xfer = *x;
    r->oneshot = true;
    r->queued = (tj_queued_send_t){
        .handle = handle, .comm = x->comm, .dest = x->peer, .xfer = &r->xfer, .event = event};
    tj_request_insert(r, handle);
    tj_send_queue_push(&r->queued);
}

void tj_request_add_completion(tj_request_t *r, MPI_Request handle, const tj_completion_t *c)
{
    r->custom = true;
    r->completion = *c;
    tj_request_insert(r, handle);
}

/* A completion with a release to run after it (tj_request_on_release). */
typedef struct {
    tj_completion_t inner; /* finish NULL: nothing to finish */
    void (*release)(void *arg);
    void *arg;
} chained_t;

static int chained_finish(void *arg, const MPI_Status *status, tj_batch_t *b)
{
    chained_t *c = arg;
    return c->inner.finish != NULL ? c->inner.finish(c->inner.arg, status, b) : MPI_SUCCESS;
}

static void chained_release(void *arg)
{
    chained_t *c = arg;
    if (c->inner.release != NULL)
        c->inner.release(c->inner.arg);
    c->release(c->arg);
    free(c);
}

tj_status_t tj_request_on_release(MPI_Request handle, void (*release)(void *arg), void *arg)
{
    chained_t *c = calloc(1, sizeof(*c));
    tj_completion_t done = {chained_finish, chained_release, c};
    tj_request_t *r, *fresh = tj_request_reserve();
    tj_status_t st = TJ_OK;

    if (c == NULL || fresh == NULL) {
        tj_log_error("out of memory recording a request");
        free(c);
        tj_request_unreserve(fresh);
        return TJ_ERR_NOMEM;
    }
    c->release = release;
    c->arg = arg;
    tj_request_lock_table();
    r = tj_request_find(handle, false);
    if (r != NULL && !r->custom) {
        st = TJ_ERR_INVALID; /* a point-to-point transfer: nothing to chain to */
    } else if (r != NULL) {
        c->inner = r->completion;
        r->completion = done;
    }
    tj_request_unlock_table();
    if (st == TJ_OK && r == NULL) {
        tj_request_add_completion(fresh, handle, &done);
        fresh = NULL;
    }
    tj_request_unreserve(fresh);
    if (st != TJ_OK)
        free(c);
    return st;
}

/* Wait for the unpack a Test left running, and drop its event: its result, the unpack done
 * again step by step when it failed. */
static int unpack_waited(tj_request_t *r)
{
    int rc = r->finished_rc;

    if (tj_gpu_event_wait(r->unpack_event) != TJ_OK) {
        tj_log_debug("a receive's unpack failed; it is done again step by step");
        rc = tj_p2p_recv_finish(&r->xfer, &r->unpack_status, NULL);
    }
    tj_gpu_event_release(r->unpack_event);
    r->unpack_event = NULL;
    return rc;
}

/* Finish what a completed request brought: unpack a receive (not a cancelled one: the
 * receive's finish asks), or report a deferred send that could not be started. A custom
 * completion belongs to a collective (which cannot be cancelled), a one-sided or a file access
 * (whose staged mirror holds the buffer's bytes, so writing it back is right whether the access
 * happened or not); it is not asked, as Open MPI 4.1 leaves the cancelled flag of a file
 * request's status uninitialised. Device work goes into @p b (NULL: waited for before this
 * returns). An unpack done before the completion call only reports its result. */
int tj_request_finish(tj_request_t *r, const MPI_Status *status, tj_batch_t *b)
{
    if (r->unpack_event != NULL) {
        r->finished = false;
        return unpack_waited(r);
    }
    if (r->finished) {
        r->finished = false;
        return r->finished_rc;
    }
    if (r->deferred && r->coll_rc != MPI_SUCCESS)
        return r->coll_rc; /* the collective itself failed: nothing to unpack */
    if (r->custom)
        return r->completion.finish(r->completion.arg, status, b);
    if (!r->xfer.recv)
        return atomic_load(&r->queued.state) == TJ_SEND_FAILED ? r->queued.rc : MPI_SUCCESS;
    return tj_p2p_recv_finish(&r->xfer, status, b);
}

/* The record of @p handle, taken out of the table when @p take; no lock while the table is
 * empty. */
static inline tj_request_t *look_up(MPI_Request handle, bool take)
{
    tj_request_t *r;
    if (handle == MPI_REQUEST_NULL || tj_request_live() == 0)
        return NULL;
    tj_request_lock_table();
    r = tj_request_find(handle, take);
    tj_request_unlock_table();
    return r;
}

tj_request_t *tj_request_take(MPI_Request handle)
{
    return look_up(handle, true);
}

bool tj_request_known(MPI_Request handle)
{
    return look_up(handle, false) != NULL;
}

void tj_request_put(tj_request_t *r, MPI_Request handle)
{
    r->handle = handle;
    tj_request_lock_table();
    tj_request_link(r);
    tj_request_unlock_table();
}

void tj_request_release(tj_request_t *r)
{
    if (r->unpack_event != NULL)
        (void)unpack_waited(r);
    if (r->custom)
        r->completion.release(r->completion.arg);
    else
        tj_p2p_end(&r->xfer);
    spare_put(r);
    atomic_fetch_sub(&request_state->count, 1);
}

/* A completed request's record after its finish: put back inactive, or released; a send behind
 * a persistent request of the system MPI's frees that request, and the application's handle
 * (@p app, when the caller has it) becomes MPI_REQUEST_NULL, as for any completed non-blocking
 * send. */
static void retire(tj_request_t *r, MPI_Request handle, MPI_Request *app)
{
    r->finished = false;
    atomic_store(&r->queued.state, TJ_SEND_IDLE);
    if (r->oneshot) {
        MPI_Request system = handle;
        PMPI_Request_free(&system);
        if (app != NULL)
            *app = MPI_REQUEST_NULL;
        tj_request_release(r);
    } else if (r->persistent) {
        tj_request_put(r, handle);
    } else {
        tj_request_release(r);
    }
}

int tj_request_done(tj_request_t *r, MPI_Request handle, const MPI_Status *status, MPI_Request *app)
{
    int rc = tj_request_finish(r, status, NULL);
    retire(r, handle, app);
    return rc;
}

void tj_request_done_all(int n, tj_request_t *recs[], const MPI_Request handles[], const int *which,
                         const MPI_Status statuses[], int results[], MPI_Request app[])
{
    tj_batch_t b;

    tj_batch_init(&b);
    for (int k = 0; k < n; k++) {
        tj_request_t *r = recs[which != NULL ? which[k] : k];
        int before = b.deferred;
        results[k] = MPI_SUCCESS;
        if (r == NULL)
            continue;
        results[k] = tj_request_finish(r, &statuses[k], &b);
        r->redo = b.deferred > before;
    }
    /* The records are released only after the wait: their staging and types are in use until
     * then. A wait that failed leaves every batched unpack to be done again, each waiting for
     * itself. */
    if (tj_batch_wait(&b) != TJ_OK)
        for (int k = 0; k < n; k++) {
            tj_request_t *r = recs[which != NULL ? which[k] : k];
            if (r != NULL && r->redo)
                results[k] = tj_request_finish(r, &statuses[k], NULL);
        }
    for (int k = 0; k < n; k++) {
        int i = which != NULL ? which[k] : k;
        if (recs[i] == NULL)
            continue;
        recs[i]->redo = false;
        retire(recs[i], handles[i], app != NULL ? &app[i] : NULL);
        recs[i] = NULL;
    }
}

/* A receive the system MPI has completed: its unpack launched now and left running (an event
 * after it), or done at once where the device has nothing left to do. */
static void unpack_early(tj_request_t *r, const MPI_Status *status)
{
    tj_batch_t b;
    int rc;

    tj_batch_init(&b);
    rc = tj_p2p_recv_finish(&r->xfer, status, &b);
    r->unpack_status = *status;
    r->finished_rc = rc;
    if (b.nctx == 1 && b.deferred > 0) {
        tj_gpu_scope_t scope;
        if (tj_gpu_enter_again(b.ctx[0], &scope) == TJ_OK) {
            tj_status_t st = tj_gpu_event_record(&r->unpack_event);
            tj_gpu_leave(&scope);
            if (st == TJ_OK) {
                tj_stats_inc(TJ_STAT_unpacks_async);
                return;
            }
            r->unpack_event = NULL;
        }
    }
    if (tj_batch_wait(&b) != TJ_OK)
        r->finished_rc = tj_p2p_recv_finish(&r->xfer, status, NULL);
    r->finished = true;
}

bool tj_request_ready(tj_request_t *r, MPI_Request handle)
{
    MPI_Status status;
    bool done = false;
    int flag = 0;

    if (r->custom)
        return !r->deferred || tj_request_deferred_complete(r, handle, false);
    if (!r->xfer.recv)
        return !tj_send_queue_waiting(&r->queued);
    if (r->unpack_event != NULL)
        return tj_gpu_event_query(r->unpack_event, &done) != TJ_OK || done;
    if (r->finished)
        return true;
    /* Not complete at the system MPI: not handed to its test, which could complete it there and
     * leave the unpack to wait in the call (the query has made progress). An error is the
     * test's to report. */
    if (PMPI_Request_get_status(handle, &flag, &status) != MPI_SUCCESS)
        return true;
    if (!flag)
        return false;
    /* Complete at the system MPI, not yet unpacked: the unpack starts now. */
    unpack_early(r, &status);
    if (r->unpack_event == NULL)
        return true;
    return tj_gpu_event_query(r->unpack_event, &done) != TJ_OK || done;
}

int tj_request_finish_early(MPI_Request handle, const MPI_Status *status)
{
    tj_request_t *r = tj_request_take(handle);
    int rc;
    if (r == NULL)
        return MPI_SUCCESS;
    rc = tj_request_finish(r, status, NULL);
    /* Reported now: the completion call reports success. */
    r->finished = true;
    r->finished_rc = MPI_SUCCESS;
    tj_request_put(r, handle);
    return rc;
}

void tj_request_flush(MPI_Request handle)
{
    tj_request_t *r;

    if (tj_send_queue_empty() || (r = tj_request_take(handle)) == NULL)
        return;
    if ((r->deferred || (!r->custom && !r->xfer.recv)) && tj_send_queue_waiting(&r->queued))
        tj_send_queue_flush_one(&r->queued);
    tj_request_put(r, handle);
}
