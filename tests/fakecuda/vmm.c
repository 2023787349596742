/* SPDX-License-Identifier: BSD-3-Clause */
/* Virtual memory management (CUDA Driver API, Virtual Memory Management): address reservations in
 * the device arena, physical allocations on a device or on the host (cuMemCreate), mappings of
 * them (cuMemMap; one allocation may be mapped at several addresses), access per device and for
 * the host (cuMemSetAccess), handles retained from addresses, and allocations shared between
 * processes as POSIX file descriptors. Every physical allocation is a memfd: its bytes, then a
 * page describing it, which an importing process reads. VMM memory belongs to no context. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakecuda.h"

/* Assumption: 2 MiB, the minimum and recommended granularity current GPUs answer, for host
 * locations too. */
#define GRANULARITY ((size_t)2 << 20)
#define FILE_MAGIC  "FAKECUDA-VMM0001"
/* Fresh memory holds this byte, as cuMemAlloc's does (memory.c). */
#define FRESH_BYTE 0xCD
/* Up to this size the whole allocation is filled with FRESH_BYTE; beyond, its first page. */
#define FILL_LIMIT ((size_t)64 << 20)

/* The page after an allocation's bytes in its memfd. */
typedef struct {
    char magic[16];
    CUmemAllocationProp prop; /* its pointer field zero */
    uint64_t size;
} file_header_t;

struct fc_vmm_phys {
    CUmemGenericAllocationHandle handle;
    CUmemAllocationProp prop; /* as cuMemGetAllocationPropertiesFromHandle answers */
    size_t size;
    int fd;
    int refs;     /* the handle's references: cuMemCreate or an import, and each retain */
    int mappings; /* "The memory allocation will be freed when all outstanding mappings to the
                     memory are unmapped and when all outstanding references to the handle ...
                     are also released" */
    bool charged; /* device memory of this process (not an import) */
    unsigned long long block;
    struct fc_vmm_phys *next;
};

typedef struct reserve {
    uintptr_t base;
    size_t size;
    bool freed;
    struct reserve *next;
} reserve_t;

static struct fc_vmm_phys *physes;
static reserve_t *reserves;
static unsigned long long handles_made;

/* ---- lookups --------------------------------------------------------------------------------- */

static reserve_t *reserve_of(uintptr_t p)
{
    for (reserve_t *r = reserves; r != NULL; r = r->next)
        if (!r->freed && p >= r->base && p - r->base < r->size)
            return r;
    return NULL;
}

bool fc_vmm_reserved(uintptr_t p, uintptr_t *base, size_t *size)
{
    reserve_t *r = reserve_of(p);
    if (r == NULL)
        return false;
    *base = r->base;
    *size = r->size;
    return true;
}

unsigned long long fc_vmm_handle_types(const fc_alloc_t *a)
{
    return a->phys->prop.requestedHandleTypes;
}

unsigned long long fc_vmm_block_id(const fc_alloc_t *a)
{
    return a->phys->block;
}

/* cuda.h: "If handle is not a valid handle the behavior is undefined": unknown handles, and those
 * whose references are all released, are invalid values here. */
static struct fc_vmm_phys *phys_of(CUmemGenericAllocationHandle handle)
{
    for (struct fc_vmm_phys *p = physes; p != NULL; p = p->next)
        if (p->handle == handle && p->refs > 0)
            return p;
    return NULL;
}

/* The mapping holding @p p. */
static fc_alloc_t *mapping_of(uintptr_t p)
{
    fc_alloc_t *a = fc_mem_find(p);
    return a != NULL && a->kind == FC_MEM_VMM ? a : NULL;
}

/* Whether [p, p + size) is mapped throughout by whole mappings (@p whole) or, without, by
 * mappings that may extend past either end. Assumption (cuMemSetAccess: "a fully mapped address
 * range containing all allocations"): the ranges of cuMemUnmap and cuMemSetAccess are whole
 * mappings. */
