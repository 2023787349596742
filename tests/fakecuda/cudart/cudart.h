/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interface of the CPU-only stand-in of the CUDA runtime API (libcudart.so.12 and
 * libcudart.so.13, built from the same files against that version's headers): the driver it runs
 * on, the calling thread's device and context, the runtime's error rules. */
#ifndef TJ_TESTS_FAKECUDA_CUDART_CUDART_H
#define TJ_TESTS_FAKECUDA_CUDART_CUDART_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stddef.h>

/* Every exported runtime entry point carries this; everything else stays hidden. */
#define RT_EXPORT __attribute__((visibility("default")))

#define RT_MAX_DEVICES 64

/* ---- the driver (driver.c) ------------------------------------------------------------------ */

/* The driver entry points the stand-in calls: field, exported symbol, parameter list. Each is
 * resolved with dlsym; one the driver lacks stays NULL, and only the runtime calls that need it
 * fail (RT_CALL). The names are the ABI's, not cuda.h's macros, so the 12 and 13 headers agree. */
#define RT_DRIVER(_X)                                                                              \
    _X(cuInit, "cuInit", (unsigned int))                                                           \
    _X(cuDriverGetVersion, "cuDriverGetVersion", (int *))                                          \
    _X(cuDeviceGetCount, "cuDeviceGetCount", (int *))                                              \
    _X(cuDeviceGet, "cuDeviceGet", (CUdevice *, int))                                              \
    _X(cuDeviceGetName, "cuDeviceGetName", (char *, int, CUdevice))                                \
    _X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", (CUuuid *, CUdevice))                                \
    _X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", (size_t *, CUdevice))                              \
    _X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int *, CUdevice_attribute, CUdevice))        \
    _X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext *, CUdevice))              \
    _X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2", (CUdevice))                          \
    _X(cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2", (CUdevice, unsigned int))      \
    _X(cuDevicePrimaryCtxGetState, "cuDevicePrimaryCtxGetState",                                   \
       (CUdevice, unsigned int *, int *))                                                          \
    _X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext *))                                          \
    _X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext))                                            \
    _X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext))                                       \
    _X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext *))                                       \
    _X(cuCtxGetDevice, "cuCtxGetDevice", (CUdevice *))                                             \
    _X(cuCtxSynchronize, "cuCtxSynchronize", (void))                                               \
    _X(cuCtxGetStreamPriorityRange, "cuCtxGetStreamPriorityRange", (int *, int *))                 \
    _X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr *, size_t))                                       \
    _X(cuMemAllocPitch, "cuMemAllocPitch_v2",                                                      \
       (CUdeviceptr *, size_t *, size_t, size_t, unsigned int))                                    \
    _X(cuMemFree, "cuMemFree_v2", (CUdeviceptr))                                                   \
    _X(cuMemAllocManaged, "cuMemAllocManaged", (CUdeviceptr *, size_t, unsigned int))              \
    _X(cuMemAllocHost, "cuMemAllocHost_v2", (void **, size_t))                                     \
    _X(cuMemHostAlloc, "cuMemHostAlloc", (void **, size_t, unsigned int))                          \
    _X(cuMemFreeHost, "cuMemFreeHost", (void *))                                                   \
    _X(cuMemHostRegister, "cuMemHostRegister_v2", (void *, size_t, unsigned int))                  \
    _X(cuMemHostUnregister, "cuMemHostUnregister", (void *))                                       \
    _X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2",                                  \
       (CUdeviceptr *, void *, unsigned int))                                                      \
    _X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t *, size_t *))                                      \
    _X(cuMemAdvise, "cuMemAdvise_v2", (CUdeviceptr, size_t, CUmem_advise, CUmemLocation))          \
    _X(cuMemPrefetchAsync, "cuMemPrefetchAsync_v2",                                                \
       (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream))                               \
    _X(cuPointerGetAttributes, "cuPointerGetAttributes",                                           \
       (unsigned int, CUpointer_attribute *, void **, CUdeviceptr))                                \
    _X(cuMemcpy, "cuMemcpy", (CUdeviceptr, CUdeviceptr, size_t))                                   \
    _X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr, CUdeviceptr, size_t, CUstream))               \
    _X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", (CUdeviceptr, const void *, size_t))                       \
    _X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", (void *, CUdeviceptr, size_t))                             \
    _X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", (CUdeviceptr, CUdeviceptr, size_t))                        \
    _X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr, const void *, size_t, CUstream))   \
    _X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *, CUdeviceptr, size_t, CUstream))         \
    _X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr, CUdeviceptr, size_t, CUstream))    \
    _X(cuMemcpy2D, "cuMemcpy2D_v2", (const CUDA_MEMCPY2D *))                                       \
    _X(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2", (const CUDA_MEMCPY2D *, CUstream))                   \
    _X(cuMemcpy3D, "cuMemcpy3D_v2", (const CUDA_MEMCPY3D *))                                       \
    _X(cuMemcpy3DAsync, "cuMemcpy3DAsync_v2", (const CUDA_MEMCPY3D *, CUstream))                   \
    _X(cuMemsetD8, "cuMemsetD8_v2", (CUdeviceptr, unsigned char, size_t))                          \
    _X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr, unsigned char, size_t, CUstream))         \
    _X(cuMemsetD2D8, "cuMemsetD2D8_v2", (CUdeviceptr, size_t, unsigned char, size_t, size_t))      \
    _X(cuMemsetD2D8Async, "cuMemsetD2D8Async",                                                     \
       (CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream))                             \
    _X(cuStreamCreate, "cuStreamCreate", (CUstream *, unsigned int))                               \
    _X(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", (CUstream *, unsigned int, int))  \
    _X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream))                                          \
    _X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream))                                     \
    _X(cuStreamQuery, "cuStreamQuery", (CUstream))                                                 \
    _X(cuStreamWaitEvent, "cuStreamWaitEvent", (CUstream, CUevent, unsigned int))                  \
    _X(cuStreamGetFlags, "cuStreamGetFlags", (CUstream, unsigned int *))                           \
    _X(cuStreamGetPriority, "cuStreamGetPriority", (CUstream, int *))                              \
    _X(cuEventCreate, "cuEventCreate", (CUevent *, unsigned int))                                  \
    _X(cuEventRecord, "cuEventRecord", (CUevent, CUstream))                                        \
    _X(cuEventQuery, "cuEventQuery", (CUevent))                                                    \
    _X(cuEventSynchronize, "cuEventSynchronize", (CUevent))                                        \
    _X(cuEventElapsedTime_v1, "cuEventElapsedTime", (float *, CUevent, CUevent))                   \
    _X(cuEventElapsedTime_v2, "cuEventElapsedTime_v2", (float *, CUevent, CUevent))                \
    _X(cuEventDestroy, "cuEventDestroy_v2", (CUevent))                                             \
    _X(cuMemAllocAsync, "cuMemAllocAsync", (CUdeviceptr *, size_t, CUstream))                      \
    _X(cuMemFreeAsync, "cuMemFreeAsync", (CUdeviceptr, CUstream))                                  \
    _X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync",                                         \
       (CUdeviceptr *, size_t, CUmemoryPool, CUstream))                                            \
    _X(cuMemPoolCreate, "cuMemPoolCreate", (CUmemoryPool *, const CUmemPoolProps *))               \
    _X(cuMemPoolDestroy, "cuMemPoolDestroy", (CUmemoryPool))                                       \
    _X(cuMemPoolSetAccess, "cuMemPoolSetAccess", (CUmemoryPool, const CUmemAccessDesc *, size_t))  \
    _X(cuMemPoolGetAccess, "cuMemPoolGetAccess",                                                   \
       (CUmemAccess_flags *, CUmemoryPool, CUmemLocation *))                                       \
    _X(cuMemPoolSetAttribute, "cuMemPoolSetAttribute",                                             \
       (CUmemoryPool, CUmemPool_attribute, void *))                                                \
    _X(cuMemPoolGetAttribute, "cuMemPoolGetAttribute",                                             \
       (CUmemoryPool, CUmemPool_attribute, void *))                                                \
    _X(cuMemPoolTrimTo, "cuMemPoolTrimTo", (CUmemoryPool, size_t))                                 \
    _X(cuDeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", (CUmemoryPool *, CUdevice))         \
    _X(cuDeviceGetMemPool, "cuDeviceGetMemPool", (CUmemoryPool *, CUdevice))                       \
    _X(cuDeviceSetMemPool, "cuDeviceSetMemPool", (CUdevice, CUmemoryPool))                         \
    _X(cuIpcGetMemHandle, "cuIpcGetMemHandle", (CUipcMemHandle *, CUdeviceptr))                    \
    _X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2", (CUdeviceptr *, CUipcMemHandle, unsigned int)) \
    _X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle", (CUdeviceptr))                                  \
    _X(cuIpcGetEventHandle, "cuIpcGetEventHandle", (CUipcEventHandle *, CUevent))                  \
    _X(cuIpcOpenEventHandle, "cuIpcOpenEventHandle", (CUevent *, CUipcEventHandle))

