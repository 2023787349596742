/* SPDX-License-Identifier: BSD-3-Clause */
/* The generalized requests of deferred non-blocking collectives: the application's handle of a
 * collective whose system call waits in the send queue, completed once the system MPI's request
 * has (see tj_request_add_deferred in request.h). */
#include "calls/request.h"

#include <stdatomic.h>

#include "calls/request_internal.h"
#include "calls/send_queue.h"

/* The generalized request behind a deferred collective: its status says nothing (a collective's
 * status carries no source, tag or count), and it cannot be cancelled (cancelling a collective
 * is erroneous). */
static int deferred_query(void *extra, MPI_Status *status)
{
    (void)extra;
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}

static int deferred_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int deferred_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

int tj_request_add_deferred(tj_request_t *r, MPI_Comm comm, tj_gpu_event_t *event,
                            int (*start)(tj_queued_send_t *q, bool pack_failed), void *arg,
                            const tj_completion_t *c, MPI_Request *app)
{
    MPI_Request g;
    int rc = PMPI_Grequest_start(deferred_query, deferred_free, deferred_cancel, NULL, &g);

    if (rc != MPI_SUCCESS)
        return rc;
    r->custom = true;
    r->completion = *c;
    r->deferred = true;
    r->queued = (tj_queued_send_t){.handle = MPI_REQUEST_NULL,
                                   .comm = comm,
                                   .dest = TJ_SEND_QUEUE_COLLECTIVE,
                                   .event = event,
                                   .start = start,
                                   .arg = arg};
    tj_request_insert(r, g);
    *app = g;
    tj_send_queue_push(&r->queued);
    return MPI_SUCCESS;
}

bool tj_request_deferred_complete(tj_request_t *r, MPI_Request handle, bool wait)
{
    MPI_Status status;
    int flag = 1;

    if (r->coll_done)
        return true;
    if (tj_send_queue_waiting(&r->queued)) {
        if (!wait)
            return false;
        tj_send_queue_flush_one(&r->queued);
    }
    if (atomic_load(&r->queued.state) == TJ_SEND_FAILED)
        r->coll_rc = r->queued.rc;
    else if (wait)
        r->coll_rc = PMPI_Wait(&r->queued.handle, &status);
    else if ((r->coll_rc = PMPI_Test(&r->queued.handle, &flag, &status)) != MPI_SUCCESS)
        flag = 1; /* an error completes it */
    if (!flag)
        return false;
    r->coll_done = true;
    PMPI_Grequest_complete(handle);
    return true;
}

void tj_request_block(tj_request_t *r, MPI_Request handle)
{
    if (r->deferred)
        (void)tj_request_deferred_complete(r, handle, true);
}

bool tj_request_deferred(MPI_Request handle)
{
    tj_request_t *r;
    bool deferred = false;

    if (handle == MPI_REQUEST_NULL || tj_request_live() == 0)
        return false;
    tj_request_lock_table();
    r = tj_request_find(handle, false);
    deferred = r != NULL && r->deferred && !r->coll_done;
    tj_request_unlock_table();
    return deferred;
}
