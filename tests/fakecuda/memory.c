/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory: device allocations in a PROT_NONE arena with guard pages, managed and page-locked host
 * memory, host registration, and the table of live allocations every other file looks up; which
 * allocations the device work of a context may touch, opened for it while it runs. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

/* Device memory comes from one reservation so a host access to it faults, as on a GPU. */
/* The address range device memory is carved from, reserved at the first allocation: 1 TiB, or
 * FAKECUDA_ARENA_GIB (valgrind cannot reserve as much). */
#define ARENA_SIZE   (fc_config.arena != 0 ? fc_config.arena : (size_t)1 << 40)
#define DEVICE_ALIGN 256
#define DEVICE_TOTAL (16ull << 30)
/* Fresh memory holds this byte, so reading what was never written shows. */
#define FRESH_BYTE 0xCD
/* Above this size only the pages at either end get FRESH_BYTE (the slack fc_mem_slack_intact
 * checks is there); the rest reads as zero, as fresh memory may on a GPU, and costs no host
 * memory until it is written, so a test can allocate gigabytes it touches sparsely. */
#define FILL_LIMIT ((size_t)64 << 20)

static uintptr_t arena, arena_next;
static fc_alloc_t *allocs;
static unsigned long long next_id = 1;
static size_t device_used[FC_MAX_DEVICES];

fc_alloc_t *fc_mem_find(uintptr_t p)
{
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next)
        if (p >= a->base && p - a->base < a->size)
            return a;
    return NULL;
}

fc_alloc_t *fc_mem_at(uintptr_t p)
{
    fc_alloc_t *a = fc_mem_find(p);
    return a != NULL && a->base == p ? a : NULL;
}

fc_alloc_t *fc_mem_find_range(uintptr_t p, size_t n)
{
    fc_alloc_t *a = fc_mem_find(p);
    if (a == NULL || (n > 0 && n - 1 > a->base + a->size - 1 - p))
        return NULL;
    return a;
}

fc_alloc_t *fc_mem_by_id(unsigned long long id)
{
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next)
        if (a->id == id)
            return a;
    return NULL;
}

fc_alloc_t *fc_mem_next(fc_alloc_t *a)
{
    return a == NULL ? allocs : a->next;
}

bool fc_mem_in_arena(uintptr_t p)
{
    return arena != 0 && p >= arena && p - arena < ARENA_SIZE;
}

bool fc_mem_charge(int dev, size_t bytes)
{
    if (dev < 0)
        return true;
    if (bytes > DEVICE_TOTAL || device_used[dev] + bytes > DEVICE_TOTAL)
        return false;
    device_used[dev] += bytes;
    return true;
}

void fc_mem_uncharge(int dev, size_t bytes)
{
    if (dev >= 0)
        device_used[dev] -= bytes;
}

size_t fc_mem_used(int dev)
{
    return device_used[dev];
}

/* The kinds whose pages the host may not touch unless told (device memory in the arena). */
static bool device_like(fc_mem_kind_t kind)
{
    return kind == FC_MEM_DEVICE || kind == FC_MEM_POOL || kind == FC_MEM_VMM || kind == FC_MEM_IPC;
}

fc_alloc_t *fc_mem_record(uintptr_t base, size_t size, fc_mem_kind_t kind, unsigned flags,
                          struct CUctx_st *ctx)
{
    fc_alloc_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->base = base;
    a->size = size;
    a->kind = kind;
    a->flags = flags;
    a->ctx = ctx;
    a->device = ctx != NULL ? ctx->device : -1;
    a->host_prot = device_like(kind) ? PROT_NONE : PROT_READ | PROT_WRITE;
    a->fd = -1;
    a->ready = true;
    a->id = next_id++;
    a->next = allocs;
    allocs = a;
    return a;
}

void fc_mem_forget(fc_alloc_t *victim)
{
    for (fc_alloc_t **p = &allocs; *p != NULL; p = &(*p)->next)
        if (*p == victim) {
            *p = victim->next;
            break;
        }
    free(victim->managed);
    free(victim);
}

