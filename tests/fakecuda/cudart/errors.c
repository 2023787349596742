/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime's error rules: the calling thread's last error (cudaGetLastError,
 * cudaPeekAtLastError), sticky errors, and the names and descriptions of every cudaError_t. */
#include <stdio.h>

#include "cudart.h"
#include "errors.h"

static _Thread_local cudaError_t last_error = cudaSuccess;

_Thread_local int rt_call_device = -1;

/* A sticky error per device: every later call that works on the device returns it, and
 * cudaGetLastError cannot clear it (driver_types.h: such an error "leaves the process in an
 * inconsistent state and any further CUDA work will return the same error"). cudaDeviceReset
 * clears it (context.c), as the test driver's primary context reset does. */
static cudaError_t sticky[RT_MAX_DEVICES];

bool rt_error_sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorContained:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorExternalDevice:
        return true;
    default:
        return false;
    }
}

cudaError_t rt_sticky_get(int device)
{
    return device >= 0 && device < RT_MAX_DEVICES
               ? __atomic_load_n(&sticky[device], __ATOMIC_ACQUIRE)
               : cudaSuccess;
}

void rt_sticky_clear(int device)
{
    if (device >= 0 && device < RT_MAX_DEVICES)
        __atomic_store_n(&sticky[device], cudaSuccess, __ATOMIC_RELEASE);
}

/* cudaErrorNotReady is the answer of a query, not an error ("This result is not actually an
 * error, but must be indicated differently than cudaSuccess", driver_types.h); it is not made
 * the last error (assumption: a real runtime leaves the last error alone there). */
cudaError_t rt_return(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady)
        last_error = e;
    if (rt_error_sticky(e) && rt_call_device >= 0 && rt_call_device < RT_MAX_DEVICES) {
        cudaError_t none = cudaSuccess;
        __atomic_compare_exchange_n(&sticky[rt_call_device], &none, e, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
    }
    return e;
}

/* The sticky error of the calling thread's device, which no call clears. */
static cudaError_t current_error(void)
{
    return rt_driver_open() == cudaSuccess ? rt_sticky_get(rt_current_device()) : cudaSuccess;
}

/* CUDA Runtime API, Error Handling: "Returns the last error that has been produced by any of the
 * runtime calls in the same host thread and resets it to cudaSuccess." */
RT_EXPORT cudaError_t CUDARTAPI cudaGetLastError(void)
{
    cudaError_t e = last_error, s = current_error();
    last_error = cudaSuccess;
    return s != cudaSuccess ? s : e;
}

RT_EXPORT cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    cudaError_t s = current_error();
    return s != cudaSuccess ? s : last_error;
}

int rt_unsupported(const char *name, int *said)
{
    if (__atomic_exchange_n(said, 1, __ATOMIC_ACQ_REL) == 0)
        fprintf(stderr, "cudart stand-in: %s is not emulated (cudaErrorNotSupported)\n", name);
    return (int)rt_return(cudaErrorNotSupported);
}

cudaError_t rt_error(CUresult rc)
{
    switch ((int)rc) {
#define RT_KNOWN(_name, _value, _text)                                                             \
    case _value:                                                                                   \
        return (cudaError_t)_value;
        RT_ERRORS(RT_KNOWN)
#undef RT_KNOWN
    default:
        /* CUDA_ERROR_CONTEXT_ALREADY_CURRENT and KEY_ROTATION have no runtime code. */
        return cudaErrorUnknown;
    }
}

/* CUDA Runtime API, Error Handling: an unknown code is "unrecognized error code" for both. */
RT_EXPORT const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    switch ((int)error) {
#define RT_NAME(_name, _value, _text)                                                              \
    case _value:                                                                                   \
        return #_name;
        RT_ERRORS(RT_NAME)
#undef RT_NAME
    default:
        return "unrecognized error code";
    }
}

RT_EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    switch ((int)error) {
#define RT_TEXT(_name, _value, _text)                                                              \
    case _value:                                                                                   \
        return _text;
        RT_ERRORS(RT_TEXT)
#undef RT_TEXT
    default:
        return "unrecognized error code";
    }
}
