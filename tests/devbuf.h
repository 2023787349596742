/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers of every memory kind for the device tests, allocated, filled and read through the CUDA
 * driver as an application does: device memory (cuMemAlloc), managed, page-locked and pageable
 * host memory, and the kinds real programs bring besides (stream-ordered pools, VMM mappings,
 * managed memory with advice and prefetch, page-locked memory of each flag, registered memory,
 * memory of a second device, IPC-opened memory). */
#ifndef TJ_TESTS_DEVBUF_H
#define TJ_TESTS_DEVBUF_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    K_DEVICE,          /* cuMemAlloc in device 0's primary context */
    K_MANAGED,         /* cuMemAllocManaged (CU_MEM_ATTACH_GLOBAL) */
    K_PINNED,          /* cuMemHostAlloc, DEVICEMAP | PORTABLE */
    K_HOST,            /* malloc */
    K_POOL,            /* cuMemAllocAsync: device 0's default pool */
    K_POOL_USER,       /* cuMemAllocFromPoolAsync from a pool made by cuMemPoolCreate on device 0 */
    K_POOL_DEV1,       /* the same from a pool of device 1, on a stream of device 0 */
    K_VMM,             /* cuMemCreate on device 0, cuMemMap, read-write access for device 0 */
    K_VMM_HOST,        /* cuMemCreate of host memory, access for device 0 only: not the CPU's */
    K_MANAGED_ADVISE,  /* managed, preferred location device 0, prefetched there */
    K_PINNED_PORTABLE, /* cuMemHostAlloc, PORTABLE */
    K_PINNED_MAPPED,   /* cuMemHostAlloc, DEVICEMAP */
    K_PINNED_WC,       /* cuMemHostAlloc, WRITECOMBINED | DEVICEMAP */
    K_REGISTERED,      /* page-aligned malloc, cuMemHostRegister (DEVICEMAP | PORTABLE) */
    K_IPC,             /* another process's cuMemAlloc memory, cuIpcOpenMemHandle'd (buf_ipc_*) */
    K_DEV1,            /* cuMemAlloc in device 1's primary context, device 0 current */
    K_POOL_HOST,       /* cuMemAllocFromPoolAsync from a pool of host NUMA node 0 */
    K_VMM_HOST_RW,     /* K_VMM_HOST with read-write access for the host too */
    K_IPC_POOL,        /* another process's allocation of an IPC pool, imported (buf_ipc_pool_*) */
    K_COUNT
} kind_t;

/* The runtime-API builds (devbuf_rt.c) make the first four kinds only. */
extern const char *const kind_names[K_COUNT];

typedef struct {
    kind_t kind;
    size_t len;
    char *ptr;
    /* How to give it back: */
    CUdeviceptr reserve;                 /* K_VMM*: the address range */
    size_t mapped;                       /* K_VMM*: its size, a multiple of the granularity */
    CUmemGenericAllocationHandle handle; /* K_VMM*: the physical allocation */
    void *raw;                           /* K_REGISTERED: what malloc returned */
} buf_t;

/* Device-like: host code may not touch it (the test driver faults), only the driver's copies. */
bool on_device(kind_t k);
/* Kinds that need a second device, and the kind's name -> kind (-1 if none). */
bool needs_two_devices(kind_t k);
int kind_by_name(const char *name);
/* Whether this driver can make the kind (its entry points exist; two devices for some): false
 * with the reason in @p why. */
bool kind_available(kind_t k, const char **why);

buf_t buf_alloc(kind_t kind, size_t len);
void buf_free(buf_t *b);
/* The whole buffer from or to host memory. */
void buf_put(const buf_t *b, const void *src);
void buf_get(const buf_t *b, void *dst);

/* IPC: a device buffer of this process to export (K_DEVICE, its handle in @p h), and another
 * process's buffer opened from its handle (K_IPC, in device 0's primary context). */
buf_t buf_ipc_export(size_t len, CUipcMemHandle *h);
buf_t buf_ipc_open(const CUipcMemHandle *h, size_t len);

/* IPC pools: an allocation of this process's IPC-capable pool of device 0 to export (a pool
 * buffer; the pool's descriptor and the allocation's export data in @p fd and @p data), and
 * another process's allocation imported from those (K_IPC_POOL; @p pid the exporting process). */
buf_t buf_ipc_pool_export(size_t len, int *fd, CUmemPoolPtrExportData *data);
buf_t buf_ipc_pool_open(int pid, int fd, const CUmemPoolPtrExportData *data, size_t len);

/* Device 1's primary context, retained (needs two devices). */
CUcontext devbuf_device1(void);

#ifdef TJ_CUDART
/* The runtime-API builds (devbuf_rt.c): device 0 made current with cudaSetDevice (false, with the
 * reason on stdout, without a device); whether the thread still has the context and device it had
 * then, and no runtime error; device buffers from cudaMallocAsync when buf_stream_ordered. */
bool devbuf_rt_open(void);
bool devbuf_rt_same_context(void);
extern bool buf_stream_ordered;
#endif

#endif /* TJ_TESTS_DEVBUF_H */
