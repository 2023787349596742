/* SPDX-License-Identifier: BSD-3-Clause */
/* The send queue: device sends whose pack is still running. A non-blocking send (Isend and its
 * modes, the Start of a persistent send) launches its pack, records an event after it and
 * returns; the system MPI's persistent request behind the application's handle is started once
 * that event has completed (a non-blocking collective's system call is made then), checked at the
 * entry of every MPI call typejit exports (one load while the queue is empty), by a progress thread
 * where asked, and at the latest before any call that may block. Sends to one destination of one
 * communicator are started in the order they were posted, and a later send there, of any kind,
 * waits for the earlier ones to start (non-overtaking); sends to other destinations are not held
 * back. */
#ifndef TJ_CALLS_SEND_QUEUE_H
#define TJ_CALLS_SEND_QUEUE_H

#include <limits.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "calls/p2p.h"
#include "calls/state.h"
#include "gpu/cuda.h"

typedef enum {
    TJ_SEND_IDLE,    /* not in the queue: started, or never deferred */
    TJ_SEND_QUEUED,  /* its pack may still run; the system MPI has not seen it */
    TJ_SEND_STARTED, /* handed to the system MPI (MPI_Start) */
    TJ_SEND_FAILED   /* its pack failed and could not be done again: `rc`, never started */
} tj_send_state_t;

/* The destination of a deferred non-blocking collective: the collectives of one communicator
 * keep their order among themselves. */
#define TJ_SEND_QUEUE_COLLECTIVE INT_MIN

/* One deferred send, in the record of its request (calls/request.c). */
typedef struct tj_queued_send {
    struct tj_queued_send *next;
    /* A point-to-point send: the system MPI's persistent request behind it. A collective: its
     * system request once started. */
    MPI_Request handle;
    MPI_Comm comm;         /* with dest: the order it keeps */
    int dest;              /* TJ_SEND_QUEUE_COLLECTIVE: a collective */
    tj_xfer_t *xfer;       /* what was packed; packed again when the pack failed */
    tj_gpu_event_t *event; /* recorded after the pack (and its copy) */
    _Atomic int state;     /* tj_send_state_t */
    int rc;                /* the MPI error of a failed send */
    /* A collective's start: its packs done again when @p pack_failed, then the system MPI's
     * call, its request in q->handle; returns the MPI result (NULL: a point-to-point send). */
    int (*start)(struct tj_queued_send *q, bool pack_failed);
    void *arg; /* for start */
} tj_queued_send_t;

/* Sends in the queue; read with one relaxed load at the entry of every exported MPI call. */
static inline bool tj_send_queue_empty(void)
{
    return atomic_load_explicit(&tj_calls_state.send_queue.length, memory_order_relaxed) == 0;
}

/* Whether sends may be deferred in this process: TYPEJIT_PROGRESS is not off, and no Fortran
 * MPI bindings are loaded (they reach the system MPI's blocking calls without passing through
 * typejit, which could then not start a deferred send before them). Decided at MPI_Init. */
static inline bool tj_send_queue_enabled(void)
{
    return tj_calls_state.send_queue.active;
}

/* Set up after MPI_Init: the decision above, and the progress thread (TYPEJIT_PROGRESS=thread
 * under MPI_THREAD_MULTIPLE). */
void tj_send_queue_init(void);

/* Append @p q (its fields set, event held by it). */
void tj_send_queue_push(tj_queued_send_t *q);
/* Append the @p n sends linked from @p first to @p last by their next, under one lock
 * (MPI_Startall). */
void tj_send_queue_push_chain(tj_queued_send_t *first, tj_queued_send_t *last, int n);

/* Start the queued sends whose packs have completed, in order, without waiting. */
void tj_send_queue_progress(void);

/* Start every queued send, waiting for their packs: before a call that may block. */
void tj_send_queue_flush(void);

/* Start the queued sends to @p dest of @p comm, waiting for their packs: before another send
 * there. */
void tj_send_queue_flush_dest(MPI_Comm comm, int dest);
static inline void tj_send_queue_flush_to(MPI_Comm comm, int dest)
{
    if (!tj_send_queue_empty())
        tj_send_queue_flush_dest(comm, dest);
}

/* Start the queued collectives of @p comm, waiting for their packs: before another collective
 * there (the collectives of a communicator are called in one order on every rank). */
static inline void tj_send_queue_flush_collectives(MPI_Comm comm)
{
    if (!tj_send_queue_empty())
        tj_send_queue_flush_dest(comm, TJ_SEND_QUEUE_COLLECTIVE);
}

/* Start @p q and the sends queued before it to its destination, waiting for their packs. */
void tj_send_queue_flush_one(tj_queued_send_t *q);

/* Whether @p q waits in the queue still (the system MPI has not seen it). */
static inline bool tj_send_queue_waiting(const tj_queued_send_t *q)
{
    return atomic_load_explicit(&q->state, memory_order_acquire) == TJ_SEND_QUEUED;
}

/* At the entry of an exported MPI call while the queue is not empty: a call that may block
 * (@p blocking) flushes the queue, any other makes progress. */
void tj_send_queue_on_call(int blocking);

/* MPI_Finalize: every queued send started, the progress thread stopped. */
void tj_send_queue_finalize(void);

#endif /* TJ_CALLS_SEND_QUEUE_H */
