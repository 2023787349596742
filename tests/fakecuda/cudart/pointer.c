/* SPDX-License-Identifier: BSD-3-Clause */
/* cudaPointerGetAttributes, from the driver's pointer attributes. */
#include <stdint.h>
#include <string.h>

#include "cudart.h"

/* CUDA Runtime API, Unified Addressing, cudaPointerGetAttributes: from CUDA 11 on, memory no CUDA
 * call allocated or registered is cudaMemoryTypeUnregistered and the call succeeds; its device is
 * cudaInvalidDeviceId (-2), its host pointer itself and its device pointer NULL, as no device of
 * the test driver reads pageable memory. Managed memory is cudaMemoryTypeManaged (the driver says
 * DEVICE and IS_MANAGED). devicePointer is the alias the current device may use (NULL for pinned
 * memory that is not mapped), hostPointer the host's (NULL for device memory). A failed driver
 * query is the call's error, never "unregistered". */
RT_EXPORT cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes *attributes,
                                                         const void *ptr)
{
    CUpointer_attribute attrs[5] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        CU_POINTER_ATTRIBUTE_HOST_POINTER};
    unsigned int type = 0, managed = 0;
    int ordinal = 0;
    CUdeviceptr dptr = 0;
    void *hptr = NULL;
    void *data[5] = {&type, &managed, &ordinal, &dptr, &hptr};
    struct cudaPointerAttributes a;
    cudaError_t e = rt_enter(NULL);

    if (e == cudaSuccess && attributes == NULL)
        e = cudaErrorInvalidValue;
    if (e == cudaSuccess)
        e = RT_CALL(cuPointerGetAttributes, 5, attrs, data, (CUdeviceptr)(uintptr_t)ptr);
    if (e != cudaSuccess)
        return rt_return(e);
    memset(&a, 0, sizeof a);
    switch (type) {
    case CU_MEMORYTYPE_DEVICE:
        a.type = managed ? cudaMemoryTypeManaged : cudaMemoryTypeDevice;
        break;
    case CU_MEMORYTYPE_HOST:
        a.type = cudaMemoryTypeHost;
        break;
    default:
        a.type = cudaMemoryTypeUnregistered;
        break;
    }
    if (a.type == cudaMemoryTypeUnregistered) {
        a.device = cudaInvalidDeviceId;
        a.hostPointer = (void *)ptr;
    } else {
        a.device = ordinal;
        a.devicePointer = (void *)(uintptr_t)dptr;
        a.hostPointer = hptr;
    }
    *attributes = a;
    return rt_return(e);
}
