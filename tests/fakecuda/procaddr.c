/* SPDX-License-Identifier: BSD-3-Clause */
/* cuGetProcAddress (the entry point for a name and CUDA version) and cuGetExportTable. */
#include <string.h>

#include "fakecuda.h"

/* One exported ABI of a driver function: the name cuGetProcAddress is asked for, the CUDA
 * version that introduced this ABI under that name, and whether a per-thread-default-stream
 * variant exists (which the double does not emulate). */
typedef struct {
    const char *name;
    int since;
    bool ptds;
    void *fn;
} proc_t;

#define P(_name, _since, _ptds, _fn)                                                               \
    {                                                                                              \
        _name, _since, _ptds, (void *)_fn                                                          \
    }

static const proc_t procs[] = {
    P("cuInit", 2000, false, cuInit),
    P("cuDriverGetVersion", 2020, false, cuDriverGetVersion),
    P("cuGetErrorString", 6000, false, cuGetErrorString),
    P("cuGetErrorName", 6000, false, cuGetErrorName),
    P("cuGetProcAddress", 12000, false, cuGetProcAddress_v2),
    P("cuGetExportTable", 3000, false, cuGetExportTable),
    P("cuDeviceGetCount", 2000, false, cuDeviceGetCount),
    P("cuDeviceGet", 2000, false, cuDeviceGet),
    P("cuDeviceGetName", 2000, false, cuDeviceGetName),
    P("cuDeviceGetAttribute", 2000, false, cuDeviceGetAttribute),
    P("cuDeviceTotalMem", 3020, false, cuDeviceTotalMem_v2),
    P("cuDevicePrimaryCtxRetain", 7000, false, cuDevicePrimaryCtxRetain),
    P("cuDevicePrimaryCtxRelease", 11000, false, cuDevicePrimaryCtxRelease_v2),
    P("cuDevicePrimaryCtxGetState", 7000, false, cuDevicePrimaryCtxGetState),
    P("cuDevicePrimaryCtxReset", 11000, false, cuDevicePrimaryCtxReset_v2),
    P("cuCtxCreate", 3020, false, cuCtxCreate_v2),
#if FAKECUDA_VERSION >= 13000
    /* From 13.0 the name cuCtxCreate means the CUctxCreateParams ABI. */
    P("cuCtxCreate", 13000, false, cuCtxCreate_v4),
#endif
    P("cuCtxDestroy", 4000, false, cuCtxDestroy_v2),
    P("cuCtxSetCurrent", 4000, false, cuCtxSetCurrent),
    P("cuCtxGetCurrent", 4000, false, cuCtxGetCurrent),
    P("cuCtxPushCurrent", 4000, false, cuCtxPushCurrent_v2),
    P("cuCtxPopCurrent", 4000, false, cuCtxPopCurrent_v2),
    P("cuCtxGetDevice", 2000, false, cuCtxGetDevice),
    P("cuCtxGetId", 12000, false, cuCtxGetId),
    P("cuCtxSynchronize", 2000, false, cuCtxSynchronize),
    P("cuDevicePrimaryCtxSetFlags", 11000, false, cuDevicePrimaryCtxSetFlags_v2),
    P("cuCtxGetFlags", 7000, false, cuCtxGetFlags),
    P("cuCtxEnablePeerAccess", 4000, false, cuCtxEnablePeerAccess),
    P("cuCtxDisablePeerAccess", 4000, false, cuCtxDisablePeerAccess),
    P("cuCtxGetStreamPriorityRange", 5050, false, cuCtxGetStreamPriorityRange),
    P("cuDeviceCanAccessPeer", 4000, false, cuDeviceCanAccessPeer),
    P("cuDeviceGetUuid", 9020, false, cuDeviceGetUuid),
    P("cuDeviceGetUuid", 11040, false, cuDeviceGetUuid_v2),
    P("cuDeviceGetPCIBusId", 4010, false, cuDeviceGetPCIBusId),
    P("cuMemGetInfo", 3020, false, cuMemGetInfo_v2),
    P("cuMemHostGetFlags", 2030, false, cuMemHostGetFlags),
    P("cuMemcpyPeer", 4000, true, cuMemcpyPeer),
    P("cuMemcpyPeerAsync", 4000, true, cuMemcpyPeerAsync),
    P("cuStreamCreateWithPriority", 5050, false, cuStreamCreateWithPriority),
    P("cuStreamGetPriority", 5050, true, cuStreamGetPriority),
    P("cuStreamGetFlags", 5050, true, cuStreamGetFlags),
    P("cuStreamGetCtx", 9020, true, cuStreamGetCtx),
#if FAKECUDA_VERSION >= 12080
    P("cuStreamGetDevice", 12080, true, cuStreamGetDevice),
#endif
    P("cuEventRecordWithFlags", 11010, true, cuEventRecordWithFlags),
    P("cuLaunchHostFunc", 10000, true, cuLaunchHostFunc),
    P("cuMemAlloc", 3020, false, cuMemAlloc_v2),
    P("cuMemFree", 3020, false, cuMemFree_v2),
    P("cuMemAllocPitch", 3020, false, cuMemAllocPitch_v2),
    P("cuPointerSetAttribute", 6000, false, cuPointerSetAttribute),
    P("cuMemcpy2DUnaligned", 3020, true, cuMemcpy2DUnaligned_v2),
    P("cuMemAllocManaged", 6000, false, cuMemAllocManaged),
    P("cuMemGetAddressRange", 3020, false, cuMemGetAddressRange_v2),
    P("cuMemAdvise", 8000, false, cuMemAdvise),
    P("cuMemAdvise", 12020, false, cuMemAdvise_v2),
    P("cuMemPrefetchAsync", 8000, true, cuMemPrefetchAsync),
    P("cuMemPrefetchAsync", 12020, true, cuMemPrefetchAsync_v2),
    P("cuMemRangeGetAttribute", 8000, false, cuMemRangeGetAttribute),
    P("cuMemRangeGetAttributes", 8000, false, cuMemRangeGetAttributes),
    P("cuMemHostAlloc", 2020, false, cuMemHostAlloc),
    P("cuMemAllocHost", 3020, false, cuMemAllocHost_v2),
    P("cuMemFreeHost", 2000, false, cuMemFreeHost),
    P("cuMemHostGetDevicePointer", 3020, false, cuMemHostGetDevicePointer_v2),
    P("cuMemHostRegister", 6050, false, cuMemHostRegister_v2),
    P("cuMemHostUnregister", 4000, false, cuMemHostUnregister),
    P("cuPointerGetAttribute", 4000, false, cuPointerGetAttribute),
    P("cuPointerGetAttributes", 7000, false, cuPointerGetAttributes),
    P("cuMemcpyHtoD", 3020, true, cuMemcpyHtoD_v2),
    P("cuMemcpyDtoH", 3020, true, cuMemcpyDtoH_v2),
    P("cuMemcpyDtoD", 3020, true, cuMemcpyDtoD_v2),
    P("cuMemcpyHtoDAsync", 3020, true, cuMemcpyHtoDAsync_v2),
    P("cuMemcpyDtoHAsync", 3020, true, cuMemcpyDtoHAsync_v2),
    P("cuMemcpyDtoDAsync", 3020, true, cuMemcpyDtoDAsync_v2),
    P("cuMemcpy2D", 3020, true, cuMemcpy2D_v2),
    P("cuMemcpy2DAsync", 3020, true, cuMemcpy2DAsync_v2),
    P("cuMemcpy3D", 3020, true, cuMemcpy3D_v2),
    P("cuMemcpy3DAsync", 3020, true, cuMemcpy3DAsync_v2),
    P("cuMemcpy", 4000, true, cuMemcpy),
    P("cuMemcpyAsync", 4000, true, cuMemcpyAsync),
    P("cuMemsetD8", 3020, true, cuMemsetD8_v2),
    P("cuMemsetD8Async", 3020, true, cuMemsetD8Async),
    P("cuMemsetD16", 3020, true, cuMemsetD16_v2),
    P("cuMemsetD32", 3020, true, cuMemsetD32_v2),
    P("cuMemsetD2D8", 3020, true, cuMemsetD2D8_v2),
    P("cuMemsetD2D16", 3020, true, cuMemsetD2D16_v2),
    P("cuMemsetD2D32", 3020, true, cuMemsetD2D32_v2),
    P("cuMemsetD16Async", 3020, true, cuMemsetD16Async),
    P("cuMemsetD32Async", 3020, true, cuMemsetD32Async),
    P("cuMemsetD2D8Async", 3020, true, cuMemsetD2D8Async),
    P("cuMemsetD2D16Async", 3020, true, cuMemsetD2D16Async),
    P("cuMemsetD2D32Async", 3020, true, cuMemsetD2D32Async),
    P("cuMemAllocAsync", 11020, true, cuMemAllocAsync),
    P("cuMemAllocFromPoolAsync", 11020, true, cuMemAllocFromPoolAsync),
    P("cuMemFreeAsync", 11020, true, cuMemFreeAsync),
    P("cuMemPoolCreate", 11020, false, cuMemPoolCreate),
    P("cuMemPoolDestroy", 11020, false, cuMemPoolDestroy),
    P("cuMemPoolSetAccess", 11020, false, cuMemPoolSetAccess),
    P("cuMemPoolGetAccess", 11020, false, cuMemPoolGetAccess),
    P("cuMemPoolSetAttribute", 11020, false, cuMemPoolSetAttribute),
    P("cuMemPoolGetAttribute", 11020, false, cuMemPoolGetAttribute),
    P("cuMemPoolTrimTo", 11020, false, cuMemPoolTrimTo),
    P("cuMemPoolExportToShareableHandle", 11020, false, cuMemPoolExportToShareableHandle),
    P("cuMemPoolImportFromShareableHandle", 11020, false, cuMemPoolImportFromShareableHandle),
    P("cuMemPoolExportPointer", 11020, false, cuMemPoolExportPointer),
    P("cuMemPoolImportPointer", 11020, false, cuMemPoolImportPointer),
    P("cuDeviceGetDefaultMemPool", 11020, false, cuDeviceGetDefaultMemPool),
    P("cuDeviceGetMemPool", 11020, false, cuDeviceGetMemPool),
    P("cuDeviceSetMemPool", 11020, false, cuDeviceSetMemPool),
    P("cuIpcGetMemHandle", 4010, false, cuIpcGetMemHandle),
    P("cuIpcOpenMemHandle", 4010, false, cuIpcOpenMemHandle),
    P("cuIpcOpenMemHandle", 11000, false, cuIpcOpenMemHandle_v2),
    P("cuIpcCloseMemHandle", 4010, false, cuIpcCloseMemHandle),
    P("cuMemAddressReserve", 10020, false, cuMemAddressReserve),
    P("cuMemAddressFree", 10020, false, cuMemAddressFree),
    P("cuMemCreate", 10020, false, cuMemCreate),
    P("cuMemRelease", 10020, false, cuMemRelease),
    P("cuMemMap", 10020, false, cuMemMap),
    P("cuMemUnmap", 10020, false, cuMemUnmap),
    P("cuMemSetAccess", 10020, false, cuMemSetAccess),
    P("cuMemGetAccess", 10020, false, cuMemGetAccess),
    P("cuMemExportToShareableHandle", 10020, false, cuMemExportToShareableHandle),
    P("cuMemImportFromShareableHandle", 10020, false, cuMemImportFromShareableHandle),
    P("cuMemGetAllocationGranularity", 10020, false, cuMemGetAllocationGranularity),
    P("cuMemGetAllocationPropertiesFromHandle", 10020, false,
      cuMemGetAllocationPropertiesFromHandle),
    P("cuMemRetainAllocationHandle", 11000, false, cuMemRetainAllocationHandle),
#if FAKECUDA_VERSION >= 13000
    P("cuMemGetDefaultMemPool", 13000, false, cuMemGetDefaultMemPool),
    P("cuMemGetMemPool", 13000, false, cuMemGetMemPool),
    P("cuMemSetMemPool", 13000, false, cuMemSetMemPool),
#endif
    P("cuStreamCreate", 2000, false, cuStreamCreate),
    P("cuStreamDestroy", 4000, false, cuStreamDestroy_v2),
    P("cuStreamSynchronize", 2000, true, cuStreamSynchronize),
    P("cuStreamQuery", 2000, true, cuStreamQuery),
    P("cuStreamWaitEvent", 3020, true, cuStreamWaitEvent),
    P("cuEventCreate", 2000, false, cuEventCreate),
    P("cuEventRecord", 2000, true, cuEventRecord),
    P("cuEventQuery", 2000, false, cuEventQuery),
    P("cuEventSynchronize", 2000, false, cuEventSynchronize),
    P("cuEventElapsedTime", 2000, false, cuEventElapsedTime),
#if FAKECUDA_VERSION >= 12080
    P("cuEventElapsedTime", 12080, false, cuEventElapsedTime_v2),
#endif
    P("cuEventDestroy", 4000, false, cuEventDestroy_v2),
    P("cuModuleLoadData", 2000, false, cuModuleLoadData),
    P("cuModuleLoadDataEx", 2010, false, cuModuleLoadDataEx),
    P("cuModuleUnload", 2000, false, cuModuleUnload),
    P("cuModuleGetFunction", 2000, false, cuModuleGetFunction),
    P("cuFuncGetAttribute", 2020, false, cuFuncGetAttribute),
    P("cuLaunchKernel", 4000, true, cuLaunchKernel),
};

