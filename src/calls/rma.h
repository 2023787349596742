/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided communication with origin buffers in device memory, for an MPI that is not
 * CUDA-aware: the origin (and compare and result) buffers are staged through host mirrors
 * (src/calls/staged.c) that live until the operation completes at the origin: the window
 * synchronisation that completes it (fence, complete, unlock, flush), or, for the request-based
 * forms, the Wait or Test of their request, whichever comes first. Then the buffers the MPI
 * wrote (a Get's origin, a result buffer) are written back to the device. */
#ifndef TJ_CALLS_RMA_H
#define TJ_CALLS_RMA_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "calls/call_result.h"
#include "calls/staged.h"
#include "calls/state.h"

/* Pending staged operations: zero means the window synchronisation wrappers have nothing to do
 * (one relaxed load). */
static inline bool tj_rma_pending(void)
{
    return atomic_load_explicit(&tj_calls_state.rma.count, memory_order_relaxed) > 0;
}

typedef struct tj_rma_op tj_rma_op_t;

/* Stage the buffers of a one-sided call (tj_staged_begin); on TJ_CALL_TAKEN the caller calls
 * the system MPI with tj_rma_arg and then tj_rma_issued. */
tj_call_result_t tj_rma_begin(const char *fn, int n, const tj_staged_buf_t *bufs, tj_rma_op_t **op,
                              int *rc);

/* The buffer to give the system MPI for argument @p i: its mirror, or @p buf itself. */
void *tj_rma_arg(const tj_rma_op_t *op, int i, const void *buf);

/* The system MPI's call returned @p rc: on success @p op, an operation on @p win towards
 * @p target, is remembered until it completes (@p req: its request, for the R forms, else
 * NULL); otherwise it is released. Returns @p rc. */
int tj_rma_issued(tj_rma_op_t *op, int rc, MPI_Win win, int target, MPI_Request *req);

/* The synchronisation of @p win returned: every pending operation towards @p target (-1: all)
 * completed at the origin and is written back and released. MPI result of the write-backs. */
int tj_rma_completed(MPI_Win win, int target);

/* MPI_Finalize: release what is still pending (an erroneous program's unsynchronised calls). */
void tj_rma_finalize(void);

#endif /* TJ_CALLS_RMA_H */
