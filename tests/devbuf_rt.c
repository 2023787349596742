/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers of every memory kind for the device tests, through the CUDA runtime API (the
 * runtime-API builds of the device tests, compiled with TJ_CUDART): device memory from cudaMalloc
 * or, with buf_stream_ordered, from cudaMallocAsync; managed, pinned mapped and pageable host
 * memory. Under the emu label the runtime is the stand-in of tests/fakecuda/cudart. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "check.h"
#include "devbuf.h"

const char *const kind_names[K_COUNT] = {"device", "managed", "pinned", "host"};

bool buf_stream_ordered;

/* The driver context the runtime made current at devbuf_rt_open (through the driver library the
 * runtime loaded: a program may look at it, it never changes it). */
static CUcontext app_ctx;
static CUresult (*ctx_get_current)(CUcontext *);

static void rt_check(cudaError_t e, const char *call, int line)
{
    if (e == cudaSuccess)
        return;
    fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, line, call, cudaGetErrorName(e),
            cudaGetErrorString(e));
    exit(1);
}
#define RT(_call) rt_check((_call), #_call, __LINE__)

bool devbuf_rt_open(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);

    if (e != cudaSuccess || count < 1) {
        printf("SKIP: no CUDA device (%s)\n", cudaGetErrorName(e));
        return false;
    }
    RT(cudaSetDevice(0));
    *(void **)&ctx_get_current = dlsym(RTLD_DEFAULT, "cuCtxGetCurrent");
    REQUIRE(ctx_get_current != NULL && ctx_get_current(&app_ctx) == CUDA_SUCCESS);
    return true;
}

bool devbuf_rt_same_context(void)
{
    CUcontext cur = NULL;
    int dev = -1;
    return ctx_get_current(&cur) == CUDA_SUCCESS && cur == app_ctx &&
           cudaGetDevice(&dev) == cudaSuccess && dev == 0 && cudaPeekAtLastError() == cudaSuccess;
}

bool on_device(kind_t k)
{
    return k == K_DEVICE || k == K_MANAGED;
}

buf_t buf_alloc(kind_t kind, size_t len)
{
    buf_t b = {.kind = kind, .len = len};
    void *p = NULL;

    switch (kind) {
    case K_DEVICE:
        /* On the legacy stream: the copies that fill it come after the allocation. */
        if (buf_stream_ordered)
            RT(cudaMallocAsync(&p, len, NULL));
        else
            RT(cudaMalloc(&p, len));
        break;
    case K_MANAGED:
        RT(cudaMallocManaged(&p, len, cudaMemAttachGlobal));
        break;
    case K_PINNED:
        RT(cudaHostAlloc(&p, len, cudaHostAllocMapped | cudaHostAllocPortable));
        break;
    case K_HOST:
        p = malloc(len);
        REQUIRE(p != NULL);
        break;
    default:
        REQUIRE(!"the runtime-API builds make the first four kinds only");
    }
    b.ptr = p;
    return b;
}

void buf_free(buf_t *b)
{
    if (b->kind == K_DEVICE && buf_stream_ordered)
        RT(cudaFreeAsync(b->ptr, NULL));
    else if (on_device(b->kind))
        RT(cudaFree(b->ptr));
    else if (b->kind == K_PINNED)
        RT(cudaFreeHost(b->ptr));
    else
        free(b->ptr);
    b->ptr = NULL;
}

void buf_put(const buf_t *b, const void *src)
{
    if (on_device(b->kind))
        RT(cudaMemcpy(b->ptr, src, b->len, cudaMemcpyHostToDevice));
    else
        memcpy(b->ptr, src, b->len);
}

void buf_get(const buf_t *b, void *dst)
{
    if (on_device(b->kind))
        RT(cudaMemcpy(dst, b->ptr, b->len, cudaMemcpyDeviceToHost));
    else
        memcpy(dst, b->ptr, b->len);
}
