/* Memory: device allocations in a PROT_NONE arena with guard pages, managed and page-locked host
 * memory, host registration, and the table of live allocations every other file looks up. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fakecuda.h"

/* Device memory comes from one reservation so a host access to it faults, as on a GPU. */
#define ARENA_SIZE   (1ull << 40)
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

fc_alloc_t *fc_mem_find_range(uintptr_t p, size_t n)
{
    fc_alloc_t *a = fc_mem_find(p);
    if (a == NULL || (n > 0 && n - 1 > a->base + a->size - 1 - p))
        return NULL;
    return a;
}

bool fc_mem_in_arena(uintptr_t p)
{
    return arena != 0 && p >= arena && p - arena < ARENA_SIZE;
}

static void protect(struct CUctx_st *ctx, int prot)
{
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next)
        if (a->kind == FC_MEM_DEVICE && a->ctx == ctx)
            mprotect((void *)a->map_base, a->map_size, prot);
}

void fc_mem_open(struct CUctx_st *ctx)
{
    protect(ctx, PROT_READ | PROT_WRITE);
}

void fc_mem_close(struct CUctx_st *ctx)
{
    protect(ctx, PROT_NONE);
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

bool fc_mem_slack_intact(struct CUctx_st *ctx)
{
    bool intact = true;
    for (fc_alloc_t *a = allocs; a != NULL; a = a->next) {
        uintptr_t end = a->base + a->size;
        if (a->kind != FC_MEM_DEVICE || a->ctx != ctx)
            continue;
        intact &= fresh(a->map_base, a->base - a->map_base);
        intact &= fresh(end, a->map_base + a->map_size - end);
    }
    return intact;
}

static fc_alloc_t *record(uintptr_t base, size_t size, fc_mem_kind_t kind, unsigned flags,
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
    a->id = next_id++;
    a->next = allocs;
    allocs = a;
    return a;
}

static void unlink_alloc(fc_alloc_t *victim)
{
    for (fc_alloc_t **p = &allocs; *p != NULL; p = &(*p)->next)
        if (*p == victim) {
            *p = victim->next;
            break;
        }
}

/* Gives the pages back; device addresses are never reused, so a stale pointer keeps faulting. */
static void release(fc_alloc_t *a)
{
    unlink_alloc(a);
    switch (a->kind) {
    case FC_MEM_DEVICE:
        mprotect((void *)a->map_base, a->map_size, PROT_NONE);
        madvise((void *)a->map_base, a->map_size, MADV_DONTNEED);
        device_used[a->ctx->device] -= a->map_size;
        break;
    case FC_MEM_MANAGED:
        device_used[a->ctx->device] -= a->map_size;
        munmap((void *)a->map_base, a->map_size);
        break;
    case FC_MEM_PINNED:
        munmap((void *)a->map_base, a->map_size);
        break;
    case FC_MEM_REGISTERED:
        break;
    }
    free(a);
}

void fc_mem_release_ctx(struct CUctx_st *ctx)
{
    fc_alloc_t *a = allocs, *next;
    for (; a != NULL; a = next) {
        next = a->next;
        if (a->ctx == ctx)
            release(a);
    }
}

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

/* The allocation ends as close to its guard page as 256-byte alignment allows, so a kernel that
 * runs past the end faults within 256 bytes; the bytes of its pages outside it keep FRESH_BYTE,
 * and emulated device work that writes them is reported as a fault (fc_mem_slack_intact). */
static CUresult device_alloc(struct CUctx_st *ctx, size_t bytesize, CUdeviceptr *dptr)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    uintptr_t start;
    fc_alloc_t *a;

    if (bytesize > DEVICE_TOTAL || device_used[ctx->device] + pages > DEVICE_TOTAL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (arena == 0) {
        void *p =
            mmap(NULL, ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
        arena = arena_next = (uintptr_t)p;
    }
    if (arena_next + pages + FC_PAGE > arena + ARENA_SIZE)
        return CUDA_ERROR_OUT_OF_MEMORY;
    start = (arena_next + pages - bytesize) / DEVICE_ALIGN * DEVICE_ALIGN;
    a = record(start, bytesize, FC_MEM_DEVICE, 0, ctx);
    if (a == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->map_base = arena_next;
    a->map_size = pages;
    arena_next += pages + FC_PAGE;
    device_used[ctx->device] += pages;
    mprotect((void *)a->map_base, pages, PROT_READ | PROT_WRITE);
    if (pages <= FILL_LIMIT) {
        memset((void *)a->map_base, FRESH_BYTE, pages);
    } else {
        memset((void *)a->map_base, FRESH_BYTE, FC_PAGE);
        memset((void *)(a->map_base + pages - FC_PAGE), FRESH_BYTE, FC_PAGE);
    }
    mprotect((void *)a->map_base, pages, PROT_NONE);
    *dptr = start;
    return CUDA_SUCCESS;
}

/* Host-accessible memory (managed and page-locked): a plain mapping of its own. */
static CUresult host_alloc(struct CUctx_st *ctx, size_t bytesize, fc_mem_kind_t kind,
                           unsigned flags, uintptr_t *out)
{
    size_t pages = round_up(bytesize, FC_PAGE);
    void *p;
    fc_alloc_t *a;

    if (kind == FC_MEM_MANAGED &&
        (bytesize > DEVICE_TOTAL || device_used[ctx->device] + pages > DEVICE_TOTAL))
        return CUDA_ERROR_OUT_OF_MEMORY;
    p = mmap(NULL, pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a = record((uintptr_t)p, bytesize, kind, flags, ctx);
    if (a == NULL) {
        munmap(p, pages);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->map_base = (uintptr_t)p;
    a->map_size = pages;
    if (kind == FC_MEM_MANAGED)
        device_used[ctx->device] += pages;
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

/* cuMemFree synchronises (a real driver waits for the device before unmapping). */
FC_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemFree_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_find(dptr)) == NULL || a->base != dptr ||
             (a->kind != FC_MEM_DEVICE && a->kind != FC_MEM_MANAGED) || a->ctx != ctx)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS)
        release(a);
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                                   CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemGetAddressRange_v2, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_find(dptr)) == NULL ||
             (a->kind != FC_MEM_DEVICE && a->kind != FC_MEM_MANAGED))
        rc = CUDA_ERROR_NOT_FOUND;
    else {
        if (pbase != NULL)
            *pbase = a->base;
        if (psize != NULL)
            *psize = a->size;
    }
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

FC_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemFreeHost, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_find((uintptr_t)p)) == NULL || a->base != (uintptr_t)p ||
             a->kind != FC_MEM_PINNED)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS)
        release(a);
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
        if (rc == CUDA_SUCCESS && record(lo, bytesize, FC_MEM_REGISTERED, Flags, ctx) == NULL)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    FC_END();
}

FC_EXPORT CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuMemHostUnregister, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_find((uintptr_t)p)) == NULL || a->base != (uintptr_t)p ||
             a->kind != FC_MEM_REGISTERED)
        rc = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    else if ((rc = fc_ctx_run_all(ctx)) == CUDA_SUCCESS)
        release(a);
    FC_END();
}
