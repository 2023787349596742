/* SPDX-License-Identifier: BSD-3-Clause */
/* One wait per call, and what happens when it fails: a call's device work (packs, unpacks and
 * the copies around them) goes into one batch (gpu/batch.h) and is waited for once; when that
 * wait fails, the effects of the work are unknown and it is done again step by step, each step
 * waiting for itself. */
#ifndef TJ_MOVE_WAIT_ONCE_H
#define TJ_MOVE_WAIT_ONCE_H

#include "gpu/batch.h"
#include "gpu/cuda.h"

/* A call's device work into @p b, or, when @p b is NULL, step by step, each step waiting for
 * itself. Returns the MPI result. */
typedef int (*tj_wait_once_work_t)(void *arg, tj_batch_t *b);

/* @p work into a batch of its own, then one wait; when that wait fails, @p work again without a
 * batch (steps that cannot use the device then stage through host memory). Returns the MPI
 * result of the work that counted. */
int tj_wait_once_run(tj_wait_once_work_t work, void *arg);

/* @p work into a batch left running: where its device work lies in one context, an event is
 * recorded there after it (*event, held once) and nothing waits; anything else (no device work,
 * several contexts, no event to be had, a failed step) is waited for as tj_wait_once_run does,
 * and *event is NULL. The caller waits for the event (or, when that wait fails, does the work
 * again step by step). */
int tj_wait_once_leave_running(tj_wait_once_work_t work, void *arg, tj_gpu_event_t **event);

#endif /* TJ_MOVE_WAIT_ONCE_H */
