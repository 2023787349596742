/* SPDX-License-Identifier: BSD-3-Clause */
/* The requests the application freed while they were active (MPI_Request_free): kept, detached
 * from any handle of the application's, and completed by tj_request_progress. */
#include "calls/request.h"

#include <stdatomic.h>

#include "calls/request_internal.h"
#include "calls/send_queue.h"
#include "calls/state.h"

int tj_request_free(MPI_Request *handle)
{
    tj_request_t *r = tj_request_take(*handle);
    MPI_Status status;
    int flag = 0, rc;

    if (r == NULL)
        return PMPI_Request_free(handle);
    /* A deferred send is started first: the operation goes on after the free. */
    if (!r->custom && !r->xfer.recv && tj_send_queue_waiting(&r->queued))
        tj_send_queue_flush_one(&r->queued);
    if (atomic_load(&r->queued.state) == TJ_SEND_FAILED) {
        rc = PMPI_Request_free(handle);
        tj_request_release(r);
        return rc;
    }
    /* An inactive persistent request (or one already complete) can go at once. */
    rc = PMPI_Request_get_status(*handle, &flag, &status);
    if (rc == MPI_SUCCESS && flag) {
        if (!r->persistent)
            tj_request_finish(r, &status, NULL);
        rc = PMPI_Request_free(handle);
        tj_request_release(r);
        return rc;
    }
    /* Still active: the operation must go on; typejit keeps the handle and completes it later. */
    tj_request_lock_table();
    r->next = tj_calls_state.request.detached;
    tj_calls_state.request.detached = r;
    atomic_store(&tj_calls_state.request.any_detached, true);
    tj_request_unlock_table();
    *handle = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

void tj_request_progress(bool wait)
{
    tj_request_t *list, *keep = NULL;
    MPI_Status status;
    int flag;

    if (!atomic_load_explicit(&tj_calls_state.request.any_detached, memory_order_relaxed))
        return;
    tj_request_lock_table();
    list = tj_calls_state.request.detached;
    tj_calls_state.request.detached = NULL;
    atomic_store(&tj_calls_state.request.any_detached, false);
    tj_request_unlock_table();
    while (list != NULL) {
        tj_request_t *r = list;
        list = r->next;
        flag = 0;
        if (wait)
            flag = PMPI_Wait(&r->handle, &status) == MPI_SUCCESS;
        else if (PMPI_Test(&r->handle, &flag, &status) != MPI_SUCCESS)
            flag = 1;
        if (!flag) {
            r->next = keep;
            keep = r;
            continue;
        }
        tj_request_finish(r, &status, NULL);
        /* A persistent request stays allocated after completing: free it now. */
        if (r->handle != MPI_REQUEST_NULL)
            PMPI_Request_free(&r->handle);
        tj_request_release(r);
    }
    if (keep != NULL) {
        tj_request_lock_table();
        tj_request_t **tail = &keep;
        while (*tail != NULL)
            tail = &(*tail)->next;
        *tail = tj_calls_state.request.detached;
        tj_calls_state.request.detached = keep;
        atomic_store(&tj_calls_state.request.any_detached, true);
        tj_request_unlock_table();
    }
}
