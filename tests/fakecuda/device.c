/* SPDX-License-Identifier: BSD-3-Clause */
/* Devices: count, handles, names, attributes and memory size of the emulated GPUs. */
#include <stdio.h>
#include <string.h>

#include "fakecuda.h"

#define FC_TOTAL_MEM (16ull << 30)

static bool valid_device(CUdevice dev)
{
    return dev >= 0 && dev < fc_config.ndevices;
}

/* The checks of a query of device @p dev, in the driver's order: its output @p out, then the
 * device. */
static CUresult device_query(const void *out, CUdevice dev)
{
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    FC_BEGIN(cuDeviceGetCount, true);
    rc = FC_OUT(count, fc_config.ndevices);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    FC_BEGIN(cuDeviceGet, true);
    if ((rc = device_query(device, ordinal)) == CUDA_SUCCESS)
        *device = ordinal;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FC_BEGIN(cuDeviceGetName, true);
    if ((rc = (len <= 0 ? CUDA_ERROR_INVALID_VALUE : device_query(name, dev))) == CUDA_SUCCESS)
        snprintf(name, (size_t)len, "fakecuda sm_%d", fc_config.sm[dev]);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FC_BEGIN(cuDeviceTotalMem_v2, true);
    if ((rc = device_query(bytes, dev)) == CUDA_SUCCESS)
        *bytes = FC_TOTAL_MEM;
    FC_END();
}

/* The attributes a caller of this project may ask; any other is CUDA_ERROR_INVALID_VALUE, so a
 * caller that starts depending on a new one finds out here instead of getting a made-up value. */
static CUresult attribute(CUdevice_attribute attrib, CUdevice dev, int *value)
{
    int sm = fc_config.sm[dev];

    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        *value = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        *value = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        *value = 64;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *value = 2147483647;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        *value = 65535;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        *value = 65535;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        *value = 48 * 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
        *value = 64 * 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *value = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
        *value = FC_MAX_PITCH;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
        *value = 65536;
        break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *value = 1500000;
        break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
        *value = FC_TEXTURE_ALIGNMENT;
        break;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
        *value = FC_TEXTURE_PITCH_ALIGNMENT;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *value = 4;
        break;
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
        *value = CU_COMPUTEMODE_DEFAULT;
        break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        *value = dev + 1;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
        *value = 1000000;
        break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        *value = 4096;
        break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        *value = 4 << 20;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
        *value = 2048;
        break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
        *value = 2;
        break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *value = sm / 10;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *value = sm % 10;
        break;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        *value = 100 * 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
        *value = 65536;
        break;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
        *value = 0;
        break;
    /* By default no HMM, as on x86 PCIe systems without it: a kernel may not touch pageable host
     * memory (the emulation cannot stop it, but the attribute tells callers not to rely on it);
     * FAKECUDA_PAGEABLE=1 reports a system where it may. The device pages managed memory
     * concurrently with the host (Linux, sm_60 and later), with or without. */
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
        *value = fc_config.pageable ? 1 : 0;
        break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        *value = 48 * 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
        *value = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
        *value = 0;
        break;
    /* The stream-ordered allocator (pool.c), shareable through POSIX file descriptors; virtual
     * memory management (vmm.c) with the same handles; no fabric handles, compression, GPUDirect
     * RDMA or IPC events; one host NUMA node, 0. Assumption: the attributes numbered after 12.4's
     * (135 on) are unknown to the 12.4 build, those of host-located pools and VMM (141 on) came
     * with 12.8 (HOST_NUMA) and 13.0 (HOST). */
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
        *value = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
        *value = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED:
        *value = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_NUMA_CONFIG:
        *value = CU_DEVICE_NUMA_CONFIG_NONE;
        break;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
        *value = 0;
        break;
#if FAKECUDA_VERSION >= 12080
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED:
        *value = 1;
        break;
#endif
#if FAKECUDA_VERSION >= 13000
    case CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        *value = 1;
        break;
#endif
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* cuda.h, cuCtxEnablePeerAccess: peers are devices of the "same major compute capability"; a
 * device is no peer of itself (its contexts' memory is not opened to each other). */
bool fc_device_can_access(int dev, int peer)
{
    return dev != peer && fc_config.sm[dev] / 10 == fc_config.sm[peer] / 10;
}

FC_EXPORT CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    FC_BEGIN(cuDeviceCanAccessPeer, true);
    rc = device_query(canAccessPeer, dev);
    if (rc == CUDA_SUCCESS && !valid_device(peerDev))
        rc = CUDA_ERROR_INVALID_DEVICE;
    if (rc == CUDA_SUCCESS)
        *canAccessPeer = fc_device_can_access(dev, peerDev);
    FC_END();
}

/* A UUID per device, the same in every process (as a real device's is). */
static CUresult uuid(CUuuid *out, CUdevice dev)
{
    static const char prefix[] = "fakecuda-dev-";
    CUresult rc = device_query(out, dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    memcpy(out->bytes, prefix, sizeof prefix - 1);
    out->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid_out, CUdevice dev)
{
    FC_BEGIN(cuDeviceGetUuid_v2, true);
    rc = uuid(uuid_out, dev);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid_out, CUdevice dev)
{
    FC_BEGIN(cuDeviceGetUuid, true);
    rc = uuid(uuid_out, dev);
    FC_END();
}

/* cuda.h: "[domain]:[bus]:[device].[function]" in hexadecimal, as CU_DEVICE_ATTRIBUTE_PCI_*. */
FC_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    FC_BEGIN(cuDeviceGetPCIBusId, true);
    if ((rc = (len <= 0 ? CUDA_ERROR_INVALID_VALUE : device_query(pciBusId, dev))) == CUDA_SUCCESS)
        snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", dev + 1);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FC_BEGIN(cuDeviceGetAttribute, true);
    if ((rc = device_query(pi, dev)) == CUDA_SUCCESS)
        rc = attribute(attrib, dev, pi);
    FC_END();
}
