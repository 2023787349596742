/* Buffers of every memory kind for the device tests (see devbuf.h). */
#include "devbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cudrv.h"

const char *const kind_names[4] = {"device", "managed", "pinned", "host"};

bool on_device(kind_t k)
{
    return k == K_DEVICE || k == K_MANAGED;
}

buf_t buf_alloc(kind_t kind, size_t len)
{
    buf_t b = {kind, len, NULL};
    CUdeviceptr d;
    void *h;

    switch (kind) {
    case K_DEVICE:
        CUDRV(cuMemAlloc(&d, len));
        b.ptr = (char *)(uintptr_t)d;
        break;
    case K_MANAGED:
        CUDRV(cuMemAllocManaged(&d, len, CU_MEM_ATTACH_GLOBAL));
        b.ptr = (char *)(uintptr_t)d;
        break;
    case K_PINNED:
        CUDRV(cuMemHostAlloc(&h, len, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
        b.ptr = h;
        break;
    case K_HOST:
        b.ptr = malloc(len);
        REQUIRE(b.ptr != NULL);
        break;
    }
    return b;
}

void buf_free(buf_t *b)
{
    if (on_device(b->kind))
        CUDRV(cuMemFree((CUdeviceptr)(uintptr_t)b->ptr));
    else if (b->kind == K_PINNED)
        CUDRV(cuMemFreeHost(b->ptr));
    else
        free(b->ptr);
    b->ptr = NULL;
}

void buf_put(const buf_t *b, const void *src)
{
    if (on_device(b->kind))
        CUDRV(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)b->ptr, src, b->len));
    else
        memcpy(b->ptr, src, b->len);
}

void buf_get(const buf_t *b, void *dst)
{
    if (on_device(b->kind))
        CUDRV(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)b->ptr, b->len));
    else
        memcpy(dst, b->ptr, b->len);
}
