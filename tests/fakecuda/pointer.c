/* SPDX-License-Identifier: BSD-3-Clause */
/* Pointer attributes, answered from the table of live allocations (interior pointers too), for
 * every kind of memory: what each answers, and where the driver's documentation says so, is in
 * docs/testing.md ("Allocation kinds"). */
#include <string.h>

#include "fakecuda.h"

/* Pool and VMM memory placed on the host (CU_MEM_LOCATION_TYPE_HOST, HOST_NUMA). */
static bool host_located(const fc_alloc_t *a)
{
    return (a->kind == FC_MEM_POOL || a->kind == FC_MEM_VMM) && a->device < 0;
}

/* Whether kernels of @p ctx may reach @p a through its own address. */
static bool device_reachable(const fc_alloc_t *a, const struct CUctx_st *ctx)
{
    switch (a->kind) {
    case FC_MEM_PINNED:
    case FC_MEM_REGISTERED:
        /* Page-locked memory is reachable from the device only when mapped. */
        return (a->flags & CU_MEMHOSTALLOC_DEVICEMAP) &&
               (a->ctx == ctx || (a->flags & CU_MEMHOSTALLOC_PORTABLE));
    case FC_MEM_MANAGED:
        return true;
    default:
        return fc_mem_access(a, ctx, UINT64_MAX) != CU_MEM_ACCESS_FLAGS_PROT_NONE;
    }
}

