/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: their count, attributes and properties (from the driver's attributes), and the
 * versions of the driver and of this runtime. */
#include <stddef.h>
#include <string.h>

#include "cudart.h"

/* CUDA Runtime API, Device Management, cudaGetDeviceCount: without a device the count is 0 and
 * the call fails with cudaErrorNoDevice. */
RT_EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    cudaError_t e = rt_driver_open();
    int n = 0;

    rt_call_device = -1;
    if (count == NULL)
        return rt_return(cudaErrorInvalidValue);
    if (e == cudaSuccess)
        e = rt_error(rt_drv.cuDeviceGetCount(&n));
    if (e == cudaSuccess && n == 0)
        e = cudaErrorNoDevice;
    *count = e == cudaSuccess ? n : 0;
    return rt_return(e);
}

static cudaError_t device_handle(int device, CUdevice *dev)
{
    int count = 0;
    cudaError_t e = rt_driver_open();

    rt_call_device = -1;
    if (e == cudaSuccess)
        e = rt_error(rt_drv.cuDeviceGetCount(&count));
    if (e == cudaSuccess && (device < 0 || device >= count))
        e = cudaErrorInvalidDevice;
    if (e == cudaSuccess)
        e = rt_error(rt_drv.cuDeviceGet(dev, device));
    return e;
}

/* cudaDeviceAttr and CUdevice_attribute give each attribute the same value. */
RT_EXPORT cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                                       int device)
{
    CUdevice dev;
    cudaError_t e = device_handle(device, &dev);

    if (e == cudaSuccess && value == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuDeviceGetAttribute, value, (CUdevice_attribute)attr, dev);
    return rt_return(e);
}

cudaError_t rt_max_pitch(int device, size_t *max)
{
    static int known[RT_MAX_DEVICES];
    bool cached = device >= 0 && device < RT_MAX_DEVICES;
    int v = cached ? __atomic_load_n(&known[device], __ATOMIC_RELAXED) : 0;
    cudaError_t e = cudaSuccess;

    if (v == 0 &&
        (e = RT_CALL(cuDeviceGetAttribute, &v, CU_DEVICE_ATTRIBUTE_MAX_PITCH, (CUdevice)device)) ==
            cudaSuccess &&
        cached)
        __atomic_store_n(&known[device], v, __ATOMIC_RELAXED);
    if (e == cudaSuccess)
        *max = (size_t)(unsigned)v;
    return e;
}

/* One field of cudaDeviceProp and the driver attribute it holds. */
typedef struct {
    size_t offset, size;
    CUdevice_attribute attr;
} field_t;

#define F(_field, _attr)                                                                           \
    {                                                                                              \
        offsetof(struct cudaDeviceProp, _field), sizeof(((struct cudaDeviceProp *)0)->_field),     \
            CU_DEVICE_ATTRIBUTE_##_attr                                                            \
    }
#define FI(_field, _i, _attr)                                                                      \
    {                                                                                              \
        offsetof(struct cudaDeviceProp, _field) + (_i) * sizeof(int), sizeof(int),                 \
            CU_DEVICE_ATTRIBUTE_##_attr                                                            \
    }

/* The fields the driver's attributes give (the texture and surface limits are left 0: nothing
 * here has textures). The fields CUDA 13 removed from the structure are CUDA 12's only. */
