/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers for the Fortran test programs: host memory, or device memory of the CUDA driver (the
 * CPU-only test driver under the emu label), which the Fortran code never touches directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cudrv.h"

int tj_buf_init(int device);
void *tj_buf_alloc(size_t bytes);
void tj_buf_put(void *buf, const void *host, size_t bytes);
void tj_buf_get(void *host, const void *buf, size_t bytes);
void tj_buf_free(void *buf);

static int on_device;

/* 0 when buffers of the kind asked for can be made (device: a driver and a device). */
int tj_buf_init(int device)
{
    on_device = device;
    return !device || cudrv_open() ? 0 : 1;
}

void *tj_buf_alloc(size_t bytes)
{
    CUdeviceptr d;
    void *h;
    if (!on_device) {
        h = calloc(1, bytes);
        if (h == NULL)
            abort();
        return h;
    }
    CUDRV(cuMemAlloc(&d, bytes));
    CUDRV(cuMemsetD8(d, 0, bytes));
    return (void *)(uintptr_t)d;
}

void tj_buf_put(void *buf, const void *host, size_t bytes)
{
    if (on_device)
        CUDRV(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)buf, host, bytes));
    else
        memcpy(buf, host, bytes);
}

void tj_buf_get(void *host, const void *buf, size_t bytes)
{
    if (on_device)
        CUDRV(cuMemcpyDtoH(host, (CUdeviceptr)(uintptr_t)buf, bytes));
    else
        memcpy(host, buf, bytes);
}

void tj_buf_free(void *buf)
{
    if (on_device)
        CUDRV(cuMemFree((CUdeviceptr)(uintptr_t)buf));
    else
        free(buf);
}
