/* SPDX-License-Identifier: BSD-3-Clause */
/* The stream-ordered memory allocator (CUDA Driver API, Stream Ordered Memory Allocator): a default
 * and a current pool per device (and, from 13.0, for the host), user pools on a device or on the
 * host, allocations and frees queued in stream order, access of other devices, attributes, and
 * pools shared between processes (a POSIX file descriptor for the pool, export data for each
 * allocation). Pool memory belongs to no context. Each allocation gets fresh pages as cuMemAlloc
 * memory does (never reused: a use after free faults, where a real pool may hand the bytes to
 * the next allocation); an IPC-capable pool keeps them in one memfd whose first page describes
 * the pool, so that another process can map them. */
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

#define FILE_MAGIC   "FAKECUDA-POOL001"
#define EXPORT_MAGIC "FCPTR001"

/* The first page of an IPC-capable pool's memfd. */
typedef struct {
    char magic[16];
    CUmemLocation location;
    unsigned handle_types;
    unsigned long long key;
} file_header_t;

/* CUmemPoolPtrExportData: where one allocation's pages are in its pool's memfd. */
typedef struct {
    char magic[8];
    unsigned long long key;
    uint64_t offset, size, map_size, skew;
} export_t;
_Static_assert(sizeof(export_t) <= sizeof(CUmemPoolPtrExportData), "export data is 64 bytes");

static struct CUmemPoolHandle_st *pools; /* every pool ever made, destroyed ones included */
/* Per device, then the host ([FC_MAX_DEVICES]) and host NUMA node 0 ([FC_MAX_DEVICES + 1]). */
static struct CUmemPoolHandle_st *default_pool[FC_MAX_DEVICES + 2];
static struct CUmemPoolHandle_st *current_pool[FC_MAX_DEVICES + 2];
static unsigned long long pools_made;

int fc_pool_device(const struct CUmemPoolHandle_st *pool)
{
    return pool->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? pool->location.id : -1;
}

/* The slot of default_pool and current_pool for a (checked) location. */
static int slot_of(const CUmemLocation *loc)
{
    if (loc->type == CU_MEM_LOCATION_TYPE_DEVICE)
        return loc->id;
    return loc->type == CU_MEM_LOCATION_TYPE_HOST ? FC_MAX_DEVICES : FC_MAX_DEVICES + 1;
}

/* A pool location: a device, host NUMA node 0 (the double has one node: cuMemCreate, "On systems
 * where NUMA is not available ... id must be set to 0"), or, from 13.0, the host. Assumption: the
 * HOST location of pools and VMM came after 12.4, HOST_NUMA before it (its pool documentation of
 * 12.x names HOST_NUMA alone). cuda.h: "Specifying CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT ... will
 * result in CUDA_ERROR_INVALID_VALUE". */
static bool location_ok(const CUmemLocation *loc)
{
    switch (loc->type) {
    case CU_MEM_LOCATION_TYPE_DEVICE:
        return loc->id >= 0 && loc->id < fc_config.ndevices;
    case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        return loc->id == 0;
#if FAKECUDA_VERSION >= 13000
    case CU_MEM_LOCATION_TYPE_HOST:
        return true;
#endif
    default:
        return false;
    }
}

static bool known(CUmemoryPool pool)
{
    for (struct CUmemPoolHandle_st *p = pools; p != NULL; p = p->next)
        if (p == pool)
            return p->magic == FC_MAGIC_POOL && !p->destroyed;
    return false;
}

static struct CUmemPoolHandle_st *new_pool(const CUmemLocation *loc, unsigned handle_types)
{
    struct CUmemPoolHandle_st *pool = calloc(1, sizeof *pool);
    if (pool == NULL)
        return NULL;
    pool->magic = FC_MAGIC_POOL;
    pool->location = *loc;
    if (loc->type == CU_MEM_LOCATION_TYPE_HOST)
        pool->location.id = 0; /* cuda.h: "id is ignored for such pools" */
    pool->handle_types = (CUmemAllocationHandleType)handle_types;
    pool->fd = -1;
    pool->key = ((unsigned long long)getpid() << 32) | ++pools_made;
    /* cuda.h, cuMemPoolCreate: "By default, the pool's memory will be accessible from the device
     * it is allocated on"; host pools' "default accessibility will be from the host CPU". */
    if (loc->type == CU_MEM_LOCATION_TYPE_DEVICE)
        pool->access[loc->id] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    /* cuMemPoolSetAttribute: the three reuse policies are "default enabled". */
    pool->reuse_follow = pool->reuse_opportunistic = pool->reuse_internal = 1;
    pool->next = pools;
    pools = pool;
    return pool;
}