uintptr_t fc_mem_carve(size_t bytes, size_t align)
{
    uintptr_t start;

    if (arena == 0) {
        void *p =
            mmap(NULL, ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return 0;
        arena = arena_next = (uintptr_t)p;
    }
    if (align < FC_PAGE)
        align = FC_PAGE;
    start = (arena_next + align - 1) / align * align;
    if (bytes > ARENA_SIZE || start - arena > ARENA_SIZE - bytes - FC_PAGE)
        return 0;
    arena_next = start + bytes + FC_PAGE;
    return start;
}

void fc_mem_drop_pages(uintptr_t base, size_t size)
{
    /* A fresh private mapping in place: whatever was mapped there (shared pages included) goes,
     * and the address space stays reserved, never to be handed out again. */
    mmap((void *)base, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
         0);
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* The allocation ends as close to its guard page as 256-byte alignment allows, so a kernel that
 * runs past the end faults within 256 bytes; the bytes of its pages outside it keep FRESH_BYTE,
 * and emulated device work that writes them is reported as a fault (fc_mem_slack_intact). */
CUresult fc_mem_place(size_t bytesize, int fd, off_t offset, fc_alloc_t *a)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    uintptr_t map = fc_mem_carve(pages, FC_PAGE);

    if (map == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fd >= 0 && mmap((void *)map, pages, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                        offset) == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (fd < 0)
        mprotect((void *)map, pages, PROT_READ | PROT_WRITE);
    if (pages <= FILL_LIMIT) {
        memset((void *)map, FRESH_BYTE, pages);
    } else {
        memset((void *)map, FRESH_BYTE, FC_PAGE);
        memset((void *)(map + pages - FC_PAGE), FRESH_BYTE, FC_PAGE);
    }
    mprotect((void *)map, pages, PROT_NONE);
    a->base = (map + pages - bytesize) / DEVICE_ALIGN * DEVICE_ALIGN;
    a->size = bytesize;
    a->map_base = map;
    a->map_size = pages;
    a->slack = true;
    return CUDA_SUCCESS;
}

/* ---- what device work may touch ------------------------------------------------------------ */

/* Assumption (stricter than a GPU where the driver is silent): cuMemAlloc memory is the
 * allocating context's alone (cuCtxCreate'd contexts have their own address space), and of the
 * contexts that enabled peer access to it (cuda.h, cuCtxEnablePeerAccess: "all allocations from
 * peerContext will immediately be accessible by the current context"); memory opened with
 * cuIpcOpenMemHandle is the opening context's. Pool and VMM memory belong to no context ("These
 * memory allocations are not associated with any CUDA context", cuda.h, cuCtxDestroy): any context
 * of a device the pool or the mapping grants access may touch it (CUDA Driver API, Stream Ordered
 * Memory Allocator: cuMemPoolSetAccess; Virtual Memory Management: cuMemSetAccess). Pool memory is
 * usable only between its allocation and its free in stream order ("All asynchronous accesses of
 * the allocation must happen between the stream executions of the allocation and the free"): work
 * queued after cuMemFreeAsync returned may not touch it even if it happens to run first. */
unsigned fc_mem_access(const fc_alloc_t *a, const struct CUctx_st *ctx, uint64_t seq)
{
    switch (a->kind) {
    case FC_MEM_DEVICE:
        return a->ctx == ctx || fc_ctx_peer(ctx, a->ctx) ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                                                         : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    case FC_MEM_IPC:
        return a->ctx == ctx ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    case FC_MEM_POOL:
        if (seq != UINT64_MAX && (!a->ready || (a->free_seq != 0 && seq > a->free_seq)))
            return CU_MEM_ACCESS_FLAGS_PROT_NONE;
        return a->pool->access[ctx->device];
    case FC_MEM_VMM:
        return a->access[ctx->device];
    default:
        return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    }
}

static int prot_of(unsigned access)
{
    if (access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return PROT_READ | PROT_WRITE;
    return access == CU_MEM_ACCESS_FLAGS_PROT_READ ? PROT_READ : PROT_NONE;
}

/* Assumption (more lenient than a GPU, and documented): host-located memory the host may touch
 * stays touchable while device work runs, granted to the device or not, since taking it from the
 * host then would fault the application's own threads. */
void fc_mem_open(struct CUctx_st *ctx, uint64_t seq)
{
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next) {
        int prot;
        if (!device_like(a->kind))
            continue;
        /* Opened for two contexts at once (cuMemcpyPeer): what either may do. */
        prot = prot_of(fc_mem_access(a, ctx, seq)) | (a->opened ? a->open_prot : a->host_prot);
        if (prot == (a->opened ? a->open_prot : a->host_prot))
            continue;
        mprotect((void *)a->map_base, a->map_size, prot);
        a->opened = true;
        a->open_prot = prot;
    }
}

void fc_mem_close(void)
{
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next)
        if (a->opened) {
            mprotect((void *)a->map_base, a->map_size, a->host_prot);
            a->opened = false;
        }
}

/* True when [p, p + n) holds only FRESH_BYTE; otherwise it is refilled. */
static bool fresh(uintptr_t p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != FRESH_BYTE) {
            memset((void *)p, FRESH_BYTE, n);
            return false;
        }
    return true;
}

