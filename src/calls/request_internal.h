/* SPDX-License-Identifier: BSD-3-Clause */
/* What the request table's files share (request.c, request_deferred.c, request_start.c,
 * request_detached.c): the record of a request, the table's lock and chains, and the steps of a
 * request's completion. */
#ifndef TJ_CALLS_REQUEST_INTERNAL_H
#define TJ_CALLS_REQUEST_INTERNAL_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "calls/request.h"
#include "calls/send_queue.h"
#include "calls/state.h"

struct tj_request {
    MPI_Request handle;
    tj_xfer_t xfer; /* a point-to-point transfer, unless `custom` */
    bool custom;    /* completion.finish and .release do the work */
    tj_completion_t completion;
    bool persistent;
    /* A non-blocking send behind a persistent request of the system MPI's (the send queue
     * starts it): freed, and the application's handle set to MPI_REQUEST_NULL, at completion. */
    bool oneshot;
    tj_queued_send_t queued; /* a send's place in the send queue */
    bool finished;           /* unpacked before its completion call; it only reports it */
    int finished_rc;         /* the MPI result of that unpack, not yet reported */
    /* A receive whose unpack a Test launched and left running: the event after it, and the
     * status it was unpacked with (done again from it should the unpack fail). */
    tj_gpu_event_t *unpack_event;
    MPI_Status unpack_status;
    /* A non-blocking collective whose system call waits in the send queue: the application's
     * handle is a generalized request of typejit's, completed once the system MPI's request
     * (queued.handle) has; `coll_rc` is that request's result, or the failed start's. */
    bool deferred;
    bool coll_done;
    int coll_rc;
    bool redo;                /* its finish left work to a batch (tj_request_done_all) */
    struct tj_request *next;  /* detached list */
    struct tj_request *chain; /* the table's bucket */
};

/* The table's lock (tj_calls_state.request.table_lock), spinning. */
static inline void tj_request_lock_table(void)
{
    for (int spins = 0; atomic_flag_test_and_set_explicit(&tj_calls_state.request.table_lock,
                                                          memory_order_acquire);)
        if (++spins % 64 == 0)
            sched_yield();
}

static inline void tj_request_unlock_table(void)
{
    atomic_flag_clear_explicit(&tj_calls_state.request.table_lock, memory_order_release);
}

/* The bucket of @p handle among @p n (a power of two). */
static inline size_t tj_request_bucket_of(MPI_Request handle, size_t n)
{
    uint64_t h = (uint64_t)(uintptr_t)handle * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 32) & (n - 1);
}

/* Link @p r into its bucket; under table_lock. */
static inline void tj_request_link(tj_request_t *r)
{
    size_t b = tj_request_bucket_of(r->handle, tj_calls_state.request.nbuckets);
    r->chain = tj_calls_state.request.buckets[b];
    tj_calls_state.request.buckets[b] = r;
    tj_calls_state.request.nrecords++;
}

/* The record of @p handle, unlinked when @p unlink; under table_lock. */
static inline tj_request_t *tj_request_find(MPI_Request handle, bool unlink)
{
    tj_request_t **at =
        &tj_calls_state.request
             .buckets[tj_request_bucket_of(handle, tj_calls_state.request.nbuckets)];
    for (; *at != NULL; at = &(*at)->chain)
        if ((*at)->handle == handle) {
            tj_request_t *r = *at;
            if (unlink) {
                *at = r->chain;
                tj_calls_state.request.nrecords--;
            }
            return r;
        }
    return NULL;
}

/* Put reserved record @p r into the table under @p handle, a request more. */
static inline void tj_request_insert(tj_request_t *r, MPI_Request handle)
{
    r->handle = handle;
    tj_request_lock_table();
    tj_request_link(r);
    atomic_fetch_add(&tj_calls_state.request.count, 1);
    tj_request_unlock_table();
}

/* Finish what a completed request brought (request.c): unpack a receive, report a deferred send
 * that could not be started, or run a custom completion's finish. Device work goes into @p b
 * (NULL: waited for before this returns). Returns the MPI result. */
int tj_request_finish(tj_request_t *r, const MPI_Status *status, tj_batch_t *b);

/* Release a record whose request is over (request.c): its unpack waited for, its transfer or
 * completion released, the record kept for reuse; a request less. */
void tj_request_release(tj_request_t *r);

/* A deferred collective's system request: complete (waiting for it, and for its start, when
 * @p wait), then its generalized request @p handle. Whether it is complete
 * (request_deferred.c). */
bool tj_request_deferred_complete(tj_request_t *r, MPI_Request handle, bool wait);

#endif /* TJ_CALLS_REQUEST_INTERNAL_H */
