/* SPDX-License-Identifier: BSD-3-Clause */
/* Driver errors: each failed call logged with the call, the error string, file and line, a
 * failure repeated on every call once; a sticky error ends typejit's use of its context. */
#include "gpu/cuda_internal.h"

#include "util/log.h"

/* Errors after which the context cannot be used again (the CUDA documentation's "sticky"
 * errors: the process must destroy the context). */
static bool is_sticky(CUresult rc)
{
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return true;
    default:
        return false;
    }
}

bool tj_gpu_first_report(int line, CUresult rc)
{
    bool first = true;
    pthread_mutex_lock(&tj_gpu.report_lock);
    for (int i = 0; i < tj_gpu.nreported && first; i++)
        first = tj_gpu.reported[i].line != line || tj_gpu.reported[i].rc != rc;
    if (first && tj_gpu.nreported < TJ_GPU_MAX_REPORTED) {
        tj_gpu.reported[tj_gpu.nreported].line = line;
        tj_gpu.reported[tj_gpu.nreported].rc = rc;
        tj_gpu.nreported++;
    }
    pthread_mutex_unlock(&tj_gpu.report_lock);
    return first;
}

const char *tj_gpu_error_string(CUresult rc)
{
    const char *msg = NULL;

    if (tj_gpu.cu.cuGetErrorString == NULL ||
        tj_gpu.cu.cuGetErrorString(rc, &msg) != CUDA_SUCCESS || !msg)
        msg = "unknown error";
    return msg;
}

tj_status_t tj_gpu_failed(CUresult rc, const char *call, bool quiet, const char *file, int line)
{
    ctx_entry_t *here = tj_gpu_thread.here;
    const char *msg = tj_gpu_error_string(rc);
    tj_log_level_t level;

    if (is_sticky(rc) && here != NULL) {
        if (!atomic_exchange(&here->dead, true) && tj_log_level() >= TJ_LOG_ERROR)
            tj_log_write(TJ_LOG_ERROR, file, line,
                         "cuda call %s failed: %s (%d); the cuda context of device %d is "
                         "unusable, typejit stops using it (its buffers now get MPI errors)",
                         call, msg, (int)rc, here->ordinal);
        return TJ_ERR_CONTEXT;
    }
    /* A failure repeated on every call is logged once; its repeats are debug lines, and so are
     * failures while releasing what typejit made in a context the application destroyed. */
    level = !tj_gpu_thread.releasing && !quiet && tj_gpu_first_report(line, rc) ? TJ_LOG_WARN
                                                                                : TJ_LOG_DEBUG;
    if (tj_log_level() >= (int)level)
        tj_log_write(level, file, line, "cuda call %s failed: %s (%d)", call, msg, (int)rc);
    return TJ_ERR_CUDA;
}