/* An IPC-capable pool's memfd, its first page the header an importer reads. */
static CUresult share(struct CUmemPoolHandle_st *pool)
{
    file_header_t h;
    int fd = memfd_create("fakecuda-pool", MFD_CLOEXEC);

    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FILE_MAGIC, sizeof h.magic);
    h.location = pool->location;
    h.handle_types = pool->handle_types;
    h.key = pool->key;
    if (ftruncate(fd, (off_t)FC_PAGE) != 0 || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pool->fd = fd;
    pool->fd_end = FC_PAGE;
    return CUDA_SUCCESS;
}

/* The default pool of a (checked) location, made at its first use. */
static struct CUmemPoolHandle_st *default_of(const CUmemLocation *loc)
{
    int slot = slot_of(loc);
    if (default_pool[slot] == NULL && (default_pool[slot] = new_pool(loc, 0)) != NULL) {
        default_pool[slot]->is_default = true;
        if (current_pool[slot] == NULL)
            current_pool[slot] = default_pool[slot];
    }
    return default_pool[slot];
}

static struct CUmemPoolHandle_st *current_of(const CUmemLocation *loc)
{
    default_of(loc);
    return current_pool[slot_of(loc)];
}

/* ---- allocations in stream order ------------------------------------------------------------ */

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static void note_use(struct CUmemPoolHandle_st *pool)
{
    if (pool->used > pool->used_high)
        pool->used_high = pool->used;
    if (pool->reserved > pool->reserved_high)
        pool->reserved_high = pool->reserved;
}

/* cuMemAllocAsync: "A pointer to the allocated memory is returned immediately"; "The allocation
 * must not be accessed until the the allocation operation completes": the memory is not ready
 * (no device may touch it; host pool memory not even the host) until the stream reaches it.
 * Assumption: size 0 is an invalid value, as for cuMemAlloc; an imported pool cannot allocate
 * (cuMemPoolImportFromShareableHandle: "Imported memory pools do not support creating new
 * allocations"), which it says as an invalid value. */
static CUresult pool_alloc(struct CUmemPoolHandle_st *pool, size_t bytesize, struct CUstream_st *s,
                           CUdeviceptr *dptr)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    int dev = fc_pool_device(pool);
    fc_alloc_t *a;
    fc_op_t *op;
    uint64_t offset = 0;
    CUresult rc;

    if (dptr == NULL || bytesize == 0 || pool->imported)
        return CUDA_ERROR_INVALID_VALUE;
    if (pool->max_size != 0 && pool->reserved + pages > pool->max_size)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if ((op = calloc(1, sizeof *op)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (!fc_mem_charge(dev, pages)) {
        free(op);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a = fc_mem_record(0, bytesize, FC_MEM_POOL, 0, NULL);
    if (a != NULL && pool->fd >= 0) {
        offset = pool->fd_end;
        if (ftruncate(pool->fd, (off_t)(offset + pages)) != 0) {
            fc_mem_forget(a);
            a = NULL;
        }
    }
    if (a == NULL || (rc = fc_mem_place(bytesize, pool->fd, (off_t)offset, a)) != CUDA_SUCCESS) {
        if (a != NULL)
            fc_mem_forget(a);
        fc_mem_uncharge(dev, pages);
        free(op);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (pool->fd >= 0)
        pool->fd_end = offset + pages;
    a->pool = pool;
    a->device = dev;
    a->pool_offset = offset;
    a->ready = false;
    pool->used += bytesize;
    pool->reserved += pages;
    pool->live++;
    note_use(pool);
    op->kind = FC_OP_POOL;
    op->u.pool.alloc = a->id;
    fc_stream_enqueue(s, op);
    *dptr = a->base;
    return CUDA_SUCCESS;
}

void fc_pool_op(const fc_op_t *op)
{
    fc_alloc_t *a = fc_mem_by_id(op->u.pool.alloc);
    if (a == NULL)
        return; /* freed with cuMemFree before the stream reached it */
    if (op->u.pool.free) {
        fc_mem_release(a);
        return;
    }
    a->ready = true;
    /* Host pool memory: the host's from now on (its default accessibility). */
    if (a->device < 0) {
        a->host_prot = PROT_READ | PROT_WRITE;
        mprotect((void *)a->map_base, a->map_size, a->host_prot);
    }
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    struct CUstream_st *s = NULL;
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    FC_BEGIN(cuMemAllocAsync, true);
    /* cuda.h: "The allocation comes from the memory pool current to the stream's device." */
    if ((rc = fc_stream_any(hStream, &s)) == CUDA_SUCCESS) {
        loc.id = s->ctx->device;
        rc = pool_alloc(current_of(&loc), bytesize, s, dptr);
    }
    FC_END();
}

/* cuda.h: "The specified memory pool may be from a device different than that of the specified
 * hStream." */
FC_EXPORT CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                                                   CUmemoryPool pool, CUstream hStream)
{
    struct CUstream_st *s = NULL;
    FC_BEGIN(cuMemAllocFromPoolAsync, true);
    if (!known(pool))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_stream_any(hStream, &s)) == CUDA_SUCCESS)
        rc = pool_alloc(pool, bytesize, s, dptr);
    FC_END();
}

