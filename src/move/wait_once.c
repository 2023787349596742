/* SPDX-License-Identifier: BSD-3-Clause */
/* One wait per call (see wait_once.h). */
#include "move/wait_once.h"

#include <mpi.h>

#include "util/log.h"

int tj_wait_once_run(tj_wait_once_work_t work, void *arg)
{
    tj_batch_t b;
    int rc;

    tj_batch_init(&b);
    rc = work(arg, &b);
    if (tj_batch_wait(&b) != TJ_OK) {
        /* The failure was logged where it happened. */
        tj_log_debug("a device call's wait failed; its work is done again step by step");
        rc = work(arg, NULL);
    }
    return rc;
}

int tj_wait_once_leave_running(tj_wait_once_work_t work, void *arg, tj_gpu_event_t **event)
{
    tj_batch_t b;
    int rc;

    *event = NULL;
    tj_batch_init(&b);
    rc = work(arg, &b);
    if (rc == MPI_SUCCESS && b.nctx == 1 && b.deferred > 0) {
        tj_gpu_scope_t scope;
        if (tj_gpu_enter_again(b.ctx[0], &scope) == TJ_OK) {
            tj_status_t st = tj_gpu_event_record(event);
            tj_gpu_leave(&scope);
            if (st == TJ_OK)
                return rc;
            *event = NULL;
        }
    }
    if (tj_batch_wait(&b) != TJ_OK) {
        tj_log_debug("a device call's wait failed; its work is done again step by step");
        rc = work(arg, NULL);
    }
    return rc;
}