static bool covered(uintptr_t p, size_t size, bool whole)
{
    uintptr_t at = p;
    while (at < p + size) {
        fc_alloc_t *a = mapping_of(at);
        if (a == NULL || (whole && (a->base != at || a->base + a->size > p + size)))
            return false;
        at = a->base + a->size;
    }
    return size > 0;
}

/* ---- the device work that may still touch memory --------------------------------------------- */

/* cuMemUnmap and cuMemSetAccess are "note_sync": queued work runs first. */
static void synchronize(void)
{
    fc_run_everything();
}

/* ---- properties ------------------------------------------------------------------------------ */

/* A cuMemCreate or cuMemGetAllocationGranularity prop: PINNED memory on a device, on host NUMA
 * node 0 (cuda.h: "On systems where NUMA is not available ... id must be set to 0"), or from 13.0
 * on the host (assumption: the HOST location came after 12.4, as for pools). cuda.h: "HOST
 * allocations are not IPC capable and ... requestedHandleTypes must be 0"; HOST_NUMA_CURRENT
 * "will result in CUDA_ERROR_INVALID_VALUE"; win32HandleMetaData "In all other cases ... is
 * required to be zero". */
static CUresult check_prop(const CUmemAllocationProp *prop)
{
    if (prop == NULL || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->win32HandleMetaData != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    switch (prop->location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        if (prop->location.id < 0 || prop->location.id >= fc_config.ndevices)
            return CUDA_ERROR_INVALID_DEVICE;
        break;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        if (prop->location.id != 0)
            return CUDA_ERROR_INVALID_VALUE;
        break;
#if FAKECUDA_VERSION >= 13000
    case CU_MEM_LOCATION_TYPE_HOST:
        if (prop->requestedHandleTypes != 0)
            return CUDA_ERROR_INVALID_VALUE;
        break;
#endif
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity,
                                                         const CUmemAllocationProp *prop,
                                                         CUmemAllocationGranularity_flags option)
{
    FC_BEGIN(cuMemGetAllocationGranularity, true);
    if (granularity == NULL || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                                option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = check_prop(prop)) == CUDA_SUCCESS)
        *granularity = GRANULARITY;
    FC_END();
}

/* ---- reservations ---------------------------------------------------------------------------- */

/* cuda.h: "The size and address parameters must be a multiple of the host page size and the
 * alignment must be a power of two or zero for default alignment"; addr is a hint (not followed
 * here); flags "must be zero". Assumption: the default alignment is the granularity. */
FC_EXPORT CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                               CUdeviceptr addr, unsigned long long flags)
{
    reserve_t *r;
    uintptr_t base;
    FC_BEGIN(cuMemAddressReserve, true);
    (void)addr;
    if (ptr == NULL || size == 0 || size % FC_PAGE != 0 || flags != 0 ||
        (alignment & (alignment - 1)) != 0 || addr % FC_PAGE != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((r = calloc(1, sizeof *r)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((base = fc_mem_carve(size, alignment > GRANULARITY ? alignment : GRANULARITY)) == 0) {
        free(r);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        r->base = base;
        r->size = size;
        r->next = reserves;
        reserves = r;
        *ptr = base;
    }
    FC_END();
}

/* cuda.h: "The size must match what was given to memAddressReserve and the ptr given must match
 * what was returned". Assumption: a reservation with mappings left is an invalid value. The
 * addresses are never handed out again. */
FC_EXPORT CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    reserve_t *r;
    FC_BEGIN(cuMemAddressFree, true);
    if ((r = reserve_of(ptr)) == NULL || r->base != ptr || r->size != size) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        for (fc_alloc_t *a = fc_mem_next(NULL); a != NULL; a = fc_mem_next(a))
            if (a->kind == FC_MEM_VMM && a->reserve_base == r->base)
                rc = CUDA_ERROR_INVALID_VALUE;
        if (rc == CUDA_SUCCESS)
            r->freed = true;
    }
    FC_END();
}

/* ---- physical allocations -------------------------------------------------------------------- */

static int device_of(const CUmemAllocationProp *prop)
{
    return prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
}

static struct fc_vmm_phys *new_phys(const CUmemAllocationProp *prop, size_t size, int fd)
{
    struct fc_vmm_phys *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->prop = *prop;
    p->prop.win32HandleMetaData = NULL;
    p->size = size;
    p->fd = fd;
    p->refs = 1;
    p->block = ++handles_made;
    /* Handles are numbers the driver chooses; never 0, never reused. */
    p->handle = 0xfc000000ull + p->block;
    p->next = physes;
    physes = p;
    return p;
}

/* Fresh memory, filled as cuMemAlloc's is, and the page that describes it. */
static int new_file(const CUmemAllocationProp *prop, size_t size)
{
    file_header_t h;
    size_t fill = size < FILL_LIMIT ? size : FC_PAGE;
    void *m;
    int fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);

    if (fd < 0)
        return -1;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FILE_MAGIC, sizeof h.magic);
    h.prop = *prop;
    h.prop.win32HandleMetaData = NULL;
    h.size = size;
    if (ftruncate(fd, (off_t)(size + FC_PAGE)) != 0 ||
        pwrite(fd, &h, sizeof h, (off_t)size) != (ssize_t)sizeof h ||
        (m = mmap(NULL, fill, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        close(fd);
        return -1;
    }
    memset(m, FRESH_BYTE, fill);
    munmap(m, fill);
    return fd;
}

/* cuda.h: "The created allocation will not have any device or host mappings"; its size "must be a
 * multiple of the the value given via cuMemGetAllocationGranularity". Only POSIX file descriptors
 * are shareable here (fabric, Win32: NOT_SUPPORTED, as CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_
 * SUPPORTED says). Compressible memory is asked for, not promised ("Applications are expected to
 * query allocation property ... to validate if the obtained allocation is compressible"): none is
 * given. Assumption: GPUDirect RDMA and the tile-pool and decompression usages, which the device
 * attributes say it lacks, are NOT_SUPPORTED. */
FC_EXPORT CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                       const CUmemAllocationProp *prop, unsigned long long flags)
{
    struct fc_vmm_phys *p;
    CUmemAllocationProp given;
    int fd;
    FC_BEGIN(cuMemCreate, true);
    if (handle == NULL || flags != 0 || size == 0 || size % GRANULARITY != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = check_prop(prop)) != CUDA_SUCCESS)
        ;
    else if ((prop->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) ||
             prop->allocFlags.gpuDirectRDMACapable || prop->allocFlags.usage != 0)
        rc = CUDA_ERROR_NOT_SUPPORTED;
    else if (!fc_mem_charge(device_of(prop), size))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        given = *prop;
        given.allocFlags.compressionType = CU_MEM_ALLOCATION_COMP_NONE;
        if ((fd = new_file(&given, size)) < 0 || (p = new_phys(&given, size, fd)) == NULL) {
            if (fd >= 0)
                close(fd);
            fc_mem_uncharge(device_of(prop), size);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            p->charged = true;
            *handle = p->handle;
        }
    }
    FC_END();
}

