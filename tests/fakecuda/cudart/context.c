/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices and contexts as the runtime sees them: the calling thread's device (cudaSetDevice,
 * device 0 by default), the primary context of each device retained at first use and made
 * current to each thread that has none, cudaDeviceSynchronize and cudaDeviceReset. */
#include <pthread.h>

#include "cudart.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext primaries[RT_MAX_DEVICES];
static unsigned generations[RT_MAX_DEVICES];

/* cudaSetDevice's device for this thread; -1 before any (device 0). */
static _Thread_local int thread_device = -1;

static cudaError_t valid_device(int device)
{
    int count = 0;
    cudaError_t e = rt_error(rt_drv.cuDeviceGetCount(&count));
    if (e == cudaSuccess && (device < 0 || device >= count || device >= RT_MAX_DEVICES))
        e = cudaErrorInvalidDevice;
    return e;
}

cudaError_t rt_primary(int device, CUcontext *ctx)
{
    cudaError_t e = cudaSuccess;
    CUdevice dev;

    pthread_mutex_lock(&lock);
    if (primaries[device] == NULL &&
        (e = rt_error(rt_drv.cuDeviceGet(&dev, device))) == cudaSuccess)
        e = rt_error(rt_drv.cuDevicePrimaryCtxRetain(&primaries[device], dev));
    *ctx = primaries[device];
    pthread_mutex_unlock(&lock);
    return e;
}

unsigned rt_device_generation(int device)
{
    return __atomic_load_n(&generations[device], __ATOMIC_ACQUIRE);
}

/* Binds the primary context of the thread's device to the thread. */
static cudaError_t bind_primary(int *device)
{
    int dev = thread_device < 0 ? 0 : thread_device;
    CUcontext ctx = NULL;
    cudaError_t e = valid_device(dev);

    /* A thread that never chose a device on a machine without device 0 gets no device. */
    if (e == cudaErrorInvalidDevice && thread_device < 0)
        e = cudaErrorNoDevice;
    if (e == cudaSuccess && (e = rt_primary(dev, &ctx)) == cudaSuccess)
        e = rt_error(rt_drv.cuCtxSetCurrent(ctx));
    *device = dev;
    return e;
}

/* CUDA Runtime API, "Interactions with the CUDA Driver API": a context the thread made current
 * through the driver API is the one runtime calls use; otherwise the primary context of the
 * thread's device is made current. */
cudaError_t rt_enter(int *device)
{
    CUcontext cur = NULL;
    CUdevice dev = thread_device < 0 ? 0 : thread_device;
    cudaError_t e = rt_driver_open();
    CUresult rc;

    if (e == cudaSuccess)
        e = rt_error(rt_drv.cuCtxGetCurrent(&cur));
    if (e == cudaSuccess && cur != NULL) {
        rc = rt_drv.cuCtxGetDevice(&dev);
        /* A primary context reset or released under the thread: bind it again. */
        if (rc == CUDA_ERROR_CONTEXT_IS_DESTROYED)
            cur = NULL;
        else
            e = rt_error(rc);
    }
    if (e == cudaSuccess && cur == NULL)
        e = bind_primary(&dev);
    rt_call_device = dev;
    if (e == cudaSuccess)
        e = rt_sticky_get(dev);
    if (device != NULL)
        *device = dev;
    return e;
}

RT_EXPORT cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    CUcontext ctx = NULL;
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess)
        e = valid_device(device);
    /* CUDA 12 and later: the primary context is initialised and made current at once. */
    if (e == cudaSuccess && (e = rt_primary(device, &ctx)) == cudaSuccess &&
        (e = rt_error(rt_drv.cuCtxSetCurrent(ctx))) == cudaSuccess)
        thread_device = device;
    return rt_return(e);
}

int rt_current_device(void)
{
    CUcontext cur = NULL;
    CUdevice dev;
    if (rt_drv.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur != NULL &&
        rt_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS)
        return dev;
    return thread_device < 0 ? 0 : thread_device;
}

RT_EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess && device == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        *device = rt_current_device();
    return rt_return(e);
}

/* CUDA Runtime API, Device Management, cudaInitDevice: the primary context is initialised but
 * not made current. Device flags (cudaInitDeviceFlagsAreValid) go to the primary context. */
RT_EXPORT cudaError_t CUDARTAPI cudaInitDevice(int device, unsigned int deviceFlags,
                                               unsigned int flags)
{
    CUcontext ctx = NULL;
    CUdevice dev;
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess && (flags & ~(unsigned)cudaInitDeviceFlagsAreValid) != 0)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = valid_device(device);
    if (e == cudaSuccess && (flags & cudaInitDeviceFlagsAreValid) &&
        (e = rt_error(rt_drv.cuDeviceGet(&dev, device))) == cudaSuccess)
        e = RT_CALL(cuDevicePrimaryCtxSetFlags, dev, deviceFlags);
    if (e == cudaSuccess)
        e = rt_primary(device, &ctx);
    return rt_return(e);
}

/* The flags of the primary context of the thread's device (cuDevicePrimaryCtxSetFlags). */
RT_EXPORT cudaError_t CUDARTAPI cudaSetDeviceFlags(unsigned int flags)
{
    int device = thread_device < 0 ? 0 : thread_device;
    CUdevice dev;
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess && (flags & ~(unsigned)cudaDeviceMask) != 0)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess && (e = valid_device(device)) == cudaSuccess &&
        (e = rt_error(rt_drv.cuDeviceGet(&dev, device))) == cudaSuccess)
        e = RT_CALL(cuDevicePrimaryCtxSetFlags, dev, flags);
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaGetDeviceFlags(unsigned int *flags)
{
    int device;
    unsigned int value = 0;
    int active = 0;
    cudaError_t e = rt_enter(&device);

    if (e == cudaSuccess && flags == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuDevicePrimaryCtxGetState, device, &value, &active);
    /* With unified addressing mapped pinned memory is always on. */
    if (e == cudaSuccess)
        *flags = value | cudaDeviceMapHost;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    RT_FORWARD(cuCtxSynchronize);
}

/* CUDA Runtime API, Device Management, cudaDeviceReset: destroys every resource of the current
 * device's primary context (the driver's cuDevicePrimaryCtxReset; the runtime keeps its
 * reference, so the device is usable again at the next call). Not after a sticky error: the
 * runtime API's error reference says the process must be terminated to use CUDA again, so the
 * reset returns the error and the device stays poisoned, as the test driver's reset does. With a
 * context of the program's own current, only the runtime's state for it goes: the per-thread
 * default streams made in it. */
RT_EXPORT cudaError_t CUDARTAPI cudaDeviceReset(void)
{
    CUcontext cur = NULL, primary = NULL;
    int device = thread_device < 0 ? 0 : thread_device;
    CUdevice dev;
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess && (e = rt_error(rt_drv.cuCtxGetCurrent(&cur))) == cudaSuccess &&
        cur != NULL && rt_drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS)
        device = dev;
    if (e == cudaSuccess)
        e = valid_device(device);
    if (e == cudaSuccess && (e = rt_primary(device, &primary)) == cudaSuccess) {
        __atomic_add_fetch(&generations[device], 1, __ATOMIC_ACQ_REL);
        if (cur == NULL || cur == primary) {
            e = RT_CALL(cuDevicePrimaryCtxReset, device);
            if (e == cudaSuccess)
                rt_sticky_clear(device);
        }
    }
    return rt_return(e);
}
