/* SPDX-License-Identifier: BSD-3-Clause */
/* The driver under the stand-in: libcuda.so.1 (under the tests, the CPU-only test double) opened
 * with dlopen, each entry point resolved with dlsym, cuInit once per process. */
#include <dlfcn.h>
#include <pthread.h>

#include "cudart.h"

rt_driver_t rt_drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t open_error;

/* Without these there is no runtime at all. */
static bool essential_present(void)
{
    return rt_drv.cuInit && rt_drv.cuDriverGetVersion && rt_drv.cuDeviceGetCount &&
           rt_drv.cuDeviceGet && rt_drv.cuDevicePrimaryCtxRetain && rt_drv.cuCtxGetCurrent &&
           rt_drv.cuCtxSetCurrent && rt_drv.cuCtxGetDevice;
}

static void open_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    int version = 0;
    CUresult rc;

    /* A machine without a driver: the runtime reports an insufficient driver. */
    if (lib == NULL) {
        open_error = cudaErrorInsufficientDriver;
        return;
    }
#define RT_RESOLVE(_name, _sym, _params) *(void **)&rt_drv._name = dlsym(lib, _sym);
    RT_DRIVER(RT_RESOLVE)
#undef RT_RESOLVE
    if (!essential_present()) {
        open_error = cudaErrorInsufficientDriver;
        return;
    }
    rc = rt_drv.cuInit(0);
    if (rc == CUDA_ERROR_NO_DEVICE) {
        open_error = cudaErrorNoDevice;
        return;
    }
    if (rc != CUDA_SUCCESS) {
        open_error = rt_error(rc);
        return;
    }
    /* CUDA's minor version compatibility: a runtime runs on any driver of its major version or
     * newer, and an older driver is cudaErrorInsufficientDriver. */
    rc = rt_drv.cuDriverGetVersion(&version);
    if (rc != CUDA_SUCCESS)
        open_error = rt_error(rc);
    else if (version / 1000 < CUDART_VERSION / 1000)
        open_error = cudaErrorInsufficientDriver;
}

cudaError_t rt_driver_open(void)
{
    pthread_once(&once, open_driver);
    return open_error;
}
