/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers of every memory kind for the device tests (see devbuf.h). Device 0's primary context is
 * the application's current one (cudrv_open); memory of device 1 is allocated, copied and freed
 * with device 1's primary context pushed, as an application of two devices does. */
#include "devbuf.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cudrv.h"

const char *const kind_names[K_COUNT] = {"device",
                                         "managed",
                                         "pinned",
                                         "host",
                                         "pool",
                                         "pool_user",
                                         "pool_dev1",
                                         "vmm",
                                         "vmm_host",
                                         "managed_advise",
                                         "pinned_portable",
                                         "pinned_mapped",
                                         "pinned_wc",
                                         "registered",
                                         "ipc",
                                         "dev1",
                                         "pool_host",
                                         "vmm_host_rw",
                                         "ipc_pool"};

static CUstream stream0; /* device 0's, for the stream-ordered allocations */
/* The pools of K_POOL_USER (device 0), K_POOL_DEV1 (device 1) and K_POOL_HOST (host NUMA 0). */
static CUmemoryPool pools[3];
static CUcontext dev1_ctx;

bool on_device(kind_t k)
{
    switch (k) {
    case K_HOST:
    case K_PINNED:
    case K_PINNED_PORTABLE:
    case K_PINNED_MAPPED:
    case K_PINNED_WC:
    case K_REGISTERED:
    case K_POOL_HOST:
    case K_VMM_HOST_RW:
        return false;
    default:
        return true;
    }
}

bool needs_two_devices(kind_t k)
{
    return k == K_POOL_DEV1 || k == K_DEV1;
}

int kind_by_name(const char *name)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(kind_names[k], name) == 0)
            return k;
    return -1;
}

bool kind_available(kind_t k, const char **why)
{
    int n = 0;

    *why = NULL;
    if (needs_two_devices(k) && (drv.cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 2))
        *why = "needs two devices";
    else if ((k == K_POOL || k == K_POOL_USER || k == K_POOL_DEV1 || k == K_POOL_HOST ||
              k == K_MANAGED_ADVISE) &&
             (!drv.cuStreamCreate || !drv.cuStreamSynchronize || !drv.cuMemAllocAsync ||
              !drv.cuMemFreeAsync || !drv.cuMemPoolCreate || !drv.cuMemAllocFromPoolAsync ||
              !drv.cuMemAdvise || !drv.cuMemPrefetchAsync))
        *why = "the driver lacks the stream-ordered allocator or managed advice";
    else if ((k == K_VMM || k == K_VMM_HOST || k == K_VMM_HOST_RW) &&
             (!drv.cuMemCreate || !drv.cuMemAddressReserve || !drv.cuMemMap ||
              !drv.cuMemSetAccess || !drv.cuMemGetAllocationGranularity || !drv.cuMemUnmap ||
              !drv.cuMemRelease || !drv.cuMemAddressFree))
        *why = "the driver lacks the virtual memory management calls";
    else if (k == K_REGISTERED && (!drv.cuMemHostRegister || !drv.cuMemHostUnregister))
        *why = "the driver lacks cuMemHostRegister";
    else if (k == K_IPC && (!drv.cuIpcGetMemHandle || !drv.cuIpcOpenMemHandle))
        *why = "the driver lacks cuIpcOpenMemHandle";
    else if (k == K_IPC_POOL &&
             (!drv.cuMemPoolCreate || !drv.cuMemAllocFromPoolAsync ||
              !drv.cuMemPoolExportToShareableHandle || !drv.cuMemPoolImportFromShareableHandle ||
              !drv.cuMemPoolExportPointer || !drv.cuMemPoolImportPointer))
        *why = "the driver lacks the IPC of memory pools";
    return *why == NULL;
}

CUcontext devbuf_device1(void)
{
    CUdevice dev;
    if (dev1_ctx == NULL) {
        CUDRV(cuDeviceGet(&dev, 1));
        CUDRV(cuDevicePrimaryCtxRetain(&dev1_ctx, dev));
    }
    return dev1_ctx;
}

static CUstream stream(void)
{
    if (stream0 == NULL)
        CUDRV(cuStreamCreate(&stream0, CU_STREAM_NON_BLOCKING));
    return stream0;
}

/* Pool @p i of `pools`: on device 0, on device 1, on host NUMA node 0. */
static CUmemoryPool pool_of(int i)
{
    CUmemPoolProps props;

    if (pools[i] == NULL) {
        memset(&props, 0, sizeof(props));
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
        props.location.type = i == 2 ? CU_MEM_LOCATION_TYPE_HOST_NUMA : CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = i == 2 ? 0 : i;
        CUDRV(cuMemPoolCreate(&pools[i], &props));
    }
    return pools[i];
}

/* A VMM mapping of @p len bytes located at @p loc, read-write for device 0 (and the host, when
 * @p host is). */
