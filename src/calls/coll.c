/* SPDX-License-Identifier: BSD-3-Clause */
/* The life of a collective on device buffers (see coll.h): the call described as two sides of
 * per-peer slices (coll_sides.c); a side with bytes in device or managed memory is packed into
 * page-locked mapped host memory laid out for the system MPI (coll_packed.c) by kernels
 * (coll_move.c), every pack launched and then waited for once; the system MPI, CUDA-aware or not,
 * runs the same collective on host memory (coll_system.c); the receive side is unpacked when the
 * call completes, in the call or in the Wait or Test that completes its request. A side in host
 * memory is passed to the system MPI unchanged. */
#include "calls/coll.h"

#include <stdlib.h>

#include "gpu/batch.h"
#include "gpu/cuda.h"
#include "calls/coll_move.h"
#include "calls/coll_sides.h"
#include "calls/coll_system.h"
#include "calls/coll_packed.h"
#include "move/wait_once.h"
#include "calls/request.h"
#include "calls/send_queue.h"
#include "util/log.h"

static void release(void *arg)
{
    tj_coll_t *x = arg;
    tj_coll_sides_free(&x->s);
    tj_coll_sides_free(&x->r);
    free(x);
}

/* The receive side's unpacks, into @p b (tj_wait_once_work_t). */
static int unpack_side(void *arg, tj_batch_t *b)
{
    tj_coll_t *x = arg;
    return x->r.packed && !x->r.blind ? tj_coll_move_side(x, &x->r, false, false, b) : MPI_SUCCESS;
}

/* The sends' packs, and those of the receive side's MPI_IN_PLACE slices, into @p b. */
static int pack_sides(void *arg, tj_batch_t *b)
{
    tj_coll_t *x = arg;
    int rc = MPI_SUCCESS;

    if (x->s.packed && !x->s.blind)
        rc = tj_coll_move_side(x, &x->s, true, false, b);
    if (rc == MPI_SUCCESS && x->r.packed && !x->r.blind && x->inplace)
        rc = tj_coll_move_side(x, &x->r, true, true, b);
    return rc;
}

static int finish(void *arg, const MPI_Status *status, tj_batch_t *b)
{
    tj_coll_t *x = arg;
    int rc = b != NULL ? unpack_side(x, b) : tj_wait_once_run(unpack_side, x);
    (void)status;
    return x->failed != MPI_SUCCESS ? x->failed : rc;
}

/* A receive completed later may outlive the application's types: keep duplicates. */
static int keep_types(tj_coll_side_t *sd)
{
    for (int t = 0; t < sd->ntypes; t++) {
        MPI_Datatype d;
        int rc = PMPI_Type_dup(sd->types[t].type, &d);
        if (rc != MPI_SUCCESS)
            return rc;
        sd->types[t].type = d;
        sd->types[t].dup = true;
    }
    return MPI_SUCCESS;
}

/* Everything before the system MPI's call: layout, staging, the packs. MPI result of what must
 * stop the call before it is made. A pack that fails (a driver call failed, even through the
 * staged path) does not: the other ranks are entering the collective and would wait forever
 * for this one, so the call is still made, with the bytes it has, and reports the failure when
 * it completes (x->failed). With @p event (a non-blocking call that may leave its packs
 * running) the packs are left running where they can be, *event recorded after them. */