typedef struct {
#define RT_FIELD(_name, _sym, _params) CUresult(CUDAAPI *_name) _params;
    RT_DRIVER(RT_FIELD)
#undef RT_FIELD
} rt_driver_t;

extern rt_driver_t rt_drv;

/* Opens libcuda.so.1 and initialises it, once per process; every later call gets the same
 * answer: cudaErrorInsufficientDriver without a driver (or one older than this runtime's major
 * version), cudaErrorNoDevice without a device. */
cudaError_t rt_driver_open(void);

/* The runtime error of a driver result (the codes the two enums share have the same value). */
cudaError_t rt_error(CUresult rc);

/* A driver call: cudaErrorNotSupported when the driver lacks the entry point. */
#define RT_CALL(_name, ...)                                                                        \
    (rt_drv._name == NULL ? cudaErrorNotSupported : rt_error(rt_drv._name(__VA_ARGS__)))

/* The body of a runtime call that is one driver call, on handles the driver checks itself:
 * rt_enter, the call, rt_return. */
#define RT_FORWARD(_name, ...)                                                                     \
    cudaError_t e = rt_enter(NULL);                                                                \
    if (e == cudaSuccess)                                                                          \
        e = RT_CALL(_name, __VA_ARGS__);                                                           \
    return rt_return(e)