static void vmm_alloc(buf_t *b, CUmemLocationType type, int id, bool host)
{
    CUmemAllocationProp prop;
    CUmemAccessDesc access[2];
    size_t gran = 0;

    memset(&prop, 0, sizeof(prop));
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = type;
    prop.location.id = id;
    CUDRV(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    b->mapped = ((b->len ? b->len : 1) + gran - 1) / gran * gran;
    CUDRV(cuMemCreate(&b->handle, b->mapped, &prop, 0));
    CUDRV(cuMemAddressReserve(&b->reserve, b->mapped, 0, 0, 0));
    CUDRV(cuMemMap(b->reserve, b->mapped, 0, b->handle, 0));
    memset(access, 0, sizeof(access));
    access[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[0].location.id = 0;
    access[0].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    access[1].location.type = type;
    access[1].location.id = id;
    access[1].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUDRV(cuMemSetAccess(b->reserve, b->mapped, access, host ? 2 : 1));
    b->ptr = (char *)(uintptr_t)b->reserve;
}

/* The cuMemHostAlloc flags of each kind of page-locked memory. */
static const unsigned host_alloc_flags[K_COUNT] = {
    [K_PINNED] = CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE,
    [K_PINNED_PORTABLE] = CU_MEMHOSTALLOC_PORTABLE,
    [K_PINNED_MAPPED] = CU_MEMHOSTALLOC_DEVICEMAP,
    [K_PINNED_WC] = CU_MEMHOSTALLOC_WRITECOMBINED | CU_MEMHOSTALLOC_DEVICEMAP,
};

buf_t buf_alloc(kind_t kind, size_t len)
{
    buf_t b = {.kind = kind, .len = len};
    size_t size = len ? len : 1; /* what is allocated */
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CUcontext popped;
    CUdeviceptr d = 0;
    void *h = NULL;

    switch (kind) {
    case K_DEVICE:
        CUDRV(cuMemAlloc(&d, size));
        break;
    case K_MANAGED:
        CUDRV(cuMemAllocManaged(&d, size, CU_MEM_ATTACH_GLOBAL));
        break;
    case K_MANAGED_ADVISE:
        CUDRV(cuMemAllocManaged(&d, size, CU_MEM_ATTACH_GLOBAL));
        CUDRV(cuMemAdvise(d, size, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev0));
        CUDRV(cuMemAdvise(d, size, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
        CUDRV(cuMemPrefetchAsync(d, size, dev0, 0, stream()));
        CUDRV(cuStreamSynchronize(stream()));
        break;
    case K_PINNED:
    case K_PINNED_PORTABLE:
    case K_PINNED_MAPPED:
    case K_PINNED_WC:
        CUDRV(cuMemHostAlloc(&h, size, host_alloc_flags[kind]));
        break;
    case K_HOST:
        h = malloc(size);
        REQUIRE(h != NULL);
        break;
    case K_REGISTERED: {
        size_t pages = (size + 4095) / 4096 * 4096;
        REQUIRE(posix_memalign(&b.raw, 4096, pages) == 0);
        CUDRV(cuMemHostRegister(b.raw, pages,
                                CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
        h = b.raw;
        break;
    }
    case K_POOL:
        CUDRV(cuMemAllocAsync(&d, size, stream()));
        CUDRV(cuStreamSynchronize(stream()));
        break;
    case K_POOL_USER:
    case K_POOL_DEV1:
    case K_POOL_HOST:
        CUDRV(cuMemAllocFromPoolAsync(&d, size,
                                      pool_of(kind == K_POOL_USER   ? 0
                                              : kind == K_POOL_DEV1 ? 1
                                                                    : 2),
                                      stream()));
        CUDRV(cuStreamSynchronize(stream()));
        break;
    case K_VMM:
        vmm_alloc(&b, CU_MEM_LOCATION_TYPE_DEVICE, 0, false);
        return b;
    case K_VMM_HOST:
    case K_VMM_HOST_RW:
        vmm_alloc(&b, CU_MEM_LOCATION_TYPE_HOST_NUMA, 0, kind == K_VMM_HOST_RW);
        return b;
    case K_DEV1:
        CUDRV(cuCtxPushCurrent(devbuf_device1()));
        CUDRV(cuMemAlloc(&d, size));
        CUDRV(cuCtxPopCurrent(&popped));
        break;
    case K_IPC:
    case K_IPC_POOL:
    case K_COUNT:
        REQUIRE(!"buf_ipc_open and buf_ipc_pool_open make IPC buffers");
    }
    b.ptr = h != NULL ? (char *)h : (char *)(uintptr_t)d;
    return b;
}

buf_t buf_ipc_export(size_t len, CUipcMemHandle *h)
{
    buf_t b = buf_alloc(K_DEVICE, len);
    CUDRV(cuIpcGetMemHandle(h, (CUdeviceptr)(uintptr_t)b.ptr));
    return b;
}

buf_t buf_ipc_open(const CUipcMemHandle *h, size_t len)
{
    buf_t b = {.kind = K_IPC, .len = len};
    CUdeviceptr d;
    CUDRV(cuIpcOpenMemHandle(&d, *h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    b.ptr = (char *)(uintptr_t)d;
    return b;
}

/* The IPC-capable pool of device 0 and its descriptor; the other process's pool, imported. */
static CUmemoryPool ipc_pool, imported_pool;
static int ipc_pool_fd = -1;

buf_t buf_ipc_pool_export(size_t len, int *fd, CUmemPoolPtrExportData *data)
{
    buf_t b = {.kind = K_POOL_USER, .len = len};
    CUmemPoolProps props;
    CUdeviceptr d;

    if (ipc_pool == NULL) {
        memset(&props, 0, sizeof(props));
        props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = 0;
        CUDRV(cuMemPoolCreate(&ipc_pool, &props));
        CUDRV(cuMemPoolExportToShareableHandle(&ipc_pool_fd, ipc_pool,
                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    }
    CUDRV(cuMemAllocFromPoolAsync(&d, len ? len : 1, ipc_pool, stream()));
    CUDRV(cuStreamSynchronize(stream()));
    CUDRV(cuMemPoolExportPointer(data, d));
    *fd = ipc_pool_fd;
    b.ptr = (char *)(uintptr_t)d;
    return b;
}

buf_t buf_ipc_pool_open(int pid, int fd, const CUmemPoolPtrExportData *data, size_t len)
{
    buf_t b = {.kind = K_IPC_POOL, .len = len};
    CUmemPoolPtrExportData copy = *data;
    CUdeviceptr d;

    if (imported_pool == NULL) {
        /* The descriptor as a process on the same machine receives it (a real program passes it
         * over a Unix socket). */
        char path[64];
        int mine;
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
        REQUIRE((mine = open(path, O_RDWR | O_CLOEXEC)) >= 0);
        CUDRV(cuMemPoolImportFromShareableHandle(&imported_pool, (void *)(intptr_t)mine,
                                                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
        close(mine);
    }
    CUDRV(cuMemPoolImportPointer(&d, imported_pool, &copy));
    b.ptr = (char *)(uintptr_t)d;
    return b;
}

void buf_free(buf_t *b)
{
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->ptr;
    CUcontext popped;

    switch (b->kind) {
    case K_DEVICE:
    case K_MANAGED:
    case K_MANAGED_ADVISE:
        CUDRV(cuMemFree(d));
        break;
    case K_DEV1:
        CUDRV(cuCtxPushCurrent(devbuf_device1()));
        CUDRV(cuMemFree(d));
        CUDRV(cuCtxPopCurrent(&popped));
        break;
    case K_PINNED:
    case K_PINNED_PORTABLE:
    case K_PINNED_MAPPED:
    case K_PINNED_WC:
        CUDRV(cuMemFreeHost(b->ptr));
        break;
    case K_HOST:
        free(b->ptr);
        break;
    case K_REGISTERED:
        CUDRV(cuMemHostUnregister(b->raw));
        free(b->raw);
        break;
    case K_POOL:
    case K_POOL_USER:
    case K_POOL_DEV1:
    case K_POOL_HOST:
    case K_IPC_POOL:
        CUDRV(cuMemFreeAsync(d, stream()));
        CUDRV(cuStreamSynchronize(stream()));
        break;
    case K_VMM:
    case K_VMM_HOST:
    case K_VMM_HOST_RW:
        CUDRV(cuMemUnmap(b->reserve, b->mapped));
        CUDRV(cuMemRelease(b->handle));
        CUDRV(cuMemAddressFree(b->reserve, b->mapped));
        break;
    case K_IPC:
        CUDRV(cuIpcCloseMemHandle(d));
        break;
    case K_COUNT:
        break;
    }
    b->ptr = NULL;
}

/* Device 1's memory is copied with its context pushed; the rest in the current one. */
static void copy(const buf_t *b, bool to_buf, void *host)
{
    bool dev1 = needs_two_devices(b->kind);
    CUdeviceptr d = (CUdeviceptr)(uintptr_t)b->ptr;
    CUcontext popped;

    if (!on_device(b->kind)) {
        if (to_buf)
            memcpy(b->ptr, host, b->len);
        else
            memcpy(host, b->ptr, b->len);
        return;
    }
    if (dev1)
        CUDRV(cuCtxPushCurrent(devbuf_device1()));
    if (to_buf)
        CUDRV(cuMemcpyHtoD(d, host, b->len));
    else
        CUDRV(cuMemcpyDtoH(host, d, b->len));
    if (dev1)
        CUDRV(cuCtxPopCurrent(&popped));
}

void buf_put(const buf_t *b, const void *src)
{
    copy(b, true, (void *)src);
}

void buf_get(const buf_t *b, void *dst)
{
    copy(b, false, dst);
}