static const field_t fields[] = {
    F(sharedMemPerBlock, MAX_SHARED_MEMORY_PER_BLOCK),
    F(regsPerBlock, MAX_REGISTERS_PER_BLOCK),
    F(warpSize, WARP_SIZE),
    F(memPitch, MAX_PITCH),
    F(maxThreadsPerBlock, MAX_THREADS_PER_BLOCK),
    FI(maxThreadsDim, 0, MAX_BLOCK_DIM_X),
    FI(maxThreadsDim, 1, MAX_BLOCK_DIM_Y),
    FI(maxThreadsDim, 2, MAX_BLOCK_DIM_Z),
    FI(maxGridSize, 0, MAX_GRID_DIM_X),
    FI(maxGridSize, 1, MAX_GRID_DIM_Y),
    FI(maxGridSize, 2, MAX_GRID_DIM_Z),
    F(totalConstMem, TOTAL_CONSTANT_MEMORY),
    F(major, COMPUTE_CAPABILITY_MAJOR),
    F(minor, COMPUTE_CAPABILITY_MINOR),
    F(textureAlignment, TEXTURE_ALIGNMENT),
    F(texturePitchAlignment, TEXTURE_PITCH_ALIGNMENT),
    F(multiProcessorCount, MULTIPROCESSOR_COUNT),
    F(integrated, INTEGRATED),
    F(canMapHostMemory, CAN_MAP_HOST_MEMORY),
    F(surfaceAlignment, SURFACE_ALIGNMENT),
    F(concurrentKernels, CONCURRENT_KERNELS),
    F(ECCEnabled, ECC_ENABLED),
    F(pciBusID, PCI_BUS_ID),
    F(pciDeviceID, PCI_DEVICE_ID),
    F(pciDomainID, PCI_DOMAIN_ID),
    F(tccDriver, TCC_DRIVER),
    F(asyncEngineCount, ASYNC_ENGINE_COUNT),
    F(unifiedAddressing, UNIFIED_ADDRESSING),
    F(memoryBusWidth, GLOBAL_MEMORY_BUS_WIDTH),
    F(l2CacheSize, L2_CACHE_SIZE),
    F(persistingL2CacheMaxSize, MAX_PERSISTING_L2_CACHE_SIZE),
    F(maxThreadsPerMultiProcessor, MAX_THREADS_PER_MULTIPROCESSOR),
    F(streamPrioritiesSupported, STREAM_PRIORITIES_SUPPORTED),
    F(globalL1CacheSupported, GLOBAL_L1_CACHE_SUPPORTED),
    F(localL1CacheSupported, LOCAL_L1_CACHE_SUPPORTED),
    F(sharedMemPerMultiprocessor, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
    F(regsPerMultiprocessor, MAX_REGISTERS_PER_MULTIPROCESSOR),
    F(managedMemory, MANAGED_MEMORY),
    F(isMultiGpuBoard, MULTI_GPU_BOARD),
    F(multiGpuBoardGroupID, MULTI_GPU_BOARD_GROUP_ID),
    F(hostNativeAtomicSupported, HOST_NATIVE_ATOMIC_SUPPORTED),
    F(pageableMemoryAccess, PAGEABLE_MEMORY_ACCESS),
    F(concurrentManagedAccess, CONCURRENT_MANAGED_ACCESS),
    F(computePreemptionSupported, COMPUTE_PREEMPTION_SUPPORTED),
    F(canUseHostPointerForRegisteredMem, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM),
    F(cooperativeLaunch, COOPERATIVE_LAUNCH),
    F(sharedMemPerBlockOptin, MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
    F(pageableMemoryAccessUsesHostPageTables, PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES),
    F(directManagedMemAccessFromHost, DIRECT_MANAGED_MEM_ACCESS_FROM_HOST),
    F(maxBlocksPerMultiProcessor, MAX_BLOCKS_PER_MULTIPROCESSOR),
    F(accessPolicyMaxWindowSize, MAX_ACCESS_POLICY_WINDOW_SIZE),
    F(reservedSharedMemPerBlock, RESERVED_SHARED_MEMORY_PER_BLOCK),
    F(hostRegisterSupported, HOST_REGISTER_SUPPORTED),
    F(sparseCudaArraySupported, SPARSE_CUDA_ARRAY_SUPPORTED),
    F(hostRegisterReadOnlySupported, READ_ONLY_HOST_REGISTER_SUPPORTED),
    F(timelineSemaphoreInteropSupported, TIMELINE_SEMAPHORE_INTEROP_SUPPORTED),
    F(memoryPoolsSupported, MEMORY_POOLS_SUPPORTED),
    F(gpuDirectRDMASupported, GPU_DIRECT_RDMA_SUPPORTED),
    F(gpuDirectRDMAFlushWritesOptions, GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS),
    F(gpuDirectRDMAWritesOrdering, GPU_DIRECT_RDMA_WRITES_ORDERING),
    F(memoryPoolSupportedHandleTypes, MEMPOOL_SUPPORTED_HANDLE_TYPES),
    F(deferredMappingCudaArraySupported, DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED),
    F(ipcEventSupported, IPC_EVENT_SUPPORTED),
    F(clusterLaunch, CLUSTER_LAUNCH),
    F(unifiedFunctionPointers, UNIFIED_FUNCTION_POINTERS),
#if CUDART_VERSION >= 13000
    F(deviceNumaConfig, NUMA_CONFIG),
    F(deviceNumaId, NUMA_ID),
    F(mpsEnabled, MPS_ENABLED),
    F(hostNumaId, HOST_NUMA_ID),
    F(gpuPciDeviceID, GPU_PCI_DEVICE_ID),
    F(gpuPciSubsystemID, GPU_PCI_SUBSYSTEM_ID),
    F(hostNumaMultinodeIpcSupported, HOST_NUMA_MULTINODE_IPC_SUPPORTED),
#else
    F(clockRate, CLOCK_RATE),
    F(deviceOverlap, GPU_OVERLAP),
    F(kernelExecTimeoutEnabled, KERNEL_EXEC_TIMEOUT),
    F(computeMode, COMPUTE_MODE),
    F(memoryClockRate, MEMORY_CLOCK_RATE),
    F(singleToDoublePrecisionPerfRatio, SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO),
    F(cooperativeMultiDeviceLaunch, COOPERATIVE_MULTI_DEVICE_LAUNCH),
#endif
};

/* Writes @p value into a field of @p size bytes (int, unsigned int or size_t). */
static void put(void *at, size_t size, int value)
{
    if (size == sizeof(size_t)) {
        size_t v = (size_t)(unsigned)value;
        memcpy(at, &v, sizeof v);
    } else {
        memcpy(at, &value, sizeof value);
    }
}

/* CUDA Runtime API, Device Management, cudaGetDeviceProperties (cudaGetDeviceProperties_v2 in the
 * CUDA 12 ABI, whose structure is CUDA 12's). An attribute the driver does not know
 * (CUDA_ERROR_INVALID_VALUE: the test driver answers only the attributes it emulates) leaves its
 * field 0; any other failure is the call's. */
RT_EXPORT cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    struct cudaDeviceProp p;
    CUdevice dev;
    CUuuid uuid;
    cudaError_t e = device_handle(device, &dev);

    if (e == cudaSuccess && prop == NULL)
        e = cudaErrorInvalidValue;
    if (e != cudaSuccess)
        return rt_return(e);
    memset(&p, 0, sizeof p);
    e = RT_CALL(cuDeviceGetName, p.name, (int)sizeof p.name, dev);
    if (e == cudaSuccess && rt_drv.cuDeviceTotalMem != NULL)
        e = RT_CALL(cuDeviceTotalMem, &p.totalGlobalMem, dev);
    if (e == cudaSuccess && rt_drv.cuDeviceGetUuid != NULL &&
        (e = RT_CALL(cuDeviceGetUuid, &uuid, dev)) == cudaSuccess)
        memcpy(&p.uuid, &uuid, sizeof p.uuid);
    if (e == cudaSuccess && rt_drv.cuDeviceGetAttribute == NULL)
        e = cudaErrorNotSupported;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0] && e == cudaSuccess; i++) {
        int value = 0;
        CUresult rc = rt_drv.cuDeviceGetAttribute(&value, fields[i].attr, dev);
        if (rc == CUDA_SUCCESS)
            put((char *)&p + fields[i].offset, fields[i].size, value);
        else if (rc != CUDA_ERROR_INVALID_VALUE)
            e = rt_error(rc);
    }
    if (e == cudaSuccess)
        *prop = p;
    return rt_return(e);
}

/* CUDA Runtime API, Version Management: 0 when no driver is installed. */
RT_EXPORT cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
    cudaError_t e;

    rt_call_device = -1;
    if (driverVersion == NULL)
        return rt_return(cudaErrorInvalidValue);
    *driverVersion = 0;
    e = rt_driver_open();
    if (rt_drv.cuDriverGetVersion != NULL)
        e = rt_error(rt_drv.cuDriverGetVersion(driverVersion));
    else if (e == cudaErrorInsufficientDriver)
        e = cudaSuccess;
    return rt_return(e);
}

RT_EXPORT cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
    rt_call_device = -1;
    if (runtimeVersion == NULL)
        return rt_return(cudaErrorInvalidValue);
    *runtimeVersion = CUDART_VERSION;
    return cudaSuccess;
}