bool fc_mem_slack_intact(void)
{
    bool intact = true;
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next) {
        uintptr_t end = a->base + a->size;
        if (!a->slack || !a->opened)
            continue;
        /* Pages opened read-only cannot have been written. */
        intact &= fresh(a->map_base, a->base - a->map_base);
        intact &= fresh(end, a->map_base + a->map_size - end);
    }
    return intact;
}

/* ---- freeing ------------------------------------------------------------------------------- */

static void release_pool(fc_alloc_t *a);

/* Gives the pages back; device addresses are never reused, so a stale pointer keeps faulting. */
void fc_mem_release(fc_alloc_t *a)
{
    switch (a->kind) {
    case FC_MEM_DEVICE:
        fc_mem_uncharge(a->device, a->map_size);
        fc_mem_drop_pages(a->map_base, a->map_size);
        break;
    case FC_MEM_IPC:
        fc_mem_drop_pages(a->map_base, a->map_size);
        break;
    case FC_MEM_POOL:
        release_pool(a);
        break;
    case FC_MEM_MANAGED:
        fc_mem_uncharge(a->device, a->map_size);
        munmap((void *)a->map_base, a->map_size);
        break;
    case FC_MEM_PINNED:
        munmap((void *)a->map_base, a->map_size);
        break;
    case FC_MEM_VMM: /* vmm.c unmaps its own */
    case FC_MEM_REGISTERED:
        break;
    }
    if (a->fd >= 0)
        close(a->fd);
    fc_mem_forget(a);
}

/* Pool memory leaves its pool's counts; a destroyed pool goes with its last allocation. */
static void release_pool(fc_alloc_t *a)
{
    struct CUmemPoolHandle_st *pool = a->pool;
    fc_mem_drop_pages(a->map_base, a->map_size);
    if (!a->imported) {
        /* An IPC-capable pool's memfd gives the pages back too (an importer still mapping them,
         * against cuMemPoolImportPointer's rules, reads zeros). */
        if (pool->fd >= 0)
            fallocate(pool->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->pool_offset,
                      (off_t)a->map_size);
        fc_mem_uncharge(a->device, a->map_size);
        pool->used -= a->size;
        pool->reserved -= a->map_size;
    }
    /* cuMemPoolDestroy: "the resources associated with the pool will be released automatically
     * once there are no more outstanding allocations". */
    if (--pool->live == 0 && pool->destroyed && pool->fd >= 0) {
        close(pool->fd);
        pool->fd = -1;
    }
}

/* IPC-opened memory of @p ctx goes with it too: it was opened in that context. */
void fc_mem_release_ctx(struct CUctx_st *ctx)
{
    fc_alloc_t *a = allocs, *next;
    for (; a != NULL; a = next) {
        next = a->next;
        if (a->ctx == ctx)
            fc_mem_release(a);
    }
}

static CUresult device_alloc(struct CUctx_st *ctx, size_t bytesize, CUdeviceptr *dptr)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    fc_alloc_t *a;
    CUresult rc;

    if (!fc_mem_charge(ctx->device, pages))
        return CUDA_ERROR_OUT_OF_MEMORY;
    a = fc_mem_record(0, bytesize, FC_MEM_DEVICE, 0, ctx);
    if (a == NULL || (rc = fc_mem_place(bytesize, -1, 0, a)) != CUDA_SUCCESS) {
        if (a != NULL)
            fc_mem_forget(a);
        fc_mem_uncharge(ctx->device, pages);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = a->base;
    return CUDA_SUCCESS;
}