static int prepare(tj_coll_t *x, bool nonblocking, tj_gpu_event_t **event)
{
    bool bytes = x->c.kind == TJ_COLL_ALLTOALLW;
    int rc = MPI_SUCCESS;
    tj_coll_side_t *sides[2] = {&x->s, &x->r};

    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
        if (sides[k]->packed && (rc = tj_coll_packed_layout(&x->c, sides[k], bytes)) == MPI_SUCCESS)
            rc = tj_coll_packed_stage(sides[k]);
    if (rc == MPI_SUCCESS && nonblocking && x->r.packed)
        rc = keep_types(&x->r);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Every pack launched, then one wait, before the system MPI reads the bytes (or, left
     * running, the send queue's wait before it makes the call). */
    x->failed = event != NULL ? tj_wait_once_leave_running(pack_sides, x, event)
                              : tj_wait_once_run(pack_sides, x);
    if (x->s.blind || x->r.blind)
        x->failed = MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

/* The send queue's start of a non-blocking collective whose packs it waited for: the packs done
 * again step by step when they failed, then the system MPI's call, its request in q->handle. */
static int deferred_start(tj_queued_send_t *q, bool pack_failed)
{
    tj_coll_t *x = q->arg;

    if (pack_failed)
        x->failed = pack_sides(x, NULL);
    return tj_coll_system_call(x, &q->handle);
}

bool tj_coll_on_device(const tj_coll_call_t *c)
{
    tj_coll_t *x;
    bool on = false;

    if (!tj_gpu_available() || (x = calloc(1, sizeof(*x))) == NULL)
        return false;
    x->c = *c;
    if (tj_coll_sides_describe(x)) {
        tj_coll_packed_classify(&x->s);
        tj_coll_packed_classify(&x->r);
        on = x->s.packed || x->r.packed || x->s.split || x->r.split;
    }
    release(x);
    return on;
}

tj_call_result_t tj_coll_run(const tj_coll_call_t *c, MPI_Request *req, int *rc)
{
    tj_request_t *r = NULL;
    tj_gpu_event_t *event = NULL;
    tj_coll_t *x;

    if (!tj_gpu_available())
        return TJ_CALL_PASS;
    if ((x = calloc(1, sizeof(*x))) == NULL) {
        tj_log_error("out of memory describing a collective");
        return TJ_CALL_PASS;
    }
    x->c = *c;
    if (!tj_coll_sides_describe(x)) {
        release(x);
        return TJ_CALL_PASS;
    }
    tj_coll_packed_classify(&x->s);
    tj_coll_packed_classify(&x->r);
    if (x->s.split || x->r.split) {
        *rc = MPI_ERR_BUFFER; /* classify said why */
        release(x);
        return TJ_CALL_FAILED;
    }
    if (!x->s.packed && !x->r.packed) {
        release(x);
        return TJ_CALL_PASS;
    }
    /* A non-blocking call's record is taken before the system MPI starts it: once started it
     * could only be completed here, which would block a non-blocking call. */
    if (req != NULL && (r = tj_request_reserve()) == NULL) {
        release(x);
        *rc = MPI_ERR_NO_MEM;
        return TJ_CALL_FAILED;
    }
    if ((*rc = prepare(x, req != NULL, req != NULL && tj_send_queue_enabled() ? &event : NULL)) !=
        MPI_SUCCESS) {
        tj_request_unreserve(r);
        release(x);
        return TJ_CALL_FAILED;
    }
    if (event != NULL) {
        /* Its packs run on; the send queue makes the system MPI's call once they are done, and
         * the application holds a request of typejit's until then. */
        tj_completion_t done = {finish, release, x};
        *rc = tj_request_add_deferred(r, c->comm, event, deferred_start, x, &done, req);
        if (*rc == MPI_SUCCESS)
            return TJ_CALL_TAKEN;
        /* No request to hand out: the call is made now, after its packs. */
        if (tj_gpu_event_wait(event) != TJ_OK)
            x->failed = pack_sides(x, NULL);
        tj_gpu_event_release(event);
    }
    if ((*rc = tj_coll_system_call(x, req)) != MPI_SUCCESS) {
        tj_request_unreserve(r);
        release(x);
        return TJ_CALL_TAKEN;
    }
    if (req != NULL) {
        tj_completion_t done = {finish, release, x};
        tj_request_add_completion(r, *req, &done);
        return TJ_CALL_TAKEN;
    }
    *rc = finish(x, MPI_STATUS_IGNORE, NULL);
    release(x);
    return *rc == MPI_SUCCESS ? TJ_CALL_TAKEN : TJ_CALL_FAILED;
}
