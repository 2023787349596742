/* SPDX-License-Identifier: BSD-3-Clause */
/* What the wrappers share about device buffers: whether a call can have one, where a buffer's
 * first byte lies, and the one way a call typejit cannot serve is refused. */
#include <pthread.h>
#include <string.h>

#include "gpu/cuda.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/state.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "move/span.h"
#include "util/log.h"
#include "util/stats.h"

bool tj_interpose_device_calls(void)
{
    return !tj_gpu_absent() && tj_interpose_active() && tj_gpu_available();
}

int tj_interpose_on_device(const void *buf, int64_t count, MPI_Datatype type, bool *on)
{
    const tj_type_info_t *info;
    tj_gpu_ptr_t where;
    int rc = MPI_SUCCESS;

    *on = false;
    if (count <= 0 || buf == MPI_IN_PLACE || (info = tj_interpose_lookup(type)) == NULL)
        return MPI_SUCCESS;
    if (!info->extents || info->size == 0)
        goto out;
    if (info->wide && (rc = tj_span_check(info, type, buf, count, "a call")) != MPI_SUCCESS) {
        *on = rc == MPI_ERR_BUFFER; /* partly on the device */
        if (*on)
            rc = MPI_SUCCESS;
        goto out;
    }
    if (tj_gpu_query((const char *)buf + info->true_lb, &where) != TJ_OK)
        rc = MPI_ERR_INTERN; /* the query said why */
    else
        *on = tj_gpu_device_like(where.kind);
out:
    tj_table_return(info);
    return rc;
}

int tj_interpose_refuse(const char *fn, const char *why)
{
    bool first = true;

    pthread_mutex_lock(&tj_interpose_state.device.reported_lock);
    for (int i = 0; i < tj_interpose_state.device.nreported && first; i++)
        first = strcmp(tj_interpose_state.device.reported[i], fn) != 0;
    if (first && tj_interpose_state.device.nreported < TJ_INTERPOSE_REPORTED_MAX)
        tj_interpose_state.device.reported[tj_interpose_state.device.nreported++] = fn;
    pthread_mutex_unlock(&tj_interpose_state.device.reported_lock);
    if (first)
        tj_log_error("%s: %s; MPI_ERR_BUFFER", fn, why);
    tj_stats_inc(TJ_STAT_calls_refused);
    return MPI_ERR_BUFFER;
}
