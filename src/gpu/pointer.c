/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a buffer lies, as the driver says, for every allocation kind: memory of a context, and
 * memory of none (stream-ordered pools, VMM mappings) placed in its device's primary context. */
#include "gpu/cuda_internal.h"

#include <string.h>

#include "util/log.h"

bool tj_gpu_memory_met(void)
{
    return atomic_load_explicit(&tj_gpu.memory_met, memory_order_relaxed);
}

/* A query the driver failed: one error line naming the buffer and the reason (its repeats, the
 * same call failing the same way, at debug level), and TJ_ERR_CUDA for the caller to pass up. */
static tj_status_t cannot_tell(const void *ptr, const char *call, CUresult rc, int line)
{
    tj_log_level_t level = tj_gpu_first_report(line, rc) ? TJ_LOG_ERROR : TJ_LOG_DEBUG;

    if (tj_log_level() >= (int)level)
        tj_log_write(level, __FILE__, line, "cannot tell where buffer %p lies: %s failed: %s (%d)",
                     ptr, call, tj_gpu_error_string(rc), (int)rc);
    return TJ_ERR_CUDA;
}

#define CANNOT_TELL(_ptr, _call, _rc) cannot_tell((_ptr), (_call), (_rc), __LINE__)

/* The properties of the VMM allocation mapped at @p ptr (its location): the handle retained,
 * read and released again. */