/* Host-accessible memory (managed and page-locked): a plain mapping of its own. */
static CUresult host_alloc(struct CUctx_st *ctx, size_t bytesize, fc_mem_kind_t kind,
                           unsigned flags, uintptr_t *out)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    void *p;
    fc_alloc_t *a;

    if (kind == FC_MEM_MANAGED && !fc_mem_charge(ctx->device, pages))
        return CUDA_ERROR_OUT_OF_MEMORY;
    p = mmap(NULL, pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || (a = fc_mem_record((uintptr_t)p, bytesize, kind, flags, ctx)) == NULL) {
        if (p != MAP_FAILED)
            munmap(p, pages);
        if (kind == FC_MEM_MANAGED)
            fc_mem_uncharge(ctx->device, pages);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->map_base = (uintptr_t)p;
    a->map_size = pages;
    memset(p, FRESH_BYTE, pages);
    *out = (uintptr_t)p;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuMemAlloc_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (dptr == NULL || bytesize == 0) /* cuda.h: size 0 is INVALID_VALUE */
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        rc = device_alloc(ctx, bytesize, dptr);
    FC_END();
}

/* cuda.h: the pitch is "the width in bytes of the allocation", padded so that rows keep the
 * alignment "for texture binding" (a multiple of CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 32
 * on current GPUs); ElementSizeBytes "may be 4, 8 or 16". Assumption: rows are padded to a
 * multiple of 512 bytes (FC_TEXTURE_ALIGNMENT), what the real driver and runtime give on every
 * NVIDIA GPU reported: rows "filled to a multiple of 512 Bytes" on Kepler and Maxwell (NVIDIA
 * developer forum, "Understanding Memory Pitch Alignment"), the pitch alignment equal to
 * textureAlignment, 512, on all platforms alpaka tested (alpaka pull request 2566), and TEMPI's
 * host stand-in of cudaMalloc3D rounds to 512 "to match CUDA". A 512-byte pitch is a multiple of
 * 32, so rows also meet the texture pitch alignment. The padding is device memory like the rest:
 * the allocation is cuMemAlloc memory of the current context, pitch * Height bytes. */
FC_EXPORT CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch,
                                              size_t WidthInBytes, size_t Height,
                                              unsigned int ElementSizeBytes)
{
    struct CUctx_st *ctx = NULL;
    size_t pitch = round_up(WidthInBytes, FC_TEXTURE_ALIGNMENT);
    FC_BEGIN(cuMemAllocPitch_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (dptr == NULL || pPitch == NULL || WidthInBytes == 0 || Height == 0 ||
             (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) ||
             pitch < WidthInBytes || pitch > SIZE_MAX / Height)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = device_alloc(ctx, pitch * Height, dptr)) == CUDA_SUCCESS)
        *pPitch = pitch;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    struct CUctx_st *ctx = NULL;
    uintptr_t p;
    FC_BEGIN(cuMemAllocManaged, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (dptr == NULL || bytesize == 0 ||
             (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = host_alloc(ctx, bytesize, FC_MEM_MANAGED, flags, &p)) == CUDA_SUCCESS)
        *dptr = p;
    FC_END();
}

/* cuMemFree synchronises (a real driver waits for the device before unmapping), except for pool
 * memory: cuda.h, "This API will not perform any implict synchronization when the pointer was
 * allocated with cuMemAllocAsync or cuMemAllocFromPoolAsync"; such memory, imported pool memory
 * too (cuMemPoolImportPointer: "The pointer may be freed with cuMemFree or cuMemFreeAsync"), goes
 * at once, and work still queued that touches it faults. Assumption: an allocation whose
 * cuMemFreeAsync is already queued is freed twice (INVALID_VALUE); IPC-opened memory is closed with
 * cuIpcCloseMemHandle and VMM memory unmapped, not freed (INVALID_VALUE). */
FC_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemFree_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_at(dptr)) == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (a->kind == FC_MEM_POOL && a->free_seq == 0)
        fc_mem_release(a);
    else if ((a->kind != FC_MEM_DEVICE && a->kind != FC_MEM_MANAGED) || a->ctx != ctx)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS)
        fc_mem_release(a);
    FC_END();
}

/* Device and managed memory of any kind; for VMM memory the one mapping (cuda.h,
 * CU_POINTER_ATTRIBUTE_RANGE_SIZE: "To retrieve the size of the mapped region, see
 * cuMemGetAddressRange"). */
FC_EXPORT CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                                   CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemGetAddressRange_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_find(dptr)) == NULL || a->kind == FC_MEM_PINNED ||
             a->kind == FC_MEM_REGISTERED)
        rc = CUDA_ERROR_NOT_FOUND;
    else {
        if (pbase != NULL)
            *pbase = a->base;
        if (psize != NULL)
            *psize = a->size;
    }
    FC_END();
}

