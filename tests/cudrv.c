/* SPDX-License-Identifier: BSD-3-Clause */
/* The test applications' CUDA driver table (see cudrv.h). */
#include "cudrv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

cudrv_t drv;

bool cudrv_open(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    CUdevice dev;
    CUcontext ctx;
    int count = 0;

    if (lib == NULL) {
        printf("SKIP: no CUDA driver (%s)\n", dlerror());
        return false;
    }
#define CUDRV_LOAD(_name, _sym)                                                                    \
    if ((*(void **)&drv._name = dlsym(lib, _sym)) == NULL) {                                       \
        printf("SKIP: the CUDA driver lacks %s\n", _sym);                                          \
        return false;                                                                              \
    }
    CUDRV_SYMBOLS(CUDRV_LOAD)
    CUDRV_LOAD(ctx_create, "cuCtxCreate_v2")
#undef CUDRV_LOAD
#define CUDRV_LOAD_OPTIONAL(_name, _sym) *(void **)&drv._name = dlsym(lib, _sym);
    CUDRV_OPTIONAL(CUDRV_LOAD_OPTIONAL)
#undef CUDRV_LOAD_OPTIONAL
    if (drv.cuInit(0) != CUDA_SUCCESS || drv.cuDeviceGetCount(&count) != CUDA_SUCCESS ||
        count < 1) {
        printf("SKIP: no CUDA device\n");
        return false;
    }
    CUDRV(cuDeviceGet(&dev, 0));
    CUDRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    CUDRV(cuCtxSetCurrent(ctx));
    return true;
}

void cudrv_check(CUresult rc, const char *call, const char *file, int line)
{
    const char *msg = NULL;
    if (rc == CUDA_SUCCESS)
        return;
    if (drv.cuGetErrorString == NULL || drv.cuGetErrorString(rc, &msg) != CUDA_SUCCESS)
        msg = "unknown error";
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", file, line, call, msg, (int)rc);
    exit(1);
}
