/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA driver as a test application uses it, opened with dlopen so that a test binary starts
 * (and skips) on machines without libcuda.so.1. Under the emu label that library is the CPU-only
 * test double of tests/fakecuda/, chosen by LD_LIBRARY_PATH; under gpu, the real driver. */
#ifndef TJ_TESTS_CUDRV_H
#define TJ_TESTS_CUDRV_H

#include <cuda.h>
#include <stdbool.h>

#define CUDRV_SYMBOLS(_X)                                                                          \
    _X(cuInit, "cuInit")                                                                           \
    _X(cuDriverGetVersion, "cuDriverGetVersion")                                                   \
    _X(cuGetErrorString, "cuGetErrorString")                                                       \
    _X(cuDeviceGetCount, "cuDeviceGetCount")                                                       \
    _X(cuDeviceGet, "cuDeviceGet")                                                                 \
    _X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                                       \
    _X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                                  \
    _X(cuDevicePrimaryCtxReset, "cuDevicePrimaryCtxReset_v2")                                      \
    _X(cuCtxSetCurrent, "cuCtxSetCurrent")                                                         \
    _X(cuCtxGetCurrent, "cuCtxGetCurrent")                                                         \
    _X(cuCtxDestroy, "cuCtxDestroy_v2")                                                            \
    _X(cuCtxPushCurrent, "cuCtxPushCurrent_v2")                                                    \
    _X(cuCtxPopCurrent, "cuCtxPopCurrent_v2")                                                      \
    _X(cuCtxSynchronize, "cuCtxSynchronize")                                                       \
    _X(cuMemAlloc, "cuMemAlloc_v2")                                                                \
    _X(cuMemFree, "cuMemFree_v2")                                                                  \
    _X(cuMemAllocManaged, "cuMemAllocManaged")                                                     \
    _X(cuMemHostAlloc, "cuMemHostAlloc")                                                           \
    _X(cuMemFreeHost, "cuMemFreeHost")                                                             \
    _X(cuMemcpyHtoD, "cuMemcpyHtoD_v2")                                                            \
    _X(cuMemcpyDtoH, "cuMemcpyDtoH_v2")                                                            \
    _X(cuMemsetD8, "cuMemsetD8_v2")

/* Entry points of the allocation kinds a program may use besides cuMemAlloc (stream-ordered
 * pools, VMM, managed advice, registration, IPC, several devices): NULL where the driver lacks
 * them (a 12.x driver lacks none of these; tests that need one check it). */
#define CUDRV_OPTIONAL(_X)                                                                         \
    _X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                                               \
    _X(cuStreamCreate, "cuStreamCreate")                                                           \
    _X(cuStreamSynchronize, "cuStreamSynchronize")                                                 \
    _X(cuStreamDestroy, "cuStreamDestroy_v2")                                                      \
    _X(cuMemAllocAsync, "cuMemAllocAsync")                                                         \
    _X(cuMemFreeAsync, "cuMemFreeAsync")                                                           \
    _X(cuMemPoolCreate, "cuMemPoolCreate")                                                         \
    _X(cuMemPoolDestroy, "cuMemPoolDestroy")                                                       \
    _X(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync")                                         \
    _X(cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity")                             \
    _X(cuMemCreate, "cuMemCreate")                                                                 \
    _X(cuMemRelease, "cuMemRelease")                                                               \
    _X(cuMemAddressReserve, "cuMemAddressReserve")                                                 \
    _X(cuMemAddressFree, "cuMemAddressFree")                                                       \
    _X(cuMemMap, "cuMemMap")                                                                       \
    _X(cuMemUnmap, "cuMemUnmap")                                                                   \
    _X(cuMemSetAccess, "cuMemSetAccess")                                                           \
    _X(cuMemAdvise, "cuMemAdvise_v2")                                                              \
    _X(cuMemPrefetchAsync, "cuMemPrefetchAsync_v2")                                                \
    _X(cuMemHostRegister, "cuMemHostRegister_v2")                                                  \
    _X(cuMemHostUnregister, "cuMemHostUnregister")                                                 \
    _X(cuIpcGetMemHandle, "cuIpcGetMemHandle")                                                     \
    _X(cuIpcOpenMemHandle, "cuIpcOpenMemHandle_v2")                                                \
    _X(cuIpcCloseMemHandle, "cuIpcCloseMemHandle")                                                 \
    _X(cuMemPoolExportToShareableHandle, "cuMemPoolExportToShareableHandle")                       \
    _X(cuMemPoolImportFromShareableHandle, "cuMemPoolImportFromShareableHandle")                   \
    _X(cuMemPoolExportPointer, "cuMemPoolExportPointer")                                           \
    _X(cuMemPoolImportPointer, "cuMemPoolImportPointer")

typedef struct {
#define CUDRV_FIELD(_name, _sym) __typeof__(&_name) _name;
    CUDRV_SYMBOLS(CUDRV_FIELD)
    CUDRV_OPTIONAL(CUDRV_FIELD)
#undef CUDRV_FIELD
    /* cuCtxCreate_v2, which every driver of the supported range exports (cuda.h 13 maps the
     * name cuCtxCreate to cuCtxCreate_v4, which 12.x drivers lack). */
    CUresult (*ctx_create)(CUcontext *pctx, unsigned int flags, CUdevice dev);
} cudrv_t;

extern cudrv_t drv;

/* Open libcuda.so.1, load the table, cuInit, and make device 0's primary context current.
 * False (with the reason on stdout) when there is no driver or no device: the test skips. */
bool cudrv_open(void);

/* Abort the test with the call, file, line and error string unless @p rc is CUDA_SUCCESS. */
void cudrv_check(CUresult rc, const char *call, const char *file, int line);
#define CUDRV(_call) cudrv_check(drv._call, #_call, __FILE__, __LINE__)

#endif /* TJ_TESTS_CUDRV_H */