static void maybe_free(struct fc_vmm_phys *p)
{
    if (p->refs > 0 || p->mappings > 0 || p->fd < 0)
        return;
    close(p->fd);
    p->fd = -1;
    if (p->charged)
        fc_mem_uncharge(device_of(&p->prop), p->size);
}

FC_EXPORT CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    struct fc_vmm_phys *p;
    FC_BEGIN(cuMemRelease, true);
    if ((p = phys_of(handle)) == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        p->refs--;
        maybe_free(p);
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(
    CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    struct fc_vmm_phys *p;
    FC_BEGIN(cuMemGetAllocationPropertiesFromHandle, true);
    if (prop == NULL || (p = phys_of(handle)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *prop = p->prop;
    FC_END();
}

/* cuda.h: "The handle is guaranteed to be the same handle value used to map the memory. If the
 * address requested is not mapped, the function will fail. The returned handle must be released
 * with corresponding number of calls to cuMemRelease"; "any address in a range previously mapped".
 * Memory of the other allocators is not mapped this way (Open MPI and UCX tell VMM memory from the
 * rest by this call failing). */
FC_EXPORT CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
                                                       void *addr)
{
    fc_alloc_t *a;
    FC_BEGIN(cuMemRetainAllocationHandle, true);
    if (handle == NULL || (a = mapping_of((uintptr_t)addr)) == NULL) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        a->phys->refs++;
        *handle = a->phys->handle;
    }
    FC_END();
}

/* ---- mappings -------------------------------------------------------------------------------- */

/* cuda.h: "This range must be an address reservation previously reserved with
 * cuMemAddressReserve"; ptr, size and offset multiples of the granularity; offset "currently must
 * be zero"; "cuMemMap can only create mappings on VA range reservations that are not currently
 * mapped"; "calling cuMemMap does not make the address accessible". */
FC_EXPORT CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                    CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    struct fc_vmm_phys *p;
    reserve_t *r;
    fc_alloc_t *a;
    FC_BEGIN(cuMemMap, true);
    if (flags != 0 || offset != 0 || size == 0 || size % GRANULARITY != 0 ||
        ptr % GRANULARITY != 0 || (p = phys_of(handle)) == NULL || size > p->size ||
        (r = reserve_of(ptr)) == NULL || ptr + size > r->base + r->size) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        for (a = fc_mem_next(NULL); a != NULL; a = fc_mem_next(a))
            if (a->kind == FC_MEM_VMM && a->base < ptr + size && ptr < a->base + a->size)
                rc = CUDA_ERROR_INVALID_VALUE;
        if (rc != CUDA_SUCCESS)
            ;
        else if ((a = fc_mem_record(ptr, size, FC_MEM_VMM, 0, NULL)) == NULL)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else if (mmap((void *)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, 0) ==
                 MAP_FAILED) {
            fc_mem_forget(a);
            fc_mem_drop_pages(ptr, size);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            a->map_base = ptr;
            a->map_size = size;
            a->device = device_of(&p->prop);
            a->phys = p;
            a->reserve_base = r->base;
            a->reserve_size = r->size;
            p->mappings++;
        }
    }
    FC_END();
}

