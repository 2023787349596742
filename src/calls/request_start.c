/* SPDX-License-Identifier: BSD-3-Clause */
/* The starts of typejit's persistent requests (MPI_Start, MPI_Startall): a send repacked, its
 * pack left running in the send queue where it may be. */
#include "calls/request.h"

#include <stdlib.h>

#include "calls/request_internal.h"
#include "calls/send_queue.h"

/* A persistent send's pack, into the send queue (*queued) when it may be left running. */
static int start_send(tj_request_t *r, MPI_Request handle, bool *queued)
{
    int rc;

    if (!tj_send_queue_enabled())
        return tj_p2p_send_repack(&r->xfer);
    rc = tj_p2p_send_repack_queued(&r->xfer);
    if (rc == MPI_SUCCESS && r->xfer.event != NULL) {
        r->queued = (tj_queued_send_t){.handle = handle,
                                       .comm = r->xfer.comm,
                                       .dest = r->xfer.peer,
                                       .xfer = &r->xfer,
                                       .event = r->xfer.event};
        r->xfer.event = NULL;
        *queued = true;
    }
    return rc;
}

int tj_request_start(MPI_Request handle, bool *queued)
{
    tj_request_t *r = tj_request_take(handle);
    int rc = MPI_SUCCESS;

    *queued = false;
    if (r == NULL)
        return MPI_SUCCESS;
    r->finished = false;
    if (!r->custom && !r->xfer.recv)
        rc = start_send(r, handle, queued);
    tj_request_put(r, handle);
    if (*queued)
        tj_send_queue_push(&r->queued);
    return rc;
}

int tj_request_start_all(int n, const MPI_Request handles[], bool queued[])
{
    /* Up to 64 requests (a halo's 26 and more) on the stack. */
    tj_request_t *recs_small[64];
    tj_xfer_t *sends_small[64] = {NULL};
    bool small = n <= 64;
    tj_request_t **recs = small ? recs_small : calloc((size_t)(n > 0 ? n : 1), sizeof(*recs));
    tj_xfer_t **sends = small ? sends_small : calloc((size_t)(n > 0 ? n : 1), sizeof(*sends));
    tj_gpu_event_t *event = NULL;
    tj_queued_send_t *first = NULL, *last = NULL;
    int nsends = 0, nqueued = 0, rc = MPI_SUCCESS;

    for (int i = 0; i < n; i++)
        queued[i] = false;
    if (recs == NULL || sends == NULL) {
        if (!small) {
            free(recs);
            free(sends);
        }
        /* One at a time needs no memory. */
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
            rc = tj_request_start(handles[i], &queued[i]);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        if ((recs[i] = tj_request_take(handles[i])) == NULL)
            continue;
        recs[i]->finished = false;
        if (!recs[i]->custom && !recs[i]->xfer.recv)
            sends[nsends++] = &recs[i]->xfer;
    }
    /* The sends of one Startall from one buffer are packed by one fused launch; left running,
     * they share one event. */
    if (!tj_send_queue_enabled() || nsends == 0)
        rc = tj_p2p_send_repack_set(sends, nsends);
    else
        rc = tj_p2p_send_repack_set_queued(sends, nsends, &event);
    for (int i = 0; i < n; i++) {
        tj_request_t *r = recs[i];
        if (r == NULL)
            continue;
        if (event != NULL && rc == MPI_SUCCESS && !r->custom && !r->xfer.recv) {
            r->queued = (tj_queued_send_t){.handle = handles[i],
                                           .comm = r->xfer.comm,
                                           .dest = r->xfer.peer,
                                           .xfer = &r->xfer,
                                           .event = tj_gpu_event_hold(event)};
            queued[i] = true;
        }
        tj_request_put(r, handles[i]);
    }
    for (int i = 0; i < n; i++) {
        if (!queued[i])
            continue;
        if (last != NULL)
            last->next = &recs[i]->queued;
        else
            first = &recs[i]->queued;
        last = &recs[i]->queued;
        nqueued++;
    }
    if (last != NULL)
        tj_send_queue_push_chain(first, last, nqueued);
    if (event != NULL) {
        if (rc != MPI_SUCCESS)
            (void)tj_gpu_event_wait(event); /* nothing is sent: the staging stays unread */
        tj_gpu_event_release(event);
    }
    if (!small) {
        free(recs);
        free(sends);
    }
    return rc;
}
