/* SPDX-License-Identifier: BSD-3-Clause */
/* Device memory and page-locked mapped host memory of the current context. */
#include "gpu/cuda_internal.h"

tj_status_t tj_gpu_alloc(size_t len, tj_devptr_t *ptr)
{
    CUdeviceptr p;
    tj_status_t st;

    tj_gpu_check_assumed();
    st = CU_CHECK(cuMemAlloc(&p, len ? len : 1));
    if (st == TJ_OK)
        *ptr = (tj_devptr_t)p;
    return st;
}

void tj_gpu_free(tj_devptr_t ptr)
{
    if (ptr != 0)
        CU_CHECK(cuMemFree((CUdeviceptr)ptr));
}

tj_status_t tj_gpu_alloc_host(size_t len, void **ptr)
{
    void *p;
    tj_status_t st;

    tj_gpu_check_assumed();
    st = CU_CHECK_QUIET(
        cuMemHostAlloc(&p, len ? len : 1, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    if (st == TJ_OK)
        *ptr = p;
    return st;
}

void tj_gpu_free_host(void *ptr)
{
    if (ptr != NULL)
        CU_CHECK(cuMemFreeHost(ptr));
}

tj_status_t tj_gpu_host_devptr(void *host, tj_devptr_t *dev)
{
    CUdeviceptr p;
    tj_status_t st;

    /* The device address is the current context's. */
    tj_gpu_check_assumed();
    st = CU_CHECK_QUIET(cuMemHostGetDevicePointer(&p, host, 0));
    if (st == TJ_OK)
        *dev = (tj_devptr_t)p;
    return st;
}