/* cuda.h: "The range must be the entire contiguous address range that was mapped to. In other
 * words, cuMemUnmap cannot unmap a sub-range"; the range becomes a reservation again, and "Any
 * new mapping ... will need to have access granted through cuMemSetAccess". Assumption: one call
 * may unmap several whole mappings side by side. */
FC_EXPORT CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FC_BEGIN(cuMemUnmap, true);
    if (!covered(ptr, size, true)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        synchronize();
        for (uintptr_t at = ptr; at < ptr + size;) {
            fc_alloc_t *a = mapping_of(at);
            struct fc_vmm_phys *p = a->phys;
            at = a->base + a->size;
            fc_mem_drop_pages(a->base, a->size);
            fc_mem_forget(a);
            p->mappings--;
            maybe_free(p);
        }
    }
    FC_END();
}

static bool host_type(CUmemLocationType type)
{
    return type == CU_MEM_LOCATION_TYPE_HOST || type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
}

/* cuda.h: "The range must be a fully mapped address range containing all allocations created by
 * cuMemMap / cuMemCreate"; "Users cannot specify CU_MEM_LOCATION_TYPE_HOST_NUMA accessibility for
 * allocations created on with other location types" (assumption: nor HOST); the id of a host
 * location is ignored. Assumption: a device that is no peer of the memory's (cuDeviceCanAccessPeer)
 * is an invalid device. Host-located memory is the host's only once granted here: until then host
 * code that touches it faults. */
