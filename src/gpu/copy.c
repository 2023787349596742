/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies between host and device memory, and device memory set, on typejit's stream in the
 * current scope's context. */
#include "gpu/cuda_internal.h"

tj_status_t tj_gpu_copy_dtoh_async(void *dst, tj_devptr_t src, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, len, tj_gpu_stream()));
    return st;
}

tj_status_t tj_gpu_copy_htod_async(tj_devptr_t dst, const void *src, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemcpyHtoDAsync((CUdeviceptr)dst, src, len, tj_gpu_stream()));
    return st;
}

tj_status_t tj_gpu_copy_dtoh(void *dst, tj_devptr_t src, size_t len)
{
    tj_status_t st = tj_gpu_copy_dtoh_async(dst, src, len);
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_copy_htod(tj_devptr_t dst, const void *src, size_t len)
{
    tj_status_t st = tj_gpu_copy_htod_async(dst, src, len);
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_memset(tj_devptr_t dst, unsigned char value, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemsetD8Async((CUdeviceptr)dst, value, len, tj_gpu_stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}