/* RT_FORWARD of a call on the runtime stream @p _stream: the arguments name its driver stream
 * (rt_stream) s. */
#define RT_FORWARD_STREAM(_stream, _per_thread, _name, ...)                                        \
    CUstream s = NULL;                                                                             \
    cudaError_t e = rt_enter(NULL);                                                                \
    if (e == cudaSuccess)                                                                          \
        e = rt_stream(_stream, _per_thread, &s);                                                   \
    if (e == cudaSuccess)                                                                          \
        e = RT_CALL(_name, __VA_ARGS__);                                                           \
    return rt_return(e)

/* ---- devices, contexts, errors (context.c, errors.c) ---------------------------------------- */

/* The start of every runtime call that works on a device: opens the driver and makes sure the
 * calling thread has a current context, its own one if it made one current through the driver
 * API, else the primary context of its device (cudaSetDevice's, 0 by default), retained at first
 * use. Writes that context's device when @p device is not NULL. Returns the device's sticky
 * error, if it has one. */
cudaError_t rt_enter(int *device);

/* The end of every runtime call: records @p e as the calling thread's last error (cudaSuccess
 * and cudaErrorNotReady are not errors there) and a sticky error as the device's; returns @p e. */
cudaError_t rt_return(cudaError_t e);

/* The device of the calling thread's call in progress (rt_enter): the one a sticky result
 * poisons. -1 for calls that work on no device. */
extern _Thread_local int rt_call_device;

/* The sticky error of @p device (cudaSuccess when none), and its end at cudaDeviceReset. */
cudaError_t rt_sticky_get(int device);
void rt_sticky_clear(int device);

/* What a function the stand-in does not emulate answers (unsupported.c): cudaErrorNotSupported,
 * made the last error, and once per @p said a line on stderr naming @p name. */
int rt_unsupported(const char *name, int *said);

/* Whether @p e leaves the device unusable until it is reset (driver_types.h: "the process in an
 * inconsistent state"). */
bool rt_error_sticky(cudaError_t e);

