/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests typejit made: the system MPI's own request handles, remembered with the transfer
 * each belongs to, so that the interposed Wait and Test calls can finish a receive (unpack) and
 * release staging when the system MPI completes it. The application holds the system's handles
 * and cannot tell them from any other. */
#ifndef TJ_CALLS_REQUEST_H
#define TJ_CALLS_REQUEST_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "calls/p2p.h"
#include "calls/send_queue.h"
#include "calls/state.h"

typedef struct tj_request tj_request_t;

/* Number of requests in the table or detached: zero means every Wait/Test goes straight to the
 * system MPI. One relaxed load. */
static inline int tj_request_live(void)
{
    return atomic_load_explicit(&tj_calls_state.request.count, memory_order_relaxed);
}

/* A record for a request about to be made, taken before the system MPI starts it, so that
 * nothing can fail once it has: NULL when out of memory (logged), and the caller fails the call
 * with MPI_ERR_NO_MEM before starting anything. */
tj_request_t *tj_request_reserve(void);

/* Give back a reserved record the call did not use (the system MPI refused it). */
void tj_request_unreserve(tj_request_t *r);

/* Remember @p handle, in reserved record @p r, for the transfer @p x (copied). Persistent
 * requests keep their staging until freed. */
void tj_request_add(tj_request_t *r, MPI_Request handle, const tj_xfer_t *x, bool persistent);

/* Remember @p handle, a persistent request of the system MPI's not yet started, in reserved
 * record @p r, for the non-blocking send @p x whose pack x->event follows (taken from it), and
 * queue it in the send queue, which starts the request once the pack has completed. For the
 * application it is an ordinary non-blocking send: at its completion typejit frees the system
 * MPI's request and sets the application's handle to MPI_REQUEST_NULL. */
void tj_request_add_queued(tj_request_t *r, MPI_Request handle, tj_xfer_t *x);

/* What typejit does when a request it made for something other than one transfer completes (a
 * non-blocking collective): finish (unpack; returns the MPI result) unless the request was
 * cancelled, then release. finish launches its device work into the batch it is given, whose
 * wait follows before release, and is called again without one when that wait fails (so it must
 * be idempotent until release); given none, it waits before it returns. */
typedef struct {
    int (*finish)(void *arg, const MPI_Status *status, tj_batch_t *batch);
    void (*release)(void *arg);
    void *arg;
} tj_completion_t;

/* Remember @p handle, in reserved record @p r, with a completion of its own (copied). */
void tj_request_add_completion(tj_request_t *r, MPI_Request handle, const tj_completion_t *c);

/* A non-blocking collective whose packs still run (*@p event after them, held by the record
 * from now on), in reserved record @p r with completion @p c: the application gets a
 * generalized request of typejit's (*@p app), the send queue makes the system MPI's call with
 * @p start(q, ...) once the packs are done (after the earlier collectives of @p comm), and the
 * completion calls complete the generalized request once the system MPI's has completed.
 * Returns the MPI result; on failure nothing was queued and *@p app is untouched. */
int tj_request_add_deferred(tj_request_t *r, MPI_Comm comm, tj_gpu_event_t *event,
                            int (*start)(tj_queued_send_t *q, bool pack_failed), void *arg,
                            const tj_completion_t *c, MPI_Request *app);

/* Before a blocking completion call on @p handle's record @p r: a deferred collective's system
 * request waited for (its start first), so that its generalized request is complete. */
void tj_request_block(tj_request_t *r, MPI_Request handle);

/* Whether @p handle is a deferred collective not yet complete: a Waitany or Waitsome over it
 * polls instead of blocking in the system MPI (which cannot complete typejit's generalized
 * request by itself). */
bool tj_request_deferred(MPI_Request handle);

/* Call @p release(@p arg) when typejit releases @p handle's record, after whatever else it does
 * when the request completes: for what a non-blocking call must keep alive until then (the
 * converted datatype arrays of the Fortran w forms). The handle's own completion, if it has
 * one, runs first. */
tj_status_t tj_request_on_release(MPI_Request handle, void (*release)(void *arg), void *arg);

/* Take the record of @p handle out of the table (NULL if it is not typejit's). The caller owns
 * it until tj_request_put or tj_request_done: a handle the system MPI frees and reuses while
 * its completion is being handled can never meet the old record. */
tj_request_t *tj_request_take(MPI_Request handle);

/* Whether @p handle is one of typejit's requests (it stays in the table). */
bool tj_request_known(MPI_Request handle);

/* Put a record back, under @p handle, when its request did not complete. */
void tj_request_put(tj_request_t *r, MPI_Request handle);

/* The request completed with @p status (which must be a real status): a receive is unpacked
 * unless cancelled or already unpacked; a persistent request is put back under @p handle,
 * inactive, any other is released (a queued send's system request freed, *@p app set to
 * MPI_REQUEST_NULL). Returns the MPI result of finishing. */
int tj_request_done(tj_request_t *r, MPI_Request handle, const MPI_Status *status,
                    MPI_Request *app);

/* tj_request_done for the @p n requests one call completed (Waitall, Testall, Waitsome,
 * Testsome), their unpacks all launched, then waited for once: completed request k is recs[i]
 * under handles[i] with statuses[k], i = which[k] (or k when @p which is NULL); recs[i] NULL: not
 * typejit's. Each record is put back or released and its entry set to NULL; results[k] is its
 * MPI result of finishing; @p app: the application's array (as tj_request_done's). */
void tj_request_done_all(int n, tj_request_t *recs[], const MPI_Request handles[], const int *which,
                         const MPI_Status statuses[], int results[], MPI_Request app[]);

/* Whether a completion call that must not block may hand @p r (under @p handle) to the system
 * MPI's test: false for a send still in the send queue, for a receive the system MPI has not
 * completed yet, and for one whose unpack is still running on the device. A receive the system
 * MPI has completed gets its unpack launched here, left running, so that the test after it
 * finds it done; no call here waits. */
bool tj_request_ready(tj_request_t *r, MPI_Request handle);

/* A send of typejit's in the send queue under @p handle is started now (MPI_Cancel). */
void tj_request_flush(MPI_Request handle);

/* MPI_Request_get_status found @p handle complete: finish it now (unpack), once, so that the
 * application may read its buffer; Wait or Test will still report and release it. */
int tj_request_finish_early(MPI_Request handle, const MPI_Status *status);

/* MPI_Start of a persistent request of typejit's: repack a send. *queued: its pack was left
 * running and the send queue starts the system MPI's request (the caller must not). */
int tj_request_start(MPI_Request handle, bool *queued);

/* MPI_Startall: repack the sends of typejit's persistent requests among @p handles, those from
 * one buffer together (tj_p2p_send_repack_set); queued[i] as tj_request_start's. */
int tj_request_start_all(int n, const MPI_Request handles[], bool queued[]);

/* MPI_Request_free of a request typejit owns: an inactive persistent request is freed at once; an
 * active one is kept, detached, and completed by tj_request_progress. */
int tj_request_free(MPI_Request *handle);

/* Complete detached requests that finished (a test each); @p wait: wait for all (finalize). */
void tj_request_progress(bool wait);

#endif /* TJ_CALLS_REQUEST_H */
