/* SPDX-License-Identifier: BSD-3-Clause */
/* Staged one-sided operations, pending until they complete (see rma.h). One list under one lock:
 * operations are few (each is a staged call on device memory with an MPI that is not
 * CUDA-aware), and a window synchronisation walks it once. The write-back runs under the lock,
 * so that the synchronisation and the request of an R form never both write one back. */
#include "calls/rma.h"

#include <pthread.h>
#include <stdlib.h>

#include "calls/request.h"
#include "util/log.h"

/* This module's part of the layer's state. */
static __typeof__(tj_calls_state.rma) *const rma_state = &tj_calls_state.rma;

struct tj_rma_op {
    tj_staged_t *s;
    MPI_Win win;
    int target;
    int refs; /* the list's, and the request's for an R form */
    struct tj_rma_op *next;
};

tj_call_result_t tj_rma_begin(const char *fn, int n, const tj_staged_buf_t *bufs, tj_rma_op_t **op,
                              int *rc)
{
    tj_call_result_t r;
    tj_rma_op_t *o = calloc(1, sizeof(*o));

    if (o == NULL) {
        tj_log_error("%s: out of memory staging a device buffer", fn);
        *rc = MPI_ERR_NO_MEM;
        return TJ_CALL_FAILED;
    }
    /* The MPI reads and writes the mirrors until the operation completes: types are kept. */
    if ((r = tj_staged_begin(fn, n, bufs, true, &o->s, rc)) != TJ_CALL_TAKEN) {
        free(o);
        return r;
    }
    *op = o;
    return TJ_CALL_TAKEN;
}

void *tj_rma_arg(const tj_rma_op_t *op, int i, const void *buf)
{
    return tj_staged_arg(op->s, i, buf);
}

/* Drop one reference; the last releases the mirrors. Under the lock. */
static void unref(tj_rma_op_t *op)
{
    if (--op->refs > 0)
        return;
    tj_staged_release(op->s);
    free(op);
}

/* Whether the MPI writes one of the operation's mirrors (a Get's origin, a result buffer), which
 * is still to be written back. Under the lock. */
static bool writes_back(const tj_rma_op_t *op)
{
    if (op->s->finished)
        return false;
    for (int i = 0; i < op->s->n; i++)
        if (op->s->has[i] && op->s->out[i])
            return true;
    return false;
}

/* The write-back waits for itself: no batch. */
static int request_finish(void *arg, const MPI_Status *status, tj_batch_t *b)
{
    tj_rma_op_t *op = arg;
    bool flush;
    int rc;
    (void)status;
    (void)b;
    pthread_mutex_lock(&rma_state->lock);
    flush = writes_back(op);
    pthread_mutex_unlock(&rma_state->lock);
    /* The request completed the operation at the origin, so its bytes should be in the mirror
     * now; MPICH 4.0.2 completes an MPI_Rget of a derived type before they arrive (they come at
     * the end of the epoch), and the mirror is written back once: a local flush towards the
     * target makes them arrive first. The request's passive-target epoch is still open (the
     * synchronisation that ends it would have written the operation back already). */
    if (flush)
        PMPI_Win_flush_local(op->target, op->win);
    pthread_mutex_lock(&rma_state->lock);
    rc = tj_staged_finish(op->s);
    pthread_mutex_unlock(&rma_state->lock);
    return rc;
}

static void request_release(void *arg)
{
    pthread_mutex_lock(&rma_state->lock);
    unref(arg);
    pthread_mutex_unlock(&rma_state->lock);
}

int tj_rma_issued(tj_rma_op_t *op, int rc, MPI_Win win, int target, MPI_Request *req)
{
    if (rc != MPI_SUCCESS) {
        tj_staged_release(op->s);
        free(op);
        return rc;
    }
    op->win = win;
    op->target = target;
    op->refs = 1;
    pthread_mutex_lock(&rma_state->lock);
    op->next = rma_state->list;
    rma_state->list = op;
    atomic_fetch_add(&rma_state->count, 1);
    if (req != NULL) {
        tj_completion_t done = {request_finish, request_release, op};
        op->refs++;
        tj_request_add_completion(op->s->reserved, *req, &done);
        op->s->reserved = NULL;
    }
    pthread_mutex_unlock(&rma_state->lock);
    return MPI_SUCCESS;
}

int tj_rma_completed(MPI_Win win, int target)
{
    tj_rma_op_t **at, *op;
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&rma_state->lock);
    for (at = &rma_state->list; (op = *at) != NULL;) {
        if (op->win != win || (target >= 0 && op->target != target)) {
            at = &op->next;
            continue;
        }
        *at = op->next;
        atomic_fetch_sub(&rma_state->count, 1);
        int r = tj_staged_finish(op->s);
        if (rc == MPI_SUCCESS)
            rc = r;
        unref(op);
    }
    pthread_mutex_unlock(&rma_state->lock);
    return rc;
}

void tj_rma_finalize(void)
{
    tj_rma_op_t *op;

    pthread_mutex_lock(&rma_state->lock);
    while ((op = rma_state->list) != NULL) {
        rma_state->list = op->next;
        atomic_fetch_sub(&rma_state->count, 1);
        unref(op);
    }
    pthread_mutex_unlock(&rma_state->lock);
}