/* The newest ABI of @p symbol no newer than @p version. */
static CUresult lookup(const char *symbol, int version, cuuint64_t flags, void **pfn,
                       CUdriverProcAddressQueryResult *status)
{
    const proc_t *best = NULL;
    bool named = false;

    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
        if (strcmp(procs[i].name, symbol) == 0) {
            named = true;
            if (procs[i].since <= version && (best == NULL || procs[i].since > best->since))
                best = &procs[i];
        }
    if (best != NULL && best->ptds && (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        best = NULL, named = false;
    *pfn = best != NULL ? best->fn : NULL;
    if (status != NULL)
        *status = best != NULL ? CU_GET_PROC_ADDRESS_SUCCESS
                  : named      ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                               : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best != NULL ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

FC_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                               cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    const cuuint64_t known =
        CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    FC_BEGIN(cuGetProcAddress_v2, false);
    if (symbol == NULL || pfn == NULL || (flags & ~known) != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = lookup(symbol, cudaVersion, flags, pfn, symbolStatus);
    FC_END();
}

/* The private tables NVRTC and the runtime ask for are not emulated; NVRTC compiles on without
 * them. */
FC_EXPORT CUresult CUDAAPI cuGetExportTable(const void **ppExportTable,
                                            const CUuuid *pExportTableId)
{
    FC_BEGIN(cuGetExportTable, false);
    if (ppExportTable == NULL || pExportTableId == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else {
        *ppExportTable = NULL;
        rc = CUDA_ERROR_NOT_FOUND;
    }
    FC_END();
}
