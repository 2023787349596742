/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the layer's state (MPI_Finalize): what typejit made in the driver released in the
 * order it depends on, the events before the streams and contexts they were recorded in. */
#include "gpu/cuda_internal.h"

void tj_gpu_finalize(void)
{
    if (tj_gpu.init_status != TJ_OK)
        return;
    tj_gpu_events_release();
    tj_gpu_contexts_release();
    tj_gpu_thread.here = NULL;
    tj_gpu_thread.innermost = NULL;
    tj_gpu_thread.last_current = NULL;
}