/* cuda.h: "The allocation must not be accessed after stream execution reaches the free. After this
 * API returns, accessing the memory from any subsequent work launched on the GPU ... results in
 * undefined behavior": the pages go when the stream reaches the free, and work queued after this
 * call faults on them even if it runs first (fc_mem_access). Assumption: only pool memory, once
 * (a second free, or memory of another allocator, is an invalid value). */
FC_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    struct CUstream_st *s = NULL;
    fc_alloc_t *a;
    fc_op_t *op;
    FC_BEGIN(cuMemFreeAsync, true);
    if ((rc = fc_stream_any(hStream, &s)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_at(dptr)) == NULL || a->kind != FC_MEM_POOL || a->free_seq != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((op = calloc(1, sizeof *op)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        op->kind = FC_OP_POOL;
        op->u.pool.alloc = a->id;
        op->u.pool.free = true;
        fc_stream_enqueue(s, op);
        a->free_seq = op->seq;
    }
    FC_END();
}

/* ---- pools ---------------------------------------------------------------------------------- */

/* cuMemPoolCreate. cuda.h: allocType "Currently must be specified as CU_MEM_ALLOCATION_TYPE_PINNED"
 * (assumption: the managed pools of 13.0 are not emulated: NOT_SUPPORTED); host pools "are not IPC
 * capable and CUmemPoolProps::handleTypes must be 0"; reserved "must be 0". Only POSIX file
 * descriptors are shareable here (CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES). */
FC_EXPORT CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    static const unsigned char zero[sizeof poolProps->reserved];
    struct CUmemPoolHandle_st *p;
    FC_BEGIN(cuMemPoolCreate, true);
    if (pool == NULL || poolProps == NULL || !location_ok(&poolProps->location) ||
        poolProps->win32SecurityAttributes != NULL ||
        memcmp(poolProps->reserved, zero, sizeof zero) != 0 ||
        (poolProps->location.type == CU_MEM_LOCATION_TYPE_HOST && poolProps->handleTypes != 0) ||
        (poolProps->usage & ~(unsigned)CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS) != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (poolProps->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED)
        rc = CUDA_ERROR_NOT_SUPPORTED;
    else if (poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((poolProps->handleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0 ||
             poolProps->usage != 0)
        rc = CUDA_ERROR_NOT_SUPPORTED;
    else if ((p = new_pool(&poolProps->location, poolProps->handleTypes)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        p->max_size = poolProps->maxSize;
        if (p->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
            rc = share(p);
        if (rc == CUDA_SUCCESS)
            *pool = p;
        else
            p->destroyed = true;
    }
    FC_END();
}

/* cuda.h: "A device's default memory pool cannot be destroyed"; "Destroying the current mempool of
 * a device sets the default mempool of that device as the current mempool"; with allocations
 * outstanding "the resources ... will be released automatically once there are no more". */
FC_EXPORT CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    FC_BEGIN(cuMemPoolDestroy, true);
    if (!known(pool) || pool->is_default) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        pool->destroyed = true;
        for (int i = 0; i < FC_MAX_DEVICES + 2; i++)
            if (current_pool[i] == pool)
                current_pool[i] = default_pool[i];
        if (pool->live == 0 && pool->fd >= 0) {
            close(pool->fd);
            pool->fd = -1;
        }
    }
    FC_END();
}

static bool valid_device(CUdevice dev)
{
    return dev >= 0 && dev < fc_config.ndevices;
}

/* The default pool of @p loc, or (@p current) its current pool, for the calls that ask for one by
 * device or by location: INVALID_VALUE for a NULL output first, then @p check, the location's. */
static CUresult pool_of(CUmemoryPool *out, const CUmemLocation *loc, CUresult check, bool current)
{
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (check != CUDA_SUCCESS)
        return check;
    if ((*out = current ? current_of(loc) : default_of(loc)) == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}

static CUresult device_check(CUdevice dev)
{
    return valid_device(dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

FC_EXPORT CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    FC_BEGIN(cuDeviceGetDefaultMemPool, true);
    rc = pool_of(pool_out, &loc, device_check(dev), false);
    FC_END();
}

/* cuda.h, cuMemGetMemPool: "the last pool provided to cuMemSetMemPool or cuDeviceSetMemPool ... or
 * the location's default memory pool". */
FC_EXPORT CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    FC_BEGIN(cuDeviceGetMemPool, true);
    rc = pool_of(pool, &loc, device_check(dev), true);
    FC_END();
}

/* cuda.h, cuMemSetMemPool: "The location and allocation type specified must match those of the
 * pool otherwise CUDA_ERROR_INVALID_VALUE is returned"; imported pools "may not be used in
 * cuDeviceSetMemPool". */
static CUresult set_current(const CUmemLocation *loc, CUmemoryPool pool)
{
    if (!known(pool) || pool->imported || pool->location.type != loc->type ||
        (loc->type != CU_MEM_LOCATION_TYPE_HOST && pool->location.id != loc->id))
        return CUDA_ERROR_INVALID_VALUE;
    default_of(loc);
    current_pool[slot_of(loc)] = pool;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    CUmemLocation loc = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
    FC_BEGIN(cuDeviceSetMemPool, true);
    if ((rc = device_check(dev)) == CUDA_SUCCESS)
        rc = set_current(&loc, pool);
    FC_END();
}

#if FAKECUDA_VERSION >= 13000
/* The 13.0 forms by location and allocation type. Assumption: managed pools
 * (CU_MEM_ALLOCATION_TYPE_MANAGED) are not emulated: NOT_SUPPORTED, which cuda.h lists. */
static CUresult by_location(const CUmemLocation *location, CUmemAllocationType type)
{
    if (location == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_MEM_ALLOCATION_TYPE_MANAGED)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (type != CU_MEM_ALLOCATION_TYPE_PINNED || !location_ok(location))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
                                                  CUmemAllocationType type)
{
    FC_BEGIN(cuMemGetDefaultMemPool, true);
    rc = pool_of(pool_out, location, by_location(location, type), false);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
                                           CUmemAllocationType type)
{
    FC_BEGIN(cuMemGetMemPool, true);
    rc = pool_of(pool, location, by_location(location, type), true);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
                                           CUmemoryPool pool)
{
    FC_BEGIN(cuMemSetMemPool, true);
    if ((rc = by_location(location, type)) == CUDA_SUCCESS)
        rc = set_current(location, pool);
    FC_END();
}
#endif

/* cuMemPoolSetAccess: "Controls visibility of pools between devices"; it applies to the pool's
 * allocations made before and after. Assumption: the pool's own device keeps READWRITE, and the
 * host's access to a host pool READWRITE (taking them away is an invalid value); a device pool
 * takes no host entry; a device that is no peer of the pool's (cuDeviceCanAccessPeer) cannot be
 * granted its memory. */
FC_EXPORT CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
                                              size_t count)
{
    FC_BEGIN(cuMemPoolSetAccess, true);
    if (!known(pool) || (map == NULL && count > 0)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++) {
            const CUmemAccessDesc *d = &map[i];
            bool host = d->location.type == CU_MEM_LOCATION_TYPE_HOST ||
                        d->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA;
            if (d->flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                d->flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
                d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (host)
                rc = fc_pool_device(pool) < 0 && d->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                         ? CUDA_SUCCESS
                         : CUDA_ERROR_INVALID_VALUE;
            else if (d->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
                     !valid_device(d->location.id))
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (d->location.id == fc_pool_device(pool) &&
                     d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                rc = CUDA_ERROR_INVALID_VALUE;
            else if (fc_pool_device(pool) >= 0 && d->location.id != fc_pool_device(pool) &&
                     !fc_device_can_access(d->location.id, fc_pool_device(pool)))
                rc = CUDA_ERROR_INVALID_VALUE;
        }
        for (size_t i = 0; i < count && rc == CUDA_SUCCESS; i++)
            if (map[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE)
                pool->access[map[i].location.id] = (unsigned char)map[i].flags;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
                                              CUmemLocation *location)
{
    FC_BEGIN(cuMemPoolGetAccess, true);
    if (flags == NULL || location == NULL || !known(memPool))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (location->type == CU_MEM_LOCATION_TYPE_DEVICE && valid_device(location->id))
        *flags = (CUmemAccess_flags)memPool->access[location->id];
    else if (location->type == CU_MEM_LOCATION_TYPE_HOST ||
             location->type == CU_MEM_LOCATION_TYPE_HOST_NUMA)
        *flags = fc_pool_device(memPool) < 0 ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                             : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    else
        rc = CUDA_ERROR_INVALID_VALUE;
    FC_END();
}

/* cuda.h: trimming releases memory "the allocator can safely release"; freed memory goes back at
 * once here, so nothing is left to trim. */
FC_EXPORT CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FC_BEGIN(cuMemPoolTrimTo, true);
    (void)minBytesToKeep;
    if (!known(pool))
        rc = CUDA_ERROR_INVALID_VALUE;
    FC_END();
}

/* Where each attribute lives in a pool: the reuse policies are ints, the sizes cuuint64_t.
 * RESERVED_MEM_*: the pages behind the pool's live allocations; USED_MEM_*: their bytes. */
#define POOL_FIELD(_attr, _field, _is_int)                                                         \
    {                                                                                              \
        _attr, offsetof(struct CUmemPoolHandle_st, _field), _is_int                                \
    }
static const struct {
    CUmemPool_attribute attr;
    size_t offset;
    bool is_int;
} pool_fields[] = {
    POOL_FIELD(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, reuse_follow, true),
    POOL_FIELD(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, reuse_opportunistic, true),
    POOL_FIELD(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, reuse_internal, true),
    POOL_FIELD(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, release_threshold, false),
    POOL_FIELD(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, reserved, false),
    POOL_FIELD(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, reserved_high, false),
    POOL_FIELD(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, used, false),
    POOL_FIELD(CU_MEMPOOL_ATTR_USED_MEM_HIGH, used_high, false),
};
#undef POOL_FIELD

/* The field of @p pool that holds @p attr, and whether it is an int; NULL: no such attribute. */
static void *attribute_field(struct CUmemPoolHandle_st *pool, CUmemPool_attribute attr,
                             bool *is_int)
{
    for (size_t i = 0; i < sizeof pool_fields / sizeof pool_fields[0]; i++)
        if (pool_fields[i].attr == attr) {
            *is_int = pool_fields[i].is_int;
            return (char *)pool + pool_fields[i].offset;
        }
    return NULL;
}

/* cuMemPoolSetAttribute: RESERVED_MEM_HIGH "It is illegal to set this attribute to a non-zero
 * value", USED_MEM_HIGH "can only be reset to zero" (assumption: the same for it); the current
 * amounts are not settable. */
FC_EXPORT CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                 void *value)
{
    void *field = NULL;
    bool is_int;
    FC_BEGIN(cuMemPoolSetAttribute, true);
    if (!known(pool) || value == NULL || (field = attribute_field(pool, attr, &is_int)) == NULL ||
        attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT || attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (is_int)
        *(int *)field = *(int *)value;
    else if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        *(cuuint64_t *)field = *(cuuint64_t *)value;
    else if (*(cuuint64_t *)value != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else /* a high-water mark, reset to the current amount */
        *(cuuint64_t *)field =
            attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH ? pool->reserved : pool->used;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                 void *value)
{
    void *field = NULL;
    bool is_int;
    FC_BEGIN(cuMemPoolGetAttribute, true);
    if (!known(pool) || value == NULL || (field = attribute_field(pool, attr, &is_int)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (is_int)
        *(int *)value = *(int *)field;
    else
        *(cuuint64_t *)value = *(cuuint64_t *)field;
    FC_END();
}

/* ---- pools shared between processes --------------------------------------------------------- */

/* cuda.h: "Given an IPC capable mempool, create an OS handle"; flags "must be 0". The handle is a
 * new descriptor of the pool's memfd (the caller closes it, passes it on by SCM_RIGHTS, ...). */
FC_EXPORT CUresult CUDAAPI cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
                                                            CUmemAllocationHandleType handleType,
                                                            unsigned long long flags)
{
    int fd;
    FC_BEGIN(cuMemPoolExportToShareableHandle, true);
    if (handle_out == NULL || flags != 0 || !known(pool) || pool->imported ||
        handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        !(pool->handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) || pool->fd < 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((fd = dup(pool->fd)) < 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *(int *)handle_out = fd;
    FC_END();
}

/* The pool comes from the descriptor's first page; the caller keeps its descriptor. Its access is
 * a new pool's (its device, or the host). */
FC_EXPORT CUresult CUDAAPI cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                                              CUmemAllocationHandleType handleType,
                                                              unsigned long long flags)
{
    file_header_t h;
    int fd = (int)(intptr_t)handle;
    struct CUmemPoolHandle_st *pool;
    FC_BEGIN(cuMemPoolImportFromShareableHandle, true);
    if (pool_out == NULL || flags != 0 || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        memcmp(h.magic, FILE_MAGIC, sizeof h.magic) != 0 || !location_ok(&h.location))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((pool = new_pool(&h.location, h.handle_types)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((pool->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
        pool->destroyed = true;
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        pool->imported = true;
        pool->key = h.key;
        *pool_out = pool;
    }
    FC_END();
}

/* "Constructs shareData_out for sharing a specific allocation from an already shared memory pool."
 * Assumption: the start of an allocation of an IPC-capable pool of this process. */
FC_EXPORT CUresult CUDAAPI cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out,
                                                  CUdeviceptr ptr)
{
    fc_alloc_t *a;
    export_t e;
    FC_BEGIN(cuMemPoolExportPointer, true);
    if (shareData_out == NULL || (a = fc_mem_at(ptr)) == NULL || a->kind != FC_MEM_POOL ||
        a->imported || a->pool->fd < 0) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        memset(shareData_out, 0, sizeof *shareData_out);
        memset(&e, 0, sizeof e);
        memcpy(e.magic, EXPORT_MAGIC, sizeof e.magic);
        e.key = a->pool->key;
        e.offset = a->pool_offset;
        e.size = a->size;
        e.map_size = a->map_size;
        e.skew = a->base - a->map_base;
        memcpy(shareData_out, &e, sizeof e);
    }
    FC_END();
}

/* cuda.h: "The imported memory must not be accessed before the allocation operation completes in
 * the exporting process" (which another process cannot see: it is usable at once here), and it
 * may be freed with cuMemFree or cuMemFreeAsync. It is the pool's memory: no context, the pool's
 * device and access. */
FC_EXPORT CUresult CUDAAPI cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                                  CUmemPoolPtrExportData *shareData)
{
    export_t e;
    uintptr_t map = 0;
    fc_alloc_t *a = NULL;
    FC_BEGIN(cuMemPoolImportPointer, true);
    if (shareData != NULL)
        memcpy(&e, shareData, sizeof e);
    if (ptr_out == NULL || shareData == NULL || !known(pool) || !pool->imported ||
        memcmp(e.magic, EXPORT_MAGIC, sizeof e.magic) != 0 || e.key != pool->key ||
        e.map_size == 0 || e.map_size % FC_PAGE != 0 || e.skew + e.size > e.map_size)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((map = fc_mem_carve(e.map_size, FC_PAGE)) == 0 ||
             mmap((void *)map, e.map_size, PROT_NONE, MAP_SHARED | MAP_FIXED, pool->fd,
                  (off_t)e.offset) == MAP_FAILED ||
             (a = fc_mem_record(map + e.skew, e.size, FC_MEM_POOL, 0, NULL)) == NULL) {
        if (map != 0)
            fc_mem_drop_pages(map, e.map_size);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        a->map_base = map;
        a->map_size = e.map_size;
        a->slack = true;
        a->pool = pool;
        a->device = fc_pool_device(pool);
        a->imported = true;
        a->pool_offset = e.offset;
        if (a->device < 0) {
            a->host_prot = PROT_READ | PROT_WRITE;
            mprotect((void *)map, e.map_size, a->host_prot);
        }
        pool->live++;
        *ptr_out = a->base;
    }
    FC_END();
}