/* The device of the calling thread's current context, else the thread's device (cudaSetDevice's,
 * 0 by default); no context is made. Call it after rt_driver_open succeeded. */
int rt_current_device(void);

/* The primary context of @p device, retained once by the runtime (the first call retains it). */
cudaError_t rt_primary(int device, CUcontext *ctx);

/* cudaDevAttrMaxPitch of @p device (a driver device), asked of the driver once per device. */
cudaError_t rt_max_pitch(int device, size_t *max);

/* How often cudaDeviceReset has reset @p device: handles the runtime keeps for a device (its
 * per-thread default streams) are stale once this changes. */
unsigned rt_device_generation(int device);

/* ---- streams (stream.c) --------------------------------------------------------------------- */

/* The driver stream for runtime stream @p s, after rt_enter: 0 is the legacy default stream, or
 * the per-thread default stream when @p per_thread (the _ptds and _ptsz entry points, programs
 * built with --default-stream per-thread); cudaStreamLegacy and cudaStreamPerThread name those
 * two; any other handle is a driver stream. */
cudaError_t rt_stream(cudaStream_t s, bool per_thread, CUstream *out);

/* ---- registration of a program's device code (launch.c) -------------------------------------- */

/* Says once per process, on stderr, that the program's own kernels cannot run here. */
void rt_refuse_kernel(const char *name);

/* ---- entry points the headers declare only under other macros ------------------------------- */

/* The per-thread default stream forms (cuda_runtime_api.h maps the plain names to these when a
 * program is built with --default-stream per-thread). */
cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t count,
                                      enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                           enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                        size_t width, size_t height, enum cudaMemcpyKind kind);
cudaError_t CUDARTAPI cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src,
                                             size_t spitch, size_t width, size_t height,
                                             enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemcpy3D_ptds(const struct cudaMemcpy3DParms *p);
cudaError_t CUDARTAPI cudaMemcpy3DAsync_ptsz(const struct cudaMemcpy3DParms *p,
                                             cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemset_ptds(void *devPtr, int value, size_t count);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
                                           cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemset2D_ptds(void *devPtr, size_t pitch, int value, size_t width,
                                        size_t height);
cudaError_t CUDARTAPI cudaMemset2DAsync_ptsz(void *devPtr, size_t pitch, int value, size_t width,
                                             size_t height, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemset3D_ptds(struct cudaPitchedPtr pitchedDevPtr, int value,
                                        struct cudaExtent extent);
cudaError_t CUDARTAPI cudaMemset3DAsync_ptsz(struct cudaPitchedPtr pitchedDevPtr, int value,
                                             struct cudaExtent extent, cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream);
cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
                                               unsigned int flags);
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **devPtr, size_t size, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *devPtr, cudaStream_t hStream);
cudaError_t CUDARTAPI cudaMallocFromPoolAsync_ptsz(void **ptr, size_t size, cudaMemPool_t memPool,
                                                   cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                            void **args, size_t sharedMem, cudaStream_t stream);
#if CUDART_VERSION >= 13000
cudaError_t CUDARTAPI cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count,
                                                struct cudaMemLocation location, unsigned int flags,
                                                cudaStream_t stream);
#else
cudaError_t CUDARTAPI cudaMemPrefetchAsync_ptsz(const void *devPtr, size_t count, int dstDevice,
                                                cudaStream_t stream);
cudaError_t CUDARTAPI cudaMemPrefetchAsync_v2_ptsz(const void *devPtr, size_t count,
                                                   struct cudaMemLocation location,
                                                   unsigned int flags, cudaStream_t stream);
#endif

/* What nvcc's host code calls (crt/host_runtime.h, crt/device_functions.h). */
void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
void CUDARTAPI __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                 const char *deviceName, int ext, size_t size, int constant,
                                 int global);
void CUDARTAPI __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                        char *deviceAddress, const char *deviceName, int ext,
                                        size_t size, int constant, int global);
char CUDARTAPI __cudaInitModule(void **fatCubinHandle);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                               struct CUstream_st *stream);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                                 void *stream);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                         void **args, size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                              void **args, size_t sharedMem, cudaStream_t stream);

#endif /* TJ_TESTS_FAKECUDA_CUDART_CUDART_H */
