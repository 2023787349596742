/* SPDX-License-Identifier: BSD-3-Clause */
/* Legacy IPC (CUDA Driver API, Memory Management: cuIpcGetMemHandle, cuIpcOpenMemHandle,
 * cuIpcCloseMemHandle): cuMemAlloc memory opened by another process. Memory shared between
 * processes needs shared pages: an exported allocation's pages become a memfd's at its first
 * export (its contents kept, remapped in place), and the handle names the exporter's process and
 * descriptor, which the importer opens through /proc/<pid>/fd. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda.h"

#define HANDLE_MAGIC "FCIPC001"

/* The 64 bytes of a CUipcMemHandle. */
typedef struct {
    char magic[8];
    int32_t pid, fd, device, reserved;
    uint64_t map_size, skew, size, id;
} handle_t;
_Static_assert(sizeof(handle_t) <= sizeof(CUipcMemHandle), "an IPC handle is 64 bytes");

/* The allocation's pages, contents kept, become a memfd's, mapped where they were. */
static CUresult share(fc_alloc_t *a)
{
    int fd = memfd_create("fakecuda-ipc", MFD_CLOEXEC);
    ssize_t done = 0;

    if (fd < 0 || ftruncate(fd, (off_t)a->map_size) != 0) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    mprotect((void *)a->map_base, a->map_size, PROT_READ);
    while ((size_t)done < a->map_size) {
        ssize_t n =
            pwrite(fd, (const char *)a->map_base + done, a->map_size - (size_t)done, (off_t)done);
        if (n <= 0)
            break;
        done += n;
    }
    if ((size_t)done != a->map_size || mmap((void *)a->map_base, a->map_size, a->host_prot,
                                            MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        mprotect((void *)a->map_base, a->map_size, a->host_prot);
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->fd = fd;
    return CUDA_SUCCESS;
}

/* cuda.h: "Takes a pointer to the base of an existing device memory allocation created with
 * cuMemAlloc and exports it for use in another process. This is a lightweight operation and may
 * be called multiple times on an allocation". Pool and VMM memory have their own sharing
 * (cuMemPoolExportPointer, cuMemExportToShareableHandle): an invalid value here. */
FC_EXPORT CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    handle_t h;
    FC_BEGIN(cuIpcGetMemHandle, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if (pHandle == NULL || (a = fc_mem_at(dptr)) == NULL || a->kind != FC_MEM_DEVICE)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (a->fd >= 0 || (rc = share(a)) == CUDA_SUCCESS) {
        memset(&h, 0, sizeof h);
        memcpy(h.magic, HANDLE_MAGIC, sizeof h.magic);
        h.pid = (int32_t)getpid();
        h.fd = a->fd;
        h.device = a->device;
        h.map_size = a->map_size;
        h.skew = a->base - a->map_base;
        h.size = a->size;
        h.id = a->id;
        memset(pHandle, 0, sizeof *pHandle);
        memcpy(pHandle, &h, sizeof h);
    }
    FC_END();
}

/* The memory @p h names, opened in this process already by a context of @p device, or NULL. */
static fc_alloc_t *opened(const handle_t *h, int device)
{
    for (fc_alloc_t *a = fc_mem_next(NULL); a != NULL; a = fc_mem_next(a))
        if (a->kind == FC_MEM_IPC && a->ipc_pid == h->pid && a->ipc_key == h->id &&
            a->ctx->device == device)
            return a;
    return NULL;
}

/* cuda.h: "Opens an interprocess memory handle exported from another process"; "If the memory
 * handle has already been opened by the current context, the reference count on the handle is
 * incremented by 1 and the existing device pointer is returned"; "CUipcMemHandles from each
 * CUdevice in a given process may only be opened by one CUcontext per CUdevice per other
 * process"; Flags "Must be specified as CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS" ("For contexts on
 * different devices cuIpcOpenMemHandle can attempt to enable peer access between the devices").
 * Opening a handle in
 * the process that exported it fails with CUDA_ERROR_INVALID_CONTEXT ("invalid device context", as
 * UCX's CUDA IPC transport reports it). The memory is the opening context's (CONTEXT), device
 * memory of the exporter's device (DEVICE_ORDINAL), which host code may not touch. Assumptions:
 * a handle that does not parse is an invalid handle, a second context of the same device an
 * invalid context, a device that is no peer of the memory's (cuDeviceCanAccessPeer) unsupported
 * peer access, and an exporter that is gone (or freed the memory) a failed map. */
static CUresult open_handle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    struct CUctx_st *ctx = NULL;
    handle_t h;
    char path[64];
    fc_alloc_t *a;
    uintptr_t map;
    int fd;
    CUresult rc;

    memcpy(&h, &handle, sizeof h);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        return rc;
    if (pdptr == NULL || Flags != CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
        return CUDA_ERROR_INVALID_VALUE;
    if (memcmp(h.magic, HANDLE_MAGIC, sizeof h.magic) != 0 || h.map_size == 0 ||
        h.map_size % FC_PAGE != 0 || h.skew + h.size > h.map_size || h.device < 0 ||
        h.device >= fc_config.ndevices)
        return CUDA_ERROR_INVALID_HANDLE;
    if (h.pid == (int32_t)getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    if ((a = opened(&h, ctx->device)) != NULL) {
        if (a->ctx != ctx)
            return CUDA_ERROR_INVALID_CONTEXT;
        a->ipc_refs++;
        *pdptr = a->base;
        return CUDA_SUCCESS;
    }
    if (h.device != ctx->device && !fc_device_can_access(ctx->device, h.device))
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
        return CUDA_ERROR_MAP_FAILED;
    if ((map = fc_mem_carve(h.map_size, FC_PAGE)) == 0 ||
        mmap((void *)map, h.map_size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
        (a = fc_mem_record(map + h.skew, h.size, FC_MEM_IPC, 0, ctx)) == NULL) {
        if (map != 0)
            fc_mem_drop_pages(map, h.map_size);
        close(fd);
        return CUDA_ERROR_MAP_FAILED;
    }
    a->map_base = map;
    a->map_size = h.map_size;
    a->slack = true;
    a->fd = fd;
    a->device = h.device;
    a->ipc_pid = h.pid;
    a->ipc_key = h.id;
    a->ipc_refs = 1;
    *pdptr = a->base;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                                 unsigned int Flags)
{
    FC_BEGIN(cuIpcOpenMemHandle_v2, true);
    rc = open_handle(pdptr, handle, Flags);
    FC_END();
}

/* The 4.1 entry point of the same ABI, for binaries built before 11.0. */
FC_EXPORT CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle,
                                              unsigned int Flags)
{
    FC_BEGIN(cuIpcOpenMemHandle, true);
    rc = open_handle(pdptr, handle, Flags);
    FC_END();
}

/* cuda.h: "Decrements the reference count of the memory returned by cuIpcOpenMemHandle by 1.
 * When the reference count reaches 0, this API unmaps the memory"; the exporter's memory stays.
 * Assumption: it needs a current context (UCX pushes one: "invalid device context" without);
 * queued work of the opening context runs first. */
FC_EXPORT CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    struct CUctx_st *ctx = NULL;
    fc_alloc_t *a;
    FC_BEGIN(cuIpcCloseMemHandle, true);
    if ((rc = fc_ctx_current(&ctx)) != CUDA_SUCCESS)
        ;
    else if ((a = fc_mem_at(dptr)) == NULL || a->kind != FC_MEM_IPC)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (--a->ipc_refs == 0) {
        rc = fc_ctx_run_all(a->ctx);
        fc_mem_release(a);
    }
    FC_END();
}
