/* SPDX-License-Identifier: BSD-3-Clause */
/* One wait per call (see wait_once.h). */
#include "move/wait_once.h"

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
