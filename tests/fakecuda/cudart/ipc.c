/* SPDX-License-Identifier: BSD-3-Clause */
/* Interprocess handles of device memory and events: cudaIpcMemHandle_t and cudaIpcEventHandle_t
 * hold the driver's CUipcMemHandle and CUipcEventHandle byte for byte (both 64 bytes). */
#include <stdint.h>
#include <string.h>

#include "cudart.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(CUipcMemHandle), "IPC memory handle size");
_Static_assert(sizeof(cudaIpcEventHandle_t) == sizeof(CUipcEventHandle), "IPC event handle size");

RT_EXPORT cudaError_t CUDARTAPI cudaIpcGetMemHandle(cudaIpcMemHandle_t *handle, void *devPtr)
{
    CUipcMemHandle h;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && handle == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuIpcGetMemHandle, &h, (CUdeviceptr)(uintptr_t)devPtr);
    if (e == cudaSuccess)
        memcpy(handle, &h, sizeof h);
    return rt_return(e);
}

/* CUDA Runtime API, Device Management, cudaIpcOpenMemHandle: flags "must be specified as
 * cudaIpcMemLazyEnablePeerAccess", the driver's CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS; the driver
 * judges them. */
RT_EXPORT cudaError_t CUDARTAPI cudaIpcOpenMemHandle(void **devPtr, cudaIpcMemHandle_t handle,
                                                     unsigned int flags)
{
    CUipcMemHandle h;
    CUdeviceptr d = 0;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && devPtr == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        memcpy(&h, &handle, sizeof h);
        e = RT_CALL(cuIpcOpenMemHandle, &d, h, flags);
    }
    if (e == cudaSuccess)
        *devPtr = (void *)(uintptr_t)d;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaIpcCloseMemHandle(void *devPtr)
{
    RT_FORWARD(cuIpcCloseMemHandle, (CUdeviceptr)(uintptr_t)devPtr);
}

RT_EXPORT cudaError_t CUDARTAPI cudaIpcGetEventHandle(cudaIpcEventHandle_t *handle,
                                                      cudaEvent_t event)
{
    CUipcEventHandle h;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && handle == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuIpcGetEventHandle, &h, (CUevent)event);
    if (e == cudaSuccess)
        memcpy(handle, &h, sizeof h);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaIpcOpenEventHandle(cudaEvent_t *event,
                                                       cudaIpcEventHandle_t handle)
{
    CUipcEventHandle h;
    CUevent ev = NULL;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && event == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess) {
        memcpy(&h, &handle, sizeof h);
        e = RT_CALL(cuIpcOpenEventHandle, &ev, h);
    }
    if (e == cudaSuccess)
        *event = (cudaEvent_t)ev;
    return rt_return(e);
}