FC_EXPORT CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                          size_t count)
{
    FC_BEGIN(cuMemSetAccess, true);
    if (desc == NULL || count == 0 || !covered(ptr, size, true)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        bool host_memory = mapping_of(ptr)->device < 0;
        for (uintptr_t at = ptr; at < ptr + size && rc == CUDA_SUCCESS;) {
            fc_alloc_t *a = mapping_of(at);
            if ((a->device < 0) != host_memory)
                rc = CUDA_ERROR_INVALID_VALUE;
            at = a->base + a->size;
        }
        for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++) {
            if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
                desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (host_type(desc[i].location.type))
                rc = host_memory ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
            else if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (desc[i].location.id < 0 || desc[i].location.id >= fc_config.ndevices)
                rc = CUDA_ERROR_INVALID_DEVICE;
            for (uintptr_t at = ptr; at < ptr + size && rc == CUDA_SUCCESS;) {
                fc_alloc_t *a = mapping_of(at);
                if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE && a->device >= 0 &&
                    a->device != desc[i].location.id &&
                    !fc_device_can_access(desc[i].location.id, a->device))
                    rc = CUDA_ERROR_INVALID_DEVICE;
                at = a->base + a->size;
            }
        }
        if (rc == CUDA_SUCCESS)
            synchronize();
        for (uintptr_t at = ptr; at < ptr + size && rc == CUDA_SUCCESS;) {
            fc_alloc_t *a = mapping_of(at);
            for (size_t i = 0; i < count; i++) {
                if (!host_type(desc[i].location.type)) {
                    a->access[desc[i].location.id] = (unsigned char)desc[i].flags;
                    continue;
                }
                a->host_access = (unsigned char)desc[i].flags;
                a->host_prot = desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                   ? PROT_READ | PROT_WRITE
                               : desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ
                                                                                : PROT_NONE;
                mprotect((void *)a->map_base, a->map_size, a->host_prot);
            }
            at = a->base + a->size;
        }
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
                                          CUdeviceptr ptr)
{
    fc_alloc_t *a;
    FC_BEGIN(cuMemGetAccess, true);
    if (flags == NULL || location == NULL || (a = mapping_of(ptr)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (host_type(location->type))
        *flags = a->host_access;
    else if (location->type != CU_MEM_LOCATION_TYPE_DEVICE)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (location->id < 0 || location->id >= fc_config.ndevices)
        rc = CUDA_ERROR_INVALID_DEVICE;
    else
        *flags = a->access[location->id];
    FC_END();
}

/* ---- sharing between processes --------------------------------------------------------------- */

/* cuda.h: the requested handle type must be one the allocation was created with
 * (requestedHandleTypes); flags "Reserved, must be zero". The handle is a new descriptor of the
 * allocation's memfd. */
FC_EXPORT CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle,
                                                        CUmemGenericAllocationHandle handle,
                                                        CUmemAllocationHandleType handleType,
                                                        unsigned long long flags)
{
    struct fc_vmm_phys *p;
    int fd;
    FC_BEGIN(cuMemExportToShareableHandle, true);
    if (shareableHandle == NULL || flags != 0 || (p = phys_of(handle)) == NULL ||
        handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((fd = dup(p->fd)) < 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *(int *)shareableHandle = fd;
    FC_END();
}

/* cuda.h: "There is no guarantee that the contents of handle will be the same CUDA memory handle
 * for the same given OS shareable handle": each import is a new handle, released with cuMemRelease,
 * of the exporter's memory. */
FC_EXPORT CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                                          void *osHandle,
                                                          CUmemAllocationHandleType shHandleType)
{
    int fd = (int)(intptr_t)osHandle, own;
    struct stat st;
    file_header_t h;
    struct fc_vmm_phys *p;
    FC_BEGIN(cuMemImportFromShareableHandle, true);
    if (handle == NULL || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        fstat(fd, &st) != 0 || (size_t)st.st_size < FC_PAGE ||
        pread(fd, &h, sizeof h, st.st_size - (off_t)FC_PAGE) != (ssize_t)sizeof h ||
        memcmp(h.magic, FILE_MAGIC, sizeof h.magic) != 0 ||
        h.size + FC_PAGE != (uint64_t)st.st_size || check_prop(&h.prop) != CUDA_SUCCESS)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((own = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((p = new_phys(&h.prop, (size_t)h.size, own)) == NULL) {
        close(own);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        *handle = p->handle;
    }
    FC_END();
}