static tj_status_t vmm_props(const void *ptr, CUmemAllocationProp *prop)
{
    CUmemGenericAllocationHandle h;
    CUresult rc;

    if (tj_gpu.cu.cuMemRetainAllocationHandle == NULL ||
        tj_gpu.cu.cuMemGetAllocationPropertiesFromHandle == NULL ||
        tj_gpu.cu.cuMemRelease == NULL || tj_gpu.cu.cuMemGetAccess == NULL) {
        tj_log_error("cannot tell where buffer %p lies: it has no cuda context, and this cuda "
                     "driver lacks the virtual memory management calls that would say",
                     ptr);
        return TJ_ERR_CUDA;
    }
    if ((rc = tj_gpu.cu.cuMemRetainAllocationHandle(&h, (void *)ptr)) != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuMemRetainAllocationHandle", rc);
    memset(prop, 0, sizeof(*prop));
    rc = tj_gpu.cu.cuMemGetAllocationPropertiesFromHandle(prop, h);
    tj_gpu.cu.cuMemRelease(h);
    if (rc != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuMemGetAllocationPropertiesFromHandle", rc);
    return TJ_OK;
}

/* The access @p loc has to the mapping at @p ptr: CU_MEM_ACCESS_FLAGS_PROT_*. A location the
 * driver will not answer for has none. */
static unsigned long long access_of(const void *ptr, CUmemLocationType type, int id)
{
    CUmemLocation loc = {.type = type, .id = id};
    unsigned long long flags = 0;

    if (tj_gpu.cu.cuMemGetAccess(&flags, &loc, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        return CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return flags;
}

/* A VMM mapping of host memory (a host or host NUMA location): host memory the CPU may touch
 * when it was granted read and write access; otherwise only kernels and copies may, as device
 * memory, in the primary context of a device that has access (read and write if one has). */
static tj_status_t vmm_host(const void *ptr, const CUmemAllocationProp *prop, tj_gpu_ptr_t *p)
{
    int device = -1;

    if ((access_of(ptr, prop->location.type, prop->location.id) &
         CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
        p->kind = TJ_MEM_PINNED;
        return TJ_OK;
    }
    for (int d = 0; d < tj_gpu.ndevices; d++) {
        unsigned long long flags = access_of(ptr, CU_MEM_LOCATION_TYPE_DEVICE, d);
        if ((flags & CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            device = d;
            break;
        }
        if ((flags & CU_MEM_ACCESS_FLAGS_PROT_READ) && device < 0)
            device = d;
    }
    if (device < 0) {
        tj_log_error("cannot move buffer %p: it is host memory mapped with cuMemMap that neither "
                     "the CPU nor any device was given access to (cuMemSetAccess)",
                     ptr);
        return TJ_ERR_CUDA;
    }
    p->kind = TJ_MEM_DEVICE;
    p->device = device;
    return TJ_OK;
}

/* Memory that belongs to no context (stream-ordered pools, VMM mappings; the driver answers
 * CONTEXT NULL): it runs in its device's primary context. The device is the pointer's device
 * ordinal, or, where that is not one, the location of the VMM allocation (managed memory, which
 * every device may touch, runs on the caller's current device, else device 0). Host memory
 * without a context is a host pool's (the CPU may touch it: pools of a host location are
 * accessible from the host by default) or a VMM mapping's, whose access decides. */
static tj_status_t contextless(const void *ptr, tj_gpu_ptr_t *p)
{
    int ndevices = tj_gpu.ndevices;
    CUmemAllocationProp prop;
    CUcontext ctx;
    CUmemoryPool pool = NULL;
    CUresult rc;
    tj_status_t st;

    if (p->kind == TJ_MEM_PINNED) {
        rc = tj_gpu.cu.cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                             (CUdeviceptr)(uintptr_t)ptr);
        if (rc != CUDA_SUCCESS)
            return CANNOT_TELL(ptr, "cuPointerGetAttribute(MEMPOOL_HANDLE)", rc);
        if (pool != NULL)
            return TJ_OK;
        if ((st = vmm_props(ptr, &prop)) != TJ_OK || (st = vmm_host(ptr, &prop, p)) != TJ_OK)
            return st;
    } else if ((p->device < 0 || p->device >= ndevices) && p->kind == TJ_MEM_MANAGED) {
        CUdevice dev;
        p->device =
            tj_gpu.cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS && (int)dev < ndevices ? (int)dev : 0;
    } else if (p->device < 0 || p->device >= ndevices) {
        if ((st = vmm_props(ptr, &prop)) != TJ_OK)
            return st;
        if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
            if ((st = vmm_host(ptr, &prop, p)) != TJ_OK)
                return st;
        } else if ((p->device = prop.location.id) < 0 || p->device >= ndevices) {
            tj_log_error("cannot tell where buffer %p lies: the driver places it on device %d, "
                         "of %d",
                         ptr, p->device, ndevices);
            return TJ_ERR_CUDA;
        }
    }
    /* Host memory the CPU may touch needs no context. */
    if (p->kind == TJ_MEM_PINNED)
        return TJ_OK;
    if ((st = tj_gpu_primary_of(p->device, &ctx)) == TJ_OK)
        p->ctx = ctx;
    return st;
}

tj_status_t tj_gpu_query(const void *ptr, tj_gpu_ptr_t *out)
{
    static CUpointer_attribute attrs[7] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,   CU_POINTER_ATTRIBUTE_CONTEXT,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_BUFFER_ID};
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    CUcontext ctx = NULL;
    CUdeviceptr start = 0;
    size_t size = 0;
    unsigned long long id = 0;
    void *data[7] = {&type, &managed, &ordinal, &ctx, &start, &size, &id};
    tj_gpu_ptr_t p = {TJ_MEM_HOST, -1, NULL, 0, 0, 0, 0};
    CUresult rc;
    tj_status_t st;

    if (ptr == NULL || tj_gpu_ready() != TJ_OK) {
        *out = p;
        return TJ_OK;
    }
    /* Memory CUDA does not know is no error for the plural query: every value is its default
     * (cuda.h). An error is the driver's failure to answer, documented with no retry: the caller
     * must not take the buffer for host memory. */
    rc = tj_gpu.cu.cuPointerGetAttributes(7, attrs, data, (CUdeviceptr)(uintptr_t)ptr);
    if (rc != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuPointerGetAttributes", rc);
    if (managed)
        p.kind = TJ_MEM_MANAGED;
    else if (type == CU_MEMORYTYPE_DEVICE)
        p.kind = TJ_MEM_DEVICE;
    else if (type == CU_MEMORYTYPE_HOST)
        p.kind = TJ_MEM_PINNED;
    if (p.kind != TJ_MEM_HOST) {
        if (!atomic_load_explicit(&tj_gpu.memory_met, memory_order_relaxed))
            atomic_store(&tj_gpu.memory_met, true);
        p.device = ordinal;
        p.ctx = ctx;
        p.base = (uintptr_t)start;
        p.size = size;
        /* Memory of a context dies with its instance; memory of none (pools, VMM mappings) may
         * outlive a reset of the primary context it runs in, so its id says nothing of that. */
        p.id = ctx != NULL ? id : 0;
        if (ctx == NULL && (st = contextless(ptr, &p)) != TJ_OK)
            return st;
    }
    *out = p;
    return TJ_OK;
}

bool tj_gpu_inside(const tj_gpu_ptr_t *p, uintptr_t lo, uintptr_t hi)
{
    /* Host memory has no bounds typejit can see, and a driver that reports no range for an
     * allocation leaves nothing to check. */
    if (p->kind == TJ_MEM_HOST || p->size == 0)
        return true;
    return lo >= p->base && hi >= lo && hi - p->base <= p->size;
}
