/* Pointer attributes, answered from the table of live allocations (interior pointers too). */
#include <string.h>

#include "fakecuda.h"

/* Writes one attribute of the memory @p a holds at @p ptr. */
static CUresult attribute(fc_alloc_t *a, CUpointer_attribute attr, CUdeviceptr ptr, void *data)
{
    struct CUctx_st *current = NULL;
    bool mapped_host = a->kind == FC_MEM_PINNED || a->kind == FC_MEM_REGISTERED;

    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a->ctx;
        break;
    /* Managed memory reports DEVICE, as the driver does; IS_MANAGED tells it apart. */
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = mapped_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        /* cuda.h: "If there is no current CUcontext then CUDA_ERROR_INVALID_CONTEXT"; this is
         * the one attribute that needs one. */
        if (fc_ctx_current(&current) != CUDA_SUCCESS)
            return CUDA_ERROR_INVALID_CONTEXT;
        /* Page-locked memory is reachable from the device only when mapped. */
        if (mapped_host && !(a->flags & CU_MEMHOSTALLOC_DEVICEMAP))
            return CUDA_ERROR_INVALID_VALUE;
        *(CUdeviceptr *)data = ptr;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (a->kind == FC_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)ptr;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(unsigned int *)data = 0;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = a->id;
        break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned int *)data = a->kind == FC_MEM_MANAGED;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = a->ctx->device;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a->base;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a->size;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(unsigned int *)data = 1;
        break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(unsigned int *)data = 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* The size of each attribute's value, for the zeros cuPointerGetAttributes writes for memory no
 * allocation holds. */
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
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        return sizeof(unsigned int);
    default:
        return 0;
    }
}

/* cuda.h: a pointer no CUDA API allocated, mapped or registered is CUDA_ERROR_INVALID_VALUE.
 * With unified addressing the pointer names its own context, so no context need be current
 * (MPI libraries query pointers from threads that never made one current, and Open MPI sets the
 * context it gets back); only DEVICE_POINTER asks for the current one. */
FC_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute_,
                                                 CUdeviceptr ptr)
{
    fc_alloc_t *a;
    FC_BEGIN(cuPointerGetAttribute, true);
    if (data == NULL || (a = fc_mem_find(ptr)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = attribute(a, attribute_, ptr, data);
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
    FC_BEGIN(cuPointerGetAttributes, true);
    if (numAttributes == 0 || attributes == NULL || data == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        a = fc_mem_find(ptr);
        for (unsigned i = 0; i < numAttributes && rc == CUDA_SUCCESS; i++) {
            size_t size = attribute_size(attributes[i]);
            if (size == 0 || data[i] == NULL)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (a == NULL || attribute(a, attributes[i], ptr, data[i]) != CUDA_SUCCESS)
                memset(data[i], 0, size);
        }
    }
    FC_END();
}