/* cuda.h: "the free and total amount of memory available for allocation by the CUDA context":
 * the current context's device, DEVICE_TOTAL less what its allocations of every kind hold. */
FC_EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    struct CUctx_st *ctx = NULL;
    FC_BEGIN(cuMemGetInfo_v2, true);
    if (free_bytes == NULL || total == NULL)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_ctx_current(&ctx)) == CUDA_SUCCESS) {
        *total = DEVICE_TOTAL;
        *free_bytes = DEVICE_TOTAL - device_used[ctx->device];
    }
    FC_END();
}

/* cuda.h: "the flags pFlags that were specified when allocating the pinned host buffer p allocated
 * by cuMemHostAlloc" (cuMemAllocHost's count as PORTABLE | DEVICEMAP). Assumption: registered
 * memory, which cuda.h does not name, is an invalid value. */
FC_EXPORT CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemHostGetFlags, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (pFlags == NULL || (a = fc_mem_find((uintptr_t)p)) == NULL || a->kind != FC_MEM_PINNED)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pFlags = a->flags;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    uintptr_t p;
    const unsigned known =
        CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    FC_BEGIN(cuMemHostAlloc, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (pp == NULL || bytesize == 0 || (Flags & ~known) != 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = host_alloc(ctx, bytesize, FC_MEM_PINNED, Flags, &p)) == CUDA_SUCCESS)
        *pp = (void *)p;
    FC_END();
}

/* cuda.h: cuMemAllocHost memory is accessible to all contexts and mapped at the same address, so
 * it counts as PORTABLE | DEVICEMAP. */
FC_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    struct CUctx_st *ctx = NULL;
    uintptr_t p;
    FC_BEGIN(cuMemAllocHost_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (pp == NULL || bytesize == 0)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = host_alloc(ctx, bytesize, FC_MEM_PINNED,
                              CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP, &p)) ==
             CUDA_SUCCESS)
        *pp = (void *)p;
    FC_END();
}

/* cuMemFreeHost and cuMemHostUnregister: the host memory of @p kind that starts at @p p goes once
 * the current context's queued work has run; @p missing when there is none. */
static CUresult release_host(void *p, fc_mem_kind_t kind, CUresult missing)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    CUresult rc = fc_ctx_current(&ctx);

    if (rc != CUDA_SUCCESS)
        return rc;
    if ((a = fc_mem_at((uintptr_t)p)) == NULL || a->kind != kind)
        return missing;
    if ((rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS)
        fc_mem_release(a);
    return rc;
}

FC_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    FC_BEGIN(cuMemFreeHost, true);
    rc = release_host(p, FC_MEM_PINNED, CUDA_ERROR_INVALID_VALUE);
    FC_END();
}

/* Mapped pinned memory: with UVA and CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM the device pointer
 * is the host pointer; cuda.h: fails unless the memory was allocated or registered DEVICEMAP. */
FC_EXPORT CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                                        unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemHostGetDevicePointer_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (pdptr == NULL || Flags != 0 || (a = fc_mem_find((uintptr_t)p)) == NULL ||
             (a->kind != FC_MEM_PINNED && a->kind != FC_MEM_REGISTERED) ||
             !(a->flags & CU_MEMHOSTALLOC_DEVICEMAP) ||
             (a->ctx != ctx && !(a->flags & CU_MEMHOSTALLOC_PORTABLE)))
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *pdptr = (CUdeviceptr)p;
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    const unsigned known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                           CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    uintptr_t lo = (uintptr_t)p;
    FC_BEGIN(cuMemHostRegister_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS) {
        ;
    } else if (p == NULL || bytesize == 0 || (Flags & ~known) != 0 || fc_mem_in_arena(lo)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else if (Flags & (CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)) {
        /* Neither I/O memory nor READ_ONLY_HOST_REGISTER_SUPPORTED is emulated. */
        rc = CUDA_ERROR_NOT_SUPPORTED;
    } else {
        for (fc_alloc_t *a = allocs; a != NULL && rc == CUDA_SUCCESS; a = a->next)
            if (a->kind != FC_MEM_DEVICE && lo < a->base + a->size && a->base < lo + bytesize)
                rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
        if (rc == CUDA_SUCCESS &&
            fc_mem_record(lo, bytesize, FC_MEM_REGISTERED, Flags, ctx) == NULL)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    FC_BEGIN(cuMemHostUnregister, true);
    rc = release_host(p, FC_MEM_REGISTERED, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    FC_END();
}