/* Writes one attribute of the memory @p a holds at @p ptr. */
static CUresult attribute(fc_alloc_t *a, CUpointer_attribute attr, CUdeviceptr ptr, void *data)
{
    struct CUctx_st *current = NULL;
    bool host_memory = a->kind == FC_MEM_PINNED || a->kind == FC_MEM_REGISTERED || host_located(a);

    /* The attributes that answer for the current context. cuda.h, DEVICE_POINTER: "If there is no
     * current CUcontext then CUDA_ERROR_INVALID_CONTEXT"; ACCESS_FLAGS: "the access flags the
     * device associated with the current context has on the corresponding memory". */
    if ((attr == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
         attr == CU_POINTER_ATTRIBUTE_ACCESS_FLAGS) &&
        fc_ctx_current(&current) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    switch (attr) {
    /* CUDA Programming Guide, Stream-Ordered Memory Allocator, "Pointer attributes": "Since
     * stream-ordered allocations are not context associated, querying CU_POINTER_ATTRIBUTE_CONTEXT
     * will succeed but return NULL"; VMM memory is no context's either (cuda.h, cuCtxDestroy:
     * cuMemCreate and pool allocations "are not associated with any CUDA context"; Open MPI's
     * and UCX's accelerator code take a NULL context for VMM and pool memory). */
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a->ctx;
        break;
    /* Managed memory reports DEVICE, as the driver does; IS_MANAGED tells it apart. Host-located
     * pool and VMM memory is HOST (Open MPI's accelerator code sees HOST for HOST_NUMA VMM and pool
     * memory and then asks cuMemGetAccess / cuMemPoolGetAccess whether a device may reach it). */
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = host_memory ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        /* cuda.h: "If there exists no device pointer value through which kernels running in the
         * current CUcontext may access ptr then CUDA_ERROR_INVALID_VALUE". */
        if (!device_reachable(a, current))
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = ptr;
        break;
    /* cuda.h: "If there exists no host pointer value through which the host program may directly
     * access ptr then CUDA_ERROR_INVALID_VALUE": device memory, and host-located memory not
     * granted to the host. */
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a->kind == FC_MEM_DEVICE || a->kind == FC_MEM_IPC ||
            ((a->kind == FC_MEM_POOL || a->kind == FC_MEM_VMM) && a->host_prot == 0))
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(unsigned int *)data = a->sync_memops;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = a->id;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned int *)data = a->kind == FC_MEM_MANAGED;
        break;
    /* cuda.h: "a device ordinal of a device against which the memory was allocated or
     * registered": the allocating context's device; the pool's or the physical allocation's
     * location for pool and VMM memory (the Programming Guide: DEVICE_ORDINAL "can be used to
     * determine the location of the allocation"); the exporter's device for IPC-opened memory.
     * Assumption: host-located pool and VMM memory, against no device, answers CU_DEVICE_CPU, the
     * driver's own name for the host (cuMemRangeGetAttribute), so that no caller takes it for
     * device 0's. */
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = a->device >= 0 ? a->device : CU_DEVICE_CPU;
        break;
    /* cuda.h: "the address of the mappable address range ptr references (e.g. from
     * cuMemAddressReserve)": a VMM mapping's whole reservation; the allocation otherwise. */
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a->kind == FC_MEM_VMM ? a->reserve_base : a->base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a->kind == FC_MEM_VMM ? a->reserve_size : a->size;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(unsigned int *)data = 1;
        break;
    /* cuda.h: "suitable for cudaIpcGetMemHandle": cuMemAlloc memory alone (cuIpcGetMemHandle:
     * "an existing device memory allocation created with cuMemAlloc"). */
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(unsigned int *)data = a->kind == FC_MEM_DEVICE;
        break;
    /* Assumption: a 64-bit mask (NCCL reads it into an unsigned long long): the handle types a VMM
     * allocation was created with, a pool's for its allocations, none for the rest. */
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = a->kind == FC_MEM_VMM    ? fc_vmm_handle_types(a)
                                      : a->kind == FC_MEM_POOL ? a->pool->handle_types
                                                               : 0;
        break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        *(unsigned int *)data = 0; /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED is 0 */
        break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        if (a->kind == FC_MEM_PINNED || a->kind == FC_MEM_REGISTERED || a->kind == FC_MEM_MANAGED)
            *(unsigned int *)data = device_reachable(a, current)
                                        ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                        : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
        else
            *(unsigned int *)data = fc_mem_access(a, current, UINT64_MAX);
        break;
    /* cuda.h: "the mempool handle for the allocation if it was allocated from a mempool.
     * Otherwise returns NULL." */
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = a->kind == FC_MEM_POOL ? a->pool : NULL;
        break;
    /* "Size of the actual underlying mapping that the pointer belongs to" and its start: a VMM
     * mapping; assumption: the allocation itself for the other kinds. */
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        *(size_t *)data = a->size;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        *(void **)data = (void *)a->base;
        break;
    /* "A process-wide unique id corresponding to the physical allocation the pointer belongs to":
     * the cuMemCreate allocation of a VMM mapping (two mappings of one share it). */
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = a->kind == FC_MEM_VMM ? fc_vmm_block_id(a) : a->id;
        break;
#if FAKECUDA_VERSION >= 12080
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
        *(unsigned int *)data = 0; /* no decompression engine is emulated */
        break;
#endif
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* An address reserved with cuMemAddressReserve but not mapped. Assumption: MAPPED answers 0
 * (cuda.h: "1 if this pointer is in a valid address range that is mapped to a backing allocation,
 * 0 otherwise") and RANGE_START_ADDR / RANGE_SIZE the reservation; anything else is no memory. */
static CUresult reserved_attribute(uintptr_t base, size_t size, CUpointer_attribute attr,
                                   void *data)
{
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(unsigned int *)data = 0;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = base;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = size;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* cuda.h: SYNC_MEMOPS is the one attribute to set ("A boolean attribute which when set, ensures
 * that synchronous memory operations initiated on the region of memory that ptr points to will
 * always synchronize"); the double's synchronous copies already do. VMM memory refuses it with
 * NOT_SUPPORTED, as UCX reports of real drivers. Assumption: device, pool and IPC memory only (its
 * documentation speaks of device memory's synchronous operations); any other attribute is an
 * invalid value. */
FC_EXPORT CUresult CUDAAPI cuPointerSetAttribute(const void *value, CUpointer_attribute attribute_,
                                                 CUdeviceptr ptr)
{
    fc_alloc_t *a;
    FC_BEGIN(cuPointerSetAttribute, true);
    if (value == NULL || attribute_ != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ||
        (a = fc_mem_find(ptr)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (a->kind == FC_MEM_VMM)
        rc = CUDA_ERROR_NOT_SUPPORTED;
    else if (a->kind != FC_MEM_DEVICE && a->kind != FC_MEM_POOL && a->kind != FC_MEM_IPC)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        a->sync_memops = *(const unsigned int *)value != 0;
    FC_END();
}

/* The size of each attribute cuPointerGetAttributes takes (cuda.h lists them), for the zeros it
 * writes for memory no allocation holds; 0 for the others, which it refuses. */
static size_t attribute_size(CUpointer_attribute attr)
{
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        return sizeof(CUcontext);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        return sizeof(void *);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        return sizeof(int);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        return sizeof(CUmemoryPool);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
#if FAKECUDA_VERSION >= 12080
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
#endif
        return sizeof(unsigned int);
    default:
        return 0;
    }
}

/* cuda.h: a pointer no CUDA API allocated, mapped or registered is CUDA_ERROR_INVALID_VALUE.
 * With unified addressing the pointer names its own memory, so no context need be current
 * (MPI libraries query pointers from threads that never made one current, and Open MPI sets the
 * context it gets back); only DEVICE_POINTER and ACCESS_FLAGS ask for the current one. */
FC_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute_,
                                                 CUdeviceptr ptr)
{
    fc_alloc_t *a;
    uintptr_t base;
    size_t size;
    FC_BEGIN(cuPointerGetAttribute, true);
    if (data == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((a = fc_mem_find(ptr)) != NULL)
        rc = attribute(a, attribute_, ptr, data);
    else if (fc_vmm_reserved(ptr, &base, &size))
        rc = reserved_attribute(base, size, attribute_, data);
    else
        rc = CUDA_ERROR_INVALID_VALUE;
    FC_END();
}

/* cuda.h: "Unlike cuPointerGetAttribute, this function will not return an error when the ptr
 * encountered is not a valid CUDA pointer. Instead, the attributes are assigned default NULL
 * values and CUDA_SUCCESS is returned": every value is zero, so MEMORY_TYPE is 0 (no
 * CUmemorytype) and DEVICE_ORDINAL is 0 as well; a caller must test MEMORY_TYPE first.
 * Assumption: an attribute cuPointerGetAttribute refuses for a valid pointer (HOST_POINTER of
 * device memory) is zero here too rather than an error. */
FC_EXPORT CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes,
                                                  CUpointer_attribute *attributes, void **data,
                                                  CUdeviceptr ptr)
{
    fc_alloc_t *a;
    uintptr_t base = 0;
    size_t size = 0;
    bool reserved;
    FC_BEGIN(cuPointerGetAttributes, true);
    if (numAttributes == 0 || attributes == NULL || data == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        a = fc_mem_find(ptr);
        reserved = a == NULL && fc_vmm_reserved(ptr, &base, &size);
        for (unsigned i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++) {
            size_t bytes = attribute_size(attributes[i]);
            if (bytes == 0 || data[i] == NULL)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (a != NULL ? attribute(a, attributes[i], ptr, data[i]) != CUDA_SUCCESS
                               : !reserved || reserved_attribute(base, size, attributes[i],
                                                                 data[i]) != CUDA_SUCCESS)
                memset(data[i], 0, bytes);
        }
    }
    FC_END();
}
