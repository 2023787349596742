/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: their names and compute capabilities, and the primary context the typejit command
 * makes current on one (tj_gpu_use). */
#include "gpu/cuda_internal.h"

#include <limits.h>

tj_status_t tj_gpu_use(int device)
{
    CUdevice dev;
    CUcontext ctx;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK)
        return st;
    pthread_mutex_lock(&tj_gpu.entry_lock);
    if (tj_gpu.nused == TJ_GPU_MAX_CONTEXTS) {
        st = TJ_ERR_INVALID;
    } else if ((st = CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev))) == TJ_OK) {
        tj_gpu.used[tj_gpu.nused++] = dev;
    }
    pthread_mutex_unlock(&tj_gpu.entry_lock);
    if (st != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuCtxSetCurrent(ctx))) != TJ_OK)
        return st;
    tj_gpu_thread.here = NULL;
    return tj_gpu_entry_for(ctx) != NULL ? TJ_OK : TJ_ERR_CUDA;
}

tj_status_t tj_gpu_sm(int device, int *sm)
{
    int major, minor;
    CUdevice dev;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                            dev))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                            dev))) != TJ_OK)
        return st;
    *sm = major * 10 + minor;
    return TJ_OK;
}

tj_status_t tj_gpu_device_name(int device, char *name, size_t len)
{
    CUdevice dev;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if (len == 0 || len > INT_MAX)
        return TJ_ERR_INVALID;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetName(name, (int)len, dev))) != TJ_OK)
        return st;
    name[len - 1] = '\0';
    return TJ_OK;
}
