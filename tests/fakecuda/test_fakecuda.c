/* SPDX-License-Identifier: BSD-3-Clause */
/* The fake CUDA driver checked against the semantics cuda.h documents: contexts, streams,
 * faults, queued work, pointer attributes, module compatibility and failure injection; and the
 * rules it holds emulated kernels to: threads run in a shuffled order on several host threads,
 * and typejit's pack and unpack kernels write each byte of their output exactly once. Run under
 * ${TJ_EMU_ENV} (driver 13.0) and ${TJ_EMU_ENV_12} (driver 12.4); kernels come from the real
 * NVRTC through the shim. `test_fakecuda inject` is the child that runs with FAKECUDA_FAIL,
 * `test_fakecuda rules` the child whose kernels break the rules, `test_fakecuda ubsan` the child
 * whose kernel overflows a signed integer, built with FAKECUDA_CXXFLAGS=-fsanitize=undefined,
 * `test_fakecuda nvrtc_cache` the child that compiles through an empty FAKECUDA_NVRTC_CACHE. */
#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "child.h"

/* Exported by every driver since 3.2 but no longer declared by the 13.0 cuda.h. */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);

static const char kernels_src[] =
    "extern \"C\" __global__ void fill(unsigned *p, unsigned n, unsigned v)\n"
    "{\n"
    "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        p[i] = v + i;\n"
    "}\n"
    "/* extern \"C\" __global__ void not_a_kernel(int x) */\n"
    "extern \"C\" __global__ void poke(char *p, long long off)\n"
    "{\n"
    "    if (blockIdx.x == 0 && threadIdx.x == 0)\n"
    "        p[off] = 1;\n"
    "}\n"
    "extern \"C\" __global__ void load8(const char *p, long long off, unsigned long long *out)\n"
    "{\n"
    "    if (threadIdx.x == 0)\n"
    "        *out = *(const unsigned long long *)(p + off);\n"
    "}\n";

static int driver_version;
static long long (*stats)(const char *);

/* ---- NVRTC through the shim ----------------------------------------------------------------- */

static struct {
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    nvrtcResult (*destroy)(nvrtcProgram *);
} nv;

static void nvrtc_open(void)
{
    void *lib = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib != NULL);
    *(void **)&nv.create = dlsym(lib, "nvrtcCreateProgram");
    *(void **)&nv.compile = dlsym(lib, "nvrtcCompileProgram");
    *(void **)&nv.ptx_size = dlsym(lib, "nvrtcGetPTXSize");
    *(void **)&nv.ptx = dlsym(lib, "nvrtcGetPTX");
    *(void **)&nv.cubin_size = dlsym(lib, "nvrtcGetCUBINSize");
    *(void **)&nv.cubin = dlsym(lib, "nvrtcGetCUBIN");
    *(void **)&nv.destroy = dlsym(lib, "nvrtcDestroyProgram");
    REQUIRE(nv.create && nv.compile && nv.ptx_size && nv.ptx && nv.cubin_size && nv.cubin &&
            nv.destroy);
}

/* "sm_80" gives a CUBIN, "compute_80" PTX of @p src; either ends with the shim's trailer. Its
 * size, trailer included, in @p size_out unless NULL. */
static char *nvrtc_image_sized(const char *src, const char *arch, size_t *size_out)
{
    nvrtcProgram prog;
    char option[64];
    const char *options[] = {option};
    size_t size;
    char *image;
    int cubin = strncmp(arch, "sm_", 3) == 0;

    snprintf(option, sizeof option, "-arch=%s", arch);
    REQUIRE(nv.create(&prog, src, "kernels.cu", 0, NULL, NULL) == NVRTC_SUCCESS);
    REQUIRE(nv.compile(prog, 1, options) == NVRTC_SUCCESS);
    REQUIRE((cubin ? nv.cubin_size(prog, &size) : nv.ptx_size(prog, &size)) == NVRTC_SUCCESS);
    image = malloc(size);
    REQUIRE(image != NULL);
    REQUIRE((cubin ? nv.cubin(prog, image) : nv.ptx(prog, image)) == NVRTC_SUCCESS);
    nv.destroy(&prog);
    if (size_out != NULL)
        *size_out = size;
    return image;
}

static char *nvrtc_image_of(const char *src, const char *arch)
{
    return nvrtc_image_sized(src, arch, NULL);
}

static char *nvrtc_image(const char *arch)
{
    return nvrtc_image_of(kernels_src, arch);
}

/* PTX of @p src the running driver accepts: NVRTC 13 writes ISA 9.0, which driver 12.4 refuses,
 * so the 12.4 run loads it relabelled 8.4 (the kernels use nothing newer). */
static char *ptx_of(const char *src)
{
    char *ptx = nvrtc_image_of(src, "compute_80");
    if (driver_version < 13000) {
        char *v = strstr(ptx, ".version 9.0");
        REQUIRE(v != NULL);
        memcpy(v, ".version 8.4", 12);
    }
    return ptx;
}

static char *ptx_for_driver(void)
{
    return ptx_of(kernels_src);
}

/* ---- helpers --------------------------------------------------------------------------------- */

static CUcontext new_context(int dev)
{
    CUcontext ctx;
    REQUIRE(cuCtxCreate_v2(&ctx, 0, dev) == CUDA_SUCCESS);
    return ctx;
}

static void launch1(CUfunction f, unsigned grid, unsigned block, CUstream s, void **params,
                    CUresult expect)
{
    CHECK_EQ_INT(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, params, NULL), expect);
}

/* ---- scenarios ------------------------------------------------------------------------------- */

static void check_no_context(void)
{
    CUdeviceptr p;
    CUcontext cur = (CUcontext)1;
    CHECK_EQ_INT(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == NULL);
    CHECK_EQ_INT(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT);
}

static void check_primary(void)
{
    CUcontext a, b, cur;
    unsigned flags;
    int active;
    CUdeviceptr p;

    CHECK_EQ_INT(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    CHECK_EQ_INT(active, 0);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&a, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&b, 0), CUDA_SUCCESS);
    CHECK(a == b);
    CHECK_EQ_INT(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    CHECK_EQ_INT(active, 1);
    CHECK_EQ_INT(cuCtxSetCurrent(a), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    CHECK_EQ_INT(active, 1);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxGetState(0, &flags, &active), CUDA_SUCCESS);
    CHECK_EQ_INT(active, 0);
    /* Still current but deactivated: its memory is gone and calls fail. */
    CHECK_EQ_INT(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == a);
    CHECK_EQ_INT(cuMemFree(p), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    /* Retained again: the same handle, a fresh context without the old allocation. */
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&b, 0), CUDA_SUCCESS);
    CHECK(a == b);
    CHECK_EQ_INT(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
}

/* cuCtxGetId: an ID per instance of a context. The handle of a primary context stays across a
 * reset or a last release; the ID does not. A destroyed context has none. */
static void check_context_ids(void)
{
    CUcontext a, own, popped;
    unsigned long long id1 = 0, id2 = 0, id3 = 0, cur = 0;

    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&a, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(a, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxGetId(a, &id1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(NULL, &cur), CUDA_ERROR_INVALID_CONTEXT); /* none current */
    CHECK_EQ_INT(cuCtxSetCurrent(a), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(NULL, &cur), CUDA_SUCCESS);
    CHECK(cur == id1);
    CHECK_EQ_INT(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(a, &id2), CUDA_SUCCESS);
    CHECK(id2 != id1);
    CHECK_EQ_INT(cuCtxCreate_v2(&own, 0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(own, &id3), CUDA_SUCCESS);
    CHECK(id3 != id1 && id3 != id2);
    CHECK_EQ_INT(cuCtxDestroy(own), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetId(own, &id3), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK_EQ_INT(cuCtxGetCurrent(&popped), CUDA_SUCCESS);
    CHECK(popped == a);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

static void *other_thread(void *arg)
{
    CUcontext cur = (CUcontext)1;
    CUdeviceptr p;
    int *ok = arg;
    *ok = cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL &&
          cuMemAlloc(&p, 16) == CUDA_ERROR_INVALID_CONTEXT;
    return NULL;
}

static void check_stack_and_threads(void)
{
    CUcontext a = new_context(0), b, cur, popped;
    pthread_t t;
    int ok = 0;
    CUstream s;

    b = new_context(0); /* pushed over a */
    CHECK_EQ_INT(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == b);
    CHECK_EQ_INT(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    CHECK(popped == b);
    CHECK_EQ_INT(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == a);
    REQUIRE(pthread_create(&t, NULL, other_thread, &ok) == 0);
    pthread_join(t, NULL);
    CHECK(ok);
    /* A stream of context a used while b is current. */
    CHECK_EQ_INT(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxPushCurrent(b), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ_INT(cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE);
    CHECK_EQ_INT(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamDestroy(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(b), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(a), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CHECK(cur == NULL);
    CHECK_EQ_INT(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
}

static void check_host_access_faults(void)
{
    CUcontext ctx = new_context(0);
    CUdeviceptr p;

    CHECK_EQ_INT(cuMemAlloc(&p, 4096), CUDA_SUCCESS);
    CHECK(child_touch_faults((const void *)(uintptr_t)p, false));
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

static CUmodule load_module(CUresult *rc)
{
    CUmodule mod = NULL;
    char *ptx = ptx_for_driver();
    *rc = cuModuleLoadData(&mod, ptx);
    free(ptx);
    return mod;
}

static CUfunction function(CUmodule mod, const char *name)
{
    CUfunction f = NULL;
    CHECK_EQ_INT(cuModuleGetFunction(&f, mod, name), CUDA_SUCCESS);
    return f;
}

static void check_guard_page(void)
{
    CUcontext ctx = new_context(0), fresh;
    CUresult rc;
    CUmodule mod = load_module(&rc);
    CUdeviceptr p, q;
    long long off = 4096;
    void *params[] = {&p, &off};
    unsigned host[8];
    unsigned n = 8, v = 100;
    void *fill_params[] = {&q, &n, &v};

    REQUIRE(rc == CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 4096), CUDA_SUCCESS);
    launch1(function(mod, "poke"), 1, 32, NULL, params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemAlloc(&q, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuModuleUnload(mod), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);

    fresh = new_context(0);
    mod = load_module(&rc);
    REQUIRE(rc == CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&q, sizeof host), CUDA_SUCCESS);
    launch1(function(mod, "fill"), 1, 32, NULL, fill_params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(host, q, sizeof host), CUDA_SUCCESS);
    CHECK_EQ_INT(host[7], 107);
    CHECK_EQ_INT(cuCtxDestroy(fresh), CUDA_SUCCESS);

    /* Writes just outside a 100-byte allocation, where no guard page is (the rest of its page
     * before it, the gap of less than 256 bytes after it), are faults too; its last byte is
     * not. */
    {
        static const long long offs[] = {99, 100, 155, -1, -3000};
        static const CUresult want[] = {CUDA_SUCCESS, CUDA_ERROR_ILLEGAL_ADDRESS,
                                        CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS,
                                        CUDA_ERROR_ILLEGAL_ADDRESS};
        for (int i = 0; i < 5; i++) {
            CUdeviceptr r;
            long long at = offs[i];
            void *poke_params[] = {&r, &at};
            fresh = new_context(0);
            mod = load_module(&rc);
            REQUIRE(rc == CUDA_SUCCESS);
            CHECK_EQ_INT(cuMemAlloc(&r, 100), CUDA_SUCCESS);
            launch1(function(mod, "poke"), 1, 32, NULL, poke_params, CUDA_SUCCESS);
            CHECK_EQ_INT(cuCtxSynchronize(), want[i]);
            CHECK_EQ_INT(cuCtxDestroy(fresh), CUDA_SUCCESS);
        }
    }
}

static void check_misaligned(void)
{
    CUcontext ctx = new_context(0);
    CUresult rc;
    CUmodule mod = load_module(&rc);
    CUdeviceptr p, out;
    long long off = 1;
    void *params[] = {&p, &off, &out};

    REQUIRE(rc == CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&out, 8), CUDA_SUCCESS);
    launch1(function(mod, "load8"), 1, 1, NULL, params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_ERROR_MISALIGNED_ADDRESS);
    CHECK_EQ_INT(cuMemFree(p), CUDA_ERROR_MISALIGNED_ADDRESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* A kernel's writes to mapped page-locked memory are not visible before the host synchronises,
 * and its parameters are captured at launch. */
static void check_queued_work(void)
{
    CUcontext ctx = new_context(0);
    CUresult rc;
    CUmodule mod = load_module(&rc);
    CUstream s;
    CUevent e0, e1;
    unsigned *host;
    CUdeviceptr dev, d;
    unsigned n = 64, v = 7;
    void *params[] = {&dev, &n, &v};
    float ms;

    REQUIRE(rc == CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostAlloc((void **)&host, n * sizeof *host, CU_MEMHOSTALLOC_DEVICEMAP),
                 CUDA_SUCCESS);
    memset(host, 0, n * sizeof *host);
    CHECK_EQ_INT(cuMemHostGetDevicePointer(&dev, host, 0), CUDA_SUCCESS);
    CHECK(dev == (CUdeviceptr)(uintptr_t)host);
    CHECK_EQ_INT(cuMemHostGetDevicePointer(&dev, host, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventCreate(&e0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventCreate(&e1, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventRecord(e0, s), CUDA_SUCCESS);
    launch1(function(mod, "fill"), 2, 32, s, params, CUDA_SUCCESS);
    v = 1000; /* must not change the queued launch */
    CHECK_EQ_INT(cuEventRecord(e1, s), CUDA_SUCCESS);
    CHECK_EQ_INT(host[5], 0);
    CHECK_EQ_INT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    CHECK_EQ_INT(host[5], 0);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_EQ_INT(host[5], 12);
    CHECK_EQ_INT(host[63], 70);
    CHECK_EQ_INT(cuStreamQuery(s), CUDA_SUCCESS);
    /* Through cuGetProcAddress: the 12.4 build has no cuEventElapsedTime_v2 to link to. */
    {
        CUresult (*elapsed)(float *, CUevent, CUevent) = NULL;
        CHECK_EQ_INT(
            cuGetProcAddress("cuEventElapsedTime", (void **)&elapsed, driver_version, 0, NULL),
            CUDA_SUCCESS);
        REQUIRE(elapsed != NULL);
        CHECK_EQ_INT(elapsed(&ms, e0, e1), CUDA_SUCCESS);
        CHECK(ms >= 0);
    }

    /* An async copy from pageable memory captures the source at the call. */
    {
        unsigned src[4] = {1, 2, 3, 4}, back[4] = {0};
        CHECK_EQ_INT(cuMemAlloc(&d, sizeof src), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemcpyHtoDAsync(d, src, sizeof src, s), CUDA_SUCCESS);
        src[0] = 99;
        CHECK_EQ_INT(cuMemcpyDtoHAsync(back, d, sizeof back, s), CUDA_SUCCESS); /* pageable */
        CHECK_EQ_INT(back[0], 1);
        CHECK_EQ_INT(back[3], 4);
        /* Into page-locked memory it is queued. */
        host[0] = 0;
        CHECK_EQ_INT(cuMemcpyDtoHAsync(host, d, sizeof src, s), CUDA_SUCCESS);
        CHECK_EQ_INT(host[0], 0);
        CHECK_EQ_INT(cuEventRecord(e1, s), CUDA_SUCCESS);
        CHECK_EQ_INT(cuEventSynchronize(e1), CUDA_SUCCESS);
        CHECK_EQ_INT(host[0], 1);
        /* Out of an allocation: refused. */
        CHECK_EQ_INT(cuMemcpyHtoD(d + 8, src, sizeof src), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuMemsetD8(d, 0, sizeof src + 1), CUDA_ERROR_INVALID_VALUE);
    }
    CHECK_EQ_INT(cuStreamDestroy(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuEventDestroy(e0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeHost(host), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

static void check_pointer_attributes(void)
{
    CUcontext ctx = new_context(1);
    CUdeviceptr dev, managed, start;
    void *pinned;
    int on_stack = 0, ordinal = -1;
    unsigned type = 99, is_managed = 99;
    size_t size = 0;
    CUcontext owner = NULL;
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CU_POINTER_ATTRIBUTE_IS_MANAGED,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE,  CU_POINTER_ATTRIBUTE_CONTEXT};
    void *data[] = {&type, &ordinal, &is_managed, &start, &size, &owner};

    CHECK_EQ_INT(cuMemAlloc(&dev, 1000), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocManaged(&managed, 100, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostAlloc(&pinned, 100, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(dev % 256, 0);

    CHECK_EQ_INT(cuPointerGetAttributes(6, attrs, data, dev + 10), CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEMORYTYPE_DEVICE);
    CHECK_EQ_INT(ordinal, 1);
    CHECK_EQ_INT(is_managed, 0);
    CHECK(start == dev);
    CHECK_EQ_INT(size, 1000);
    CHECK(owner == ctx);

    CHECK_EQ_INT(cuPointerGetAttributes(6, attrs, data, managed), CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEMORYTYPE_DEVICE);
    CHECK_EQ_INT(is_managed, 1);
    ((volatile char *)(uintptr_t)managed)[0] = 1; /* managed memory is host-accessible */

    CHECK_EQ_INT(cuPointerGetAttributes(6, attrs, data, (CUdeviceptr)(uintptr_t)pinned + 99),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEMORYTYPE_HOST);
    CHECK_EQ_INT(size, 100);

    /* Unknown memory: the plural form succeeds with every value zero ... */
    CHECK_EQ_INT(cuPointerGetAttributes(6, attrs, data, (CUdeviceptr)(uintptr_t)&on_stack),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(type, 0);
    CHECK_EQ_INT(ordinal, 0);
    CHECK_EQ_INT(size, 0);
    CHECK(owner == NULL);
    /* ... and the singular form refuses it, as it does one past the end. */
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       (CUdeviceptr)(uintptr_t)&on_stack),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev + 1000),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, dev + 999),
                 CUDA_SUCCESS);
    CHECK(start == dev);
    {
        CUdeviceptr base = 0;
        size_t len = 0;
        CHECK_EQ_INT(cuMemGetAddressRange(&base, &len, dev + 5), CUDA_SUCCESS);
        CHECK(base == dev && len == 1000);
    }
    CHECK_EQ_INT(cuMemFree(dev), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dev),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* ---- allocation kinds ------------------------------------------------------------------------ */

/* What cuPointerGetAttributes answers for one pointer. */
typedef struct {
    unsigned type, managed, ipc;
    int ordinal;
    CUdeviceptr start;
    size_t size;
    CUcontext ctx;
    CUmemoryPool pool;
    unsigned long long handles;
} attrs_t;

static attrs_t attrs_of(CUdeviceptr p)
{
    attrs_t a;
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                   CU_POINTER_ATTRIBUTE_CONTEXT,
                                   CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                   CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES};
    void *data[] = {&a.type, &a.managed, &a.ipc,  &a.ordinal, &a.start,
                    &a.size, &a.ctx,     &a.pool, &a.handles};
    memset(&a, 0x5a, sizeof a);
    CHECK_EQ_INT(cuPointerGetAttributes(9, which, data, p), CUDA_SUCCESS);
    return a;
}

/* Launches `poke` (one byte written at @p p) in a new context of device @p dev, as a kernel of a
 * program using that device would: the synchronisation's result. */
static CUresult poke_from(int dev, CUdeviceptr p)
{
    CUcontext ctx = new_context(dev);
    CUresult rc;
    CUmodule mod = load_module(&rc);
    long long off = 0;
    void *params[] = {&p, &off};

    REQUIRE(rc == CUDA_SUCCESS);
    launch1(function(mod, "poke"), 1, 32, NULL, params, CUDA_SUCCESS);
    rc = cuCtxSynchronize();
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    return rc;
}

/* Fills @p n words at @p p with v + i in the current context (on @p s), as `fill` does. */
static void fill_on(CUstream s, CUdeviceptr p, unsigned n, unsigned v)
{
    CUresult rc;
    CUmodule mod = load_module(&rc);
    void *params[] = {&p, &n, &v};
    REQUIRE(rc == CUDA_SUCCESS);
    launch1(function(mod, "fill"), (n + 31) / 32, 32, s, params, CUDA_SUCCESS);
}

/* Whether host code writing device address @p p faults. */
static bool host_touch_faults(CUdeviceptr p)
{
    return child_touch_faults((const void *)(uintptr_t)p, true);
}

/* Stream-ordered pools: the default pool, pointer attributes (no context, the pool, the pool's
 * device), use only between the allocation and the free in stream order, a pool of the other
 * device and its access, a host pool, attributes, the current pool. */
static void check_pools(void)
{
    CUcontext p0, p1;
    CUmemoryPool def0, def1, cur, pool1, user0;
    CUstream s, s2;
    CUdeviceptr p, q, r;
    unsigned host[256];
    attrs_t a;
    int supported = 0;
    cuuint64_t used = 0, high = 1;
    CUmemAccess_flags flags;
    CUmemLocation loc0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUmemPoolProps props;

    CHECK_EQ_INT(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(supported, 1);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&p0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&p1, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(p0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDeviceGetDefaultMemPool(&def0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDeviceGetDefaultMemPool(&def1, 1), CUDA_SUCCESS);
    CHECK(def0 != NULL && def1 != NULL && def0 != def1);
    CHECK_EQ_INT(cuDeviceGetMemPool(&cur, 0), CUDA_SUCCESS);
    CHECK(cur == def0);
    CHECK_EQ_INT(cuDeviceGetDefaultMemPool(&cur, 3), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ_INT(cuMemPoolDestroy(def0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemPoolGetAccess(&flags, def0, &loc0), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    /* The default pool: usable in stream order, answered as no context's. */
    CHECK_EQ_INT(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&p, sizeof host, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&q, 0, s), CUDA_ERROR_INVALID_VALUE);
    a = attrs_of(p + 8);
    CHECK_EQ_INT(a.type, CU_MEMORYTYPE_DEVICE);
    CHECK(a.ctx == NULL);
    CHECK(a.pool == def0);
    CHECK_EQ_INT(a.ordinal, 0);
    CHECK(a.start == p && a.size == sizeof host);
    CHECK_EQ_INT(a.managed, 0);
    CHECK_EQ_INT(a.ipc, 0);
    CHECK_EQ_INT(a.handles, 0);
    {
        void *hp;
        CUdeviceptr base = 0;
        size_t len = 0;
        CHECK_EQ_INT(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, p),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuMemGetAddressRange(&base, &len, p + 100), CUDA_SUCCESS);
        CHECK(base == p && len == sizeof host);
    }
    fill_on(s, p, 256, 10);
    CHECK_EQ_INT(cuMemcpyDtoH(host, p, sizeof host), CUDA_SUCCESS);
    CHECK_EQ_INT(host[255], 265);
    CHECK(host_touch_faults(p));
    CHECK_EQ_INT(cuMemPoolGetAttribute(def0, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(used, sizeof host);
    CHECK_EQ_INT(cuMemPoolSetAttribute(def0, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &high),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemFreeAsync(p, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeAsync(p, s), CUDA_ERROR_INVALID_VALUE); /* twice */
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&a.type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(poke_from(0, p), CUDA_ERROR_ILLEGAL_ADDRESS); /* after the free */

    /* Work queued after cuMemFreeAsync faults though it runs before the stream reaches the free;
     * work that runs before the stream reaches the allocation faults too. */
    {
        CUcontext c = new_context(0);
        CUstream t, t2;
        CHECK_EQ_INT(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        CHECK_EQ_INT(cuStreamCreate(&t2, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemAllocAsync(&q, 64, t), CUDA_SUCCESS);
        CHECK_EQ_INT(cuStreamSynchronize(t), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemFreeAsync(q, t), CUDA_SUCCESS);
        fill_on(t2, q, 16, 0);
        CHECK_EQ_INT(cuStreamSynchronize(t2), CUDA_ERROR_ILLEGAL_ADDRESS);
        CHECK_EQ_INT(cuCtxDestroy(c), CUDA_SUCCESS);
        c = new_context(0);
        CHECK_EQ_INT(cuStreamCreate(&t, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        CHECK_EQ_INT(cuStreamCreate(&t2, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemAllocAsync(&q, 64, t), CUDA_SUCCESS);
        fill_on(t2, q, 16, 0);
        CHECK_EQ_INT(cuStreamSynchronize(t2), CUDA_ERROR_ILLEGAL_ADDRESS);
        CHECK_EQ_INT(cuCtxDestroy(c), CUDA_SUCCESS);
        /* The context went; its pool memory stays (no context's) and the queued allocation was
         * completed: it is freed with cuMemFree. */
        CHECK_EQ_INT(attrs_of(q).size, 64);
        CHECK_EQ_INT(cuMemFree(q), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemFree(q), CUDA_ERROR_INVALID_VALUE);
    }

    /* A pool of device 2 (sm_90, device 0's peer), allocated on a stream of device 0: device 2's
     * memory, touchable by device 0 only once granted. Device 1 (sm_86) is no peer of either. */
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 2;
    CHECK_EQ_INT(cuMemPoolCreate(&pool1, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&r, 4096, pool1, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    a = attrs_of(r);
    CHECK_EQ_INT(a.ordinal, 2);
    CHECK(a.pool == pool1 && a.ctx == NULL);
    CHECK_EQ_INT(poke_from(2, r), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(0, r), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemsetD8(r, 0, 16), CUDA_ERROR_INVALID_VALUE); /* device 0 may not */
    CHECK_EQ_INT(cuMemPoolGetAccess(&flags, pool1, &loc0), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    {
        CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CUmemAccessDesc own = {{CU_MEM_LOCATION_TYPE_DEVICE, 2}, CU_MEM_ACCESS_FLAGS_PROT_NONE};
        CUmemAccessDesc d1 = {{CU_MEM_LOCATION_TYPE_DEVICE, 1}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CHECK_EQ_INT(cuMemPoolSetAccess(pool1, &own, 1), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuMemPoolSetAccess(pool1, &d1, 1), CUDA_ERROR_INVALID_VALUE); /* no peer */
        CHECK_EQ_INT(cuMemPoolSetAccess(pool1, &d, 1), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuMemPoolGetAccess(&flags, pool1, &loc0), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK_EQ_INT(poke_from(0, r), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(1, r), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemsetD8(r, 3, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(host, r, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(host[0], 0x03030303);
    /* Device 0's default pool memory is another device's kernels' to touch only if granted. */
    CHECK_EQ_INT(cuMemAllocAsync(&q, 64, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(2, q), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(poke_from(0, q), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeAsync(q, s), CUDA_SUCCESS);
    /* A pool with allocations outstanding is destroyed when they are freed. */
    CHECK_EQ_INT(cuMemPoolDestroy(pool1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&q, 64, pool1, s), CUDA_ERROR_INVALID_VALUE);
    CHECK(attrs_of(r).pool == pool1);
    CHECK_EQ_INT(cuMemFreeAsync(r, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);

    /* A user pool made current for device 0; destroying it makes the default current again. */
    props.location.id = 0;
    props.maxSize = 8192;
    CHECK_EQ_INT(cuMemPoolCreate(&user0, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDeviceSetMemPool(1, user0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuDeviceSetMemPool(0, user0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&q, 4096, s), CUDA_SUCCESS);
    CHECK(attrs_of(q).pool == user0);
    CHECK_EQ_INT(cuMemAllocAsync(&r, 8192, s), CUDA_ERROR_OUT_OF_MEMORY); /* maxSize */
    CHECK_EQ_INT(cuMemPoolDestroy(user0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDeviceGetMemPool(&cur, 0), CUDA_SUCCESS);
    CHECK(cur == def0);
    CHECK_EQ_INT(cuMemFreeAsync(q, s), CUDA_SUCCESS);

    /* A pool on host NUMA node 0: host memory, no context's and no device's, the host's once the
     * stream reached the allocation, a device's once granted. */
    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA;
    props.location.id = 1;
    CHECK_EQ_INT(cuMemPoolCreate(&user0, &props), CUDA_ERROR_INVALID_VALUE); /* one node */
    props.location.id = 0;
    CHECK_EQ_INT(cuMemPoolCreate(&user0, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&q, 64, user0, s), CUDA_SUCCESS);
    CHECK(host_touch_faults(q)); /* not yet allocated in stream order */
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK(!host_touch_faults(q));
    a = attrs_of(q);
    CHECK_EQ_INT(a.type, CU_MEMORYTYPE_HOST);
    CHECK_EQ_INT(a.ordinal, CU_DEVICE_CPU);
    CHECK(a.ctx == NULL && a.pool == user0);
    CHECK_EQ_INT(cuMemsetD8(q, 1, 64), CUDA_ERROR_INVALID_VALUE); /* no device access yet */
    {
        CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CHECK_EQ_INT(cuMemPoolSetAccess(user0, &d, 1), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuMemsetD8(q, 1, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_EQ_INT(((volatile unsigned char *)(uintptr_t)q)[63], 1);
    CHECK_EQ_INT(cuMemFreeAsync(q, s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemPoolDestroy(user0), CUDA_SUCCESS);
    /* A host pool (not NUMA) is 13.0's, and never shareable. */
    props.location.type = CU_MEM_LOCATION_TYPE_HOST;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_EQ_INT(cuMemPoolCreate(&user0, &props), CUDA_ERROR_INVALID_VALUE);
    props.handleTypes = 0;
    CHECK_EQ_INT(cuMemPoolCreate(&user0, &props),
                 driver_version >= 13000 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
    if (driver_version >= 13000) {
        CUresult (*get_default)(CUmemoryPool *, CUmemLocation *, CUmemAllocationType);
        CUmemLocation on_host = {CU_MEM_LOCATION_TYPE_HOST, 0};
        CUmemoryPool hp;
        *(void **)&get_default = dlsym(RTLD_DEFAULT, "cuMemGetDefaultMemPool");
        REQUIRE(get_default != NULL);
        CHECK_EQ_INT(get_default(&cur, &loc0, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
        CHECK(cur == def0);
        CHECK_EQ_INT(get_default(&cur, &loc0, CU_MEM_ALLOCATION_TYPE_MANAGED),
                     CUDA_ERROR_NOT_SUPPORTED);
        CHECK_EQ_INT(get_default(&hp, &on_host, CU_MEM_ALLOCATION_TYPE_PINNED), CUDA_SUCCESS);
        CHECK(hp != def0 && hp != user0);
        CHECK_EQ_INT(cuMemPoolDestroy(user0), CUDA_SUCCESS);
    } else {
        CHECK(dlsym(RTLD_DEFAULT, "cuMemGetDefaultMemPool") == NULL);
    }

    /* A stream of another context stands for its device without being current. */
    CHECK_EQ_INT(cuCtxSetCurrent(p1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamCreate(&s2, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&q, 64, NULL), CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuMemAllocAsync(&q, 64, s2), CUDA_SUCCESS);
    CHECK(attrs_of(q).pool == def1);
    CHECK_EQ_INT(cuMemFreeAsync(q, s2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(p1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamDestroy(s2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(p0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamDestroy(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

/* @p h mapped at fresh address space of @p size bytes (its access not set yet). */
static CUdeviceptr vmm_map(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr va = 0;
    CHECK_EQ_INT(cuMemAddressReserve(&va, size, 0, 0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemMap(va, size, 0, h, 0), CUDA_SUCCESS);
    return va;
}

/* Undoes vmm_map and releases @p h. */
static void vmm_unmap(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
    CHECK_EQ_INT(cuMemUnmap(va, size), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemRelease(h), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAddressFree(va, size), CUDA_SUCCESS);
}

/* Virtual memory management: a mapping answers as no context's, device or host memory of its
 * location, inaccessible to any device (and the host) until cuMemSetAccess grants it; one
 * allocation mapped twice; reservations, handles, properties and a shareable handle. */
static void check_vmm(void)
{
    CUcontext p0;
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h, h2, again;
    CUdeviceptr va, va2;
    size_t gran = 0;
    attrs_t a;
    unsigned mapped = 9, type;
    unsigned long long flags = 9, id1 = 1, id2 = 2;
    unsigned char host[64];
    CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0},
                  numa = {CU_MEM_LOCATION_TYPE_HOST_NUMA, 0};
    CUmemAccessDesc rw0 = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&p0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(p0), CUDA_SUCCESS);
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location = dev0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_EQ_INT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(gran, 2 << 20);
    CHECK_EQ_INT(cuMemCreate(&h, gran / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAddressReserve(&va, 3 * gran, 0, 0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(va % gran, 0);
    CHECK_EQ_INT(cuMemMap(va + 8192, gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemMap(va, gran, 0, h, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemMap(va, gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE); /* mapped already */

    /* Device memory of device 0, no context's; the range is the reservation. */
    a = attrs_of(va + 5);
    CHECK_EQ_INT(a.type, CU_MEMORYTYPE_DEVICE);
    CHECK(a.ctx == NULL && a.pool == NULL);
    CHECK_EQ_INT(a.ordinal, 0);
    CHECK(a.start == va && a.size == 3 * gran);
    CHECK_EQ_INT(a.handles, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CHECK_EQ_INT(a.ipc, 0);
    {
        CUdeviceptr base = 0;
        size_t len = 0;
        CHECK_EQ_INT(cuMemGetAddressRange(&base, &len, va + 5), CUDA_SUCCESS);
        CHECK(base == va && len == gran); /* the mapping */
    }
    CHECK_EQ_INT(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va), CUDA_SUCCESS);
    CHECK_EQ_INT(mapped, 1);
    CHECK_EQ_INT(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va + gran),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(mapped, 0); /* reserved, not mapped */
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + gran),
                 CUDA_ERROR_INVALID_VALUE);
    {
        unsigned one = 1;
        CHECK_EQ_INT(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, va),
                     CUDA_ERROR_NOT_SUPPORTED);
    }
    CHECK_EQ_INT(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(va + 100)), CUDA_SUCCESS);
    CHECK(again == h);
    CHECK_EQ_INT(cuMemRelease(again), CUDA_SUCCESS);
    {
        CUdeviceptr d;
        CHECK_EQ_INT(cuMemAlloc(&d, 64), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)d),
                     CUDA_ERROR_INVALID_VALUE); /* not VMM memory */
        CHECK_EQ_INT(cuMemFree(d), CUDA_SUCCESS);
    }
    {
        CUmemAllocationProp got;
        CHECK_EQ_INT(cuMemGetAllocationPropertiesFromHandle(&got, h), CUDA_SUCCESS);
        CHECK_EQ_INT(got.location.type, CU_MEM_LOCATION_TYPE_DEVICE);
        CHECK_EQ_INT(got.location.id, 0);
    }

    /* No device may touch it before cuMemSetAccess, nor the host ever. */
    CHECK_EQ_INT(cuMemGetAccess(&flags, &dev0, va), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CHECK_EQ_INT(poke_from(0, va), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemsetD8(va, 1, 64), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemSetAccess(va, gran + 4096, &rw0, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemSetAccess(va, gran, &rw0, 0), CUDA_ERROR_INVALID_VALUE);
    {
        CUmemAccessDesc host_rw = {numa, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CHECK_EQ_INT(cuMemSetAccess(va, gran, &host_rw, 1), CUDA_ERROR_INVALID_VALUE);
    }
    CHECK_EQ_INT(cuMemSetAccess(va, gran, &rw0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemGetAccess(&flags, &dev0, va), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK_EQ_INT(poke_from(0, va), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(1, va), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK(host_touch_faults(va));

    /* The same allocation mapped a second time: one memory, two addresses. */
    CHECK_EQ_INT(cuMemMap(va + 2 * gran, gran, 0, h, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemSetAccess(va + 2 * gran, gran, &rw0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemsetD8(va + 10, 0x42, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(host, va + 2 * gran, sizeof host), CUDA_SUCCESS);
    CHECK_EQ_INT(host[10], 0x42);
    CHECK_EQ_INT(host[9], 0xCD); /* fresh memory */
    CHECK_EQ_INT(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, va),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, va + 2 * gran),
                 CUDA_SUCCESS);
    CHECK(id1 == id2);

    /* Shared as a POSIX file descriptor and imported back: the same memory. */
    {
        int fd = -1;
        CUdeviceptr va3;
        CHECK_EQ_INT(
            cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemImportFromShareableHandle(&h2, (void *)(uintptr_t)fd,
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                     CUDA_SUCCESS);
        close(fd);
        CHECK(h2 != h);
        va3 = vmm_map(h2, gran);
        CHECK_EQ_INT(cuMemRelease(h2), CUDA_SUCCESS); /* the mapping keeps it */
        CHECK_EQ_INT(cuMemSetAccess(va3, gran, &rw0, 1), CUDA_SUCCESS);
        memset(host, 0, sizeof host);
        CHECK_EQ_INT(cuMemcpyDtoH(host, va3, sizeof host), CUDA_SUCCESS);
        CHECK_EQ_INT(host[10], 0x42);
        CHECK_EQ_INT(cuMemUnmap(va3, gran), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemAddressFree(va3, gran), CUDA_SUCCESS);
    }

    /* Released while mapped: the memory stays until the last mapping goes; unmapped addresses
     * fault again and answer MAPPED 0. */
    CHECK_EQ_INT(cuMemRelease(h), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemRelease(h), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemcpyDtoH(host, va, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemUnmap(va, gran / 2), CUDA_ERROR_INVALID_VALUE);       /* part of a mapping */
    CHECK_EQ_INT(cuMemAddressFree(va, 3 * gran), CUDA_ERROR_INVALID_VALUE); /* still mapped */
    CHECK_EQ_INT(cuMemUnmap(va, gran), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemUnmap(va + 2 * gran, gran), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va), CUDA_SUCCESS);
    CHECK_EQ_INT(mapped, 0);
    CHECK_EQ_INT(poke_from(0, va), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemAddressFree(va, 3 * gran), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, va),
                 CUDA_ERROR_INVALID_VALUE);

    /* Memory on host NUMA node 0: HOST, no device's; the host may touch it only once granted, a
     * device only once granted. */
    prop.location = numa;
    prop.requestedHandleTypes = 0;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    va2 = vmm_map(h, gran);
    a = attrs_of(va2);
    CHECK_EQ_INT(a.type, CU_MEMORYTYPE_HOST);
    CHECK_EQ_INT(a.ordinal, CU_DEVICE_CPU);
    CHECK(a.ctx == NULL);
    CHECK(host_touch_faults(va2));
    {
        CUmemAccessDesc host_rw = {numa, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        void *hp = NULL;
        CHECK_EQ_INT(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, va2),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuMemSetAccess(va2, gran, &host_rw, 1), CUDA_SUCCESS);
        CHECK(!host_touch_faults(va2));
        CHECK_EQ_INT(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, va2),
                     CUDA_SUCCESS);
        CHECK(hp == (void *)(uintptr_t)va2);
        CHECK_EQ_INT(cuMemGetAccess(&flags, &numa, va2), CUDA_SUCCESS);
        CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    }
    CHECK_EQ_INT(cuMemsetD8(va2, 5, 16), CUDA_ERROR_INVALID_VALUE); /* no device yet */
    CHECK_EQ_INT(cuMemSetAccess(va2, gran, &rw0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemsetD8(va2, 5, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_EQ_INT(((volatile unsigned char *)(uintptr_t)va2)[15], 5);
    vmm_unmap(va2, gran, h);
    prop.location.id = 1;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_ERROR_INVALID_VALUE); /* one node */
    /* The host location (13.0), never shareable. */
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    prop.requestedHandleTypes = 0;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0),
                 driver_version >= 13000 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
    if (driver_version >= 13000)
        CHECK_EQ_INT(cuMemRelease(h), CUDA_SUCCESS);

    /* Device 2's memory: device 0's kernels (a peer) touch it once granted, device 1's (no peer)
     * cannot be granted it; a read-only grant faults a write. */
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 2;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    va2 = vmm_map(h, gran);
    CHECK_EQ_INT(attrs_of(va2).ordinal, 2);
    CHECK_EQ_INT(cuMemSetAccess(va2, gran, &rw0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(0, va2), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(2, va2), CUDA_ERROR_ILLEGAL_ADDRESS);
    {
        CUmemAccessDesc rw1 = {{CU_MEM_LOCATION_TYPE_DEVICE, 1},
                               CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CUmemAccessDesc ro2 = {{CU_MEM_LOCATION_TYPE_DEVICE, 2}, CU_MEM_ACCESS_FLAGS_PROT_READ};
        CHECK_EQ_INT(cuMemSetAccess(va2, gran, &rw1, 1), CUDA_ERROR_INVALID_DEVICE);
        CHECK_EQ_INT(cuMemSetAccess(va2, gran, &ro2, 1), CUDA_SUCCESS);
        CHECK_EQ_INT(poke_from(2, va2), CUDA_ERROR_ILLEGAL_ADDRESS); /* read only */
        CHECK_EQ_INT(cuMemGetAccess(&flags, &ro2.location, va2), CUDA_SUCCESS);
        CHECK_EQ_INT(flags, CU_MEM_ACCESS_FLAGS_PROT_READ);
    }
    vmm_unmap(va2, gran, h);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

/* Managed memory: advice and prefetches in both forms, remembered per page for
 * cuMemRangeGetAttribute; kernels and the host touch it after any of them; pageable memory is no
 * device's to advise about unless FAKECUDA_PAGEABLE says devices reach it. */
static void check_managed(void)
{
    CUcontext ctx = new_context(0);
    CUdeviceptr m, d;
    CUmemLocation dev1 = {CU_MEM_LOCATION_TYPE_DEVICE, 1}, host = {CU_MEM_LOCATION_TYPE_HOST, 0};
    CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0}, bad = {CU_MEM_LOCATION_TYPE_DEVICE, 7};
    int value = 99, by[4];
    CUmemLocationType type = CU_MEM_LOCATION_TYPE_INVALID;
    size_t page = 4096;
    static char pageable[8192];
    CUresult (*advise_v1)(CUdeviceptr, size_t, CUmem_advise, CUdevice);
    CUresult (*prefetch_v1)(CUdeviceptr, size_t, CUdevice, CUstream);
    void *fn = NULL;

    CHECK_EQ_INT(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, 0);
    CHECK_EQ_INT(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, 1);
    *(void **)&advise_v1 = dlsym(RTLD_DEFAULT, "cuMemAdvise");
    *(void **)&prefetch_v1 = dlsym(RTLD_DEFAULT, "cuMemPrefetchAsync");
    REQUIRE(advise_v1 != NULL && prefetch_v1 != NULL);
    CHECK_EQ_INT(cuGetProcAddress("cuMemAdvise", &fn, 12020, 0, NULL), CUDA_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuMemAdvise_v2"));
    CHECK_EQ_INT(cuGetProcAddress("cuMemAdvise", &fn, 11000, 0, NULL), CUDA_SUCCESS);
    CHECK(fn == (void *)advise_v1);

    CHECK_EQ_INT(cuMemAllocManaged(&m, 3 * page, CU_MEM_ATTACH_GLOBAL), CUDA_SUCCESS);
    /* Nothing asked yet. */
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 3 * page),
        CUDA_SUCCESS);
    CHECK_EQ_INT(value, CU_DEVICE_INVALID);
    /* A preferred location on the first page: the range disagrees, the page does not. */
    CHECK_EQ_INT(cuMemAdvise(m, 100, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev1), CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 3 * page),
        CUDA_SUCCESS);
    CHECK_EQ_INT(value, CU_DEVICE_INVALID);
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m + 8, 16),
        CUDA_SUCCESS);
    CHECK_EQ_INT(value, 1);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&type, sizeof type,
                                        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, m, page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(&value, 3, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, page),
        CUDA_ERROR_INVALID_VALUE);
    /* The 8.0 form: CU_DEVICE_CPU is the host. */
    CHECK_EQ_INT(advise_v1(m + page, 2 * page, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, CU_DEVICE_CPU),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                        m + page, 2 * page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, CU_DEVICE_CPU);
    CHECK_EQ_INT(advise_v1(m, page, CU_MEM_ADVISE_SET_ACCESSED_BY, 5), CUDA_ERROR_INVALID_DEVICE);
    CHECK_EQ_INT(cuMemAdvise(m, page, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, bad),
                 CUDA_ERROR_INVALID_DEVICE);
    /* Accessed by device 0 and the host over the whole range, read mostly over a part. */
    CHECK_EQ_INT(cuMemAdvise(m, 3 * page, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAdvise(m, 3 * page, CU_MEM_ADVISE_SET_ACCESSED_BY, host), CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(by, sizeof by, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, m, 3 * page),
        CUDA_SUCCESS);
    CHECK(by[0] == 0 && by[1] == CU_DEVICE_CPU && by[2] == CU_DEVICE_INVALID);
    CHECK_EQ_INT(cuMemAdvise(m, page, CU_MEM_ADVISE_SET_READ_MOSTLY, host), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, 1);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 2 * page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, 0);
    /* Prefetches: the last location asked for, in both forms. */
    CHECK_EQ_INT(cuMemPrefetchAsync(m, 3 * page, host, 0, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m,
                                        3 * page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, CU_DEVICE_CPU);
    CHECK_EQ_INT(prefetch_v1(m, page, 0, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, page),
        CUDA_SUCCESS);
    CHECK_EQ_INT(value, 0);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&type, sizeof type,
                                        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, m,
                                        3 * page),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEM_LOCATION_TYPE_INVALID);
    CHECK_EQ_INT(cuMemPrefetchAsync(m, page, dev0, 1, NULL), CUDA_ERROR_INVALID_VALUE);
    /* Kernels and the host use it all along. */
    fill_on(NULL, m, 3 * 1024, 5);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_EQ_INT(((volatile unsigned *)(uintptr_t)m)[3 * 1024 - 1], 5 + 3 * 1024 - 1);
    /* Other memory is no managed memory. */
    CHECK_EQ_INT(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAdvise(d, 64, CU_MEM_ADVISE_SET_READ_MOSTLY, dev0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemRangeGetAttribute(&value, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, d, 64),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemAdvise((CUdeviceptr)(uintptr_t)pageable, sizeof pageable,
                             CU_MEM_ADVISE_SET_ACCESSED_BY, dev0),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* The child run with FAKECUDA_PAGEABLE=1: devices report pageable memory access, and pageable
 * memory may be advised about and prefetched. */
static int pageable_child(void)
{
    static char pageable[8192];
    int value = 0;
    CUmemLocation dev0 = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
    CUcontext ctx = new_context(0);

    CHECK_EQ_INT(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 1),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(value, 1);
    CHECK_EQ_INT(cuMemAdvise((CUdeviceptr)(uintptr_t)pageable, sizeof pageable,
                             CU_MEM_ADVISE_SET_ACCESSED_BY, dev0),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuMemPrefetchAsync((CUdeviceptr)(uintptr_t)pageable, sizeof pageable, dev0, 0, NULL),
        CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    return check_failures ? 1 : 0;
}

static int run_child(const char *self, const char *mode, const char *var, const char *value,
                     char *log);

static void check_pageable(const char *self)
{
    char log[] = "/tmp/test_fakecuda_pageable_XXXXXX";
    int status = run_child(self, "pageable", "FAKECUDA_PAGEABLE", "1", log);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (check_failures)
        fprintf(stderr, "the pageable child's stderr is in %s\n", log);
    else
        unlink(log);
}

static bool host_fn_ran;

static void host_fn(void *data)
{
    host_fn_ran = data == &host_fn_ran;
}

/* Several devices: cuMemAlloc memory is its context's alone, and its peers' (same major compute
 * capability) once they enable access; cuMemcpyPeer between contexts; memory accounting, stream
 * and context queries, host functions in stream order. */
static void check_devices(void)
{
    CUcontext a0, b0, c2, d1;
    CUdeviceptr p, q, r;
    int can = 9, least = 9, greatest = 9, priority = 9;
    size_t free0 = 0, free1 = 0, total = 0;
    unsigned flags = 9, back[4] = {0}, src[4] = {1, 2, 3, 4};
    CUstream s;
    CUcontext got;
    CUuuid u0, u2;
    char bus[32];

    CHECK_EQ_INT(cuDeviceCanAccessPeer(&can, 0, 2), CUDA_SUCCESS);
    CHECK_EQ_INT(can, 1);
    CHECK_EQ_INT(cuDeviceCanAccessPeer(&can, 0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(can, 0); /* sm_90 and sm_86 */
    CHECK_EQ_INT(cuDeviceCanAccessPeer(&can, 2, 2), CUDA_SUCCESS);
    CHECK_EQ_INT(can, 0);
    CHECK_EQ_INT(cuDeviceGetUuid(&u0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDeviceGetUuid(&u2, 2), CUDA_SUCCESS);
    CHECK(memcmp(&u0, &u2, sizeof u0) != 0);
    CHECK_EQ_INT(cuDeviceGetPCIBusId(bus, sizeof bus, 2), CUDA_SUCCESS);
    CHECK(strcmp(bus, "0000:03:00.0") == 0);

    /* cuMemAlloc memory: its context's, not another context's of the same device or another. */
    a0 = new_context(0);
    CHECK_EQ_INT(cuMemGetInfo(&free0, &total), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 1 << 20), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemGetInfo(&free1, &total), CUDA_SUCCESS);
    CHECK_EQ_INT(free0 - free1, 1 << 20);
    CHECK_EQ_INT(poke_from(0, p), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(poke_from(2, p), CUDA_ERROR_ILLEGAL_ADDRESS);
    /* A peer context that enabled access reaches it; access is one way. */
    c2 = new_context(2);
    CHECK_EQ_INT(cuMemsetD8(p, 0, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxEnablePeerAccess(a0, 1), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxEnablePeerAccess(c2, 0), CUDA_ERROR_INVALID_CONTEXT); /* itself */
    CHECK_EQ_INT(cuCtxEnablePeerAccess(a0, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxEnablePeerAccess(a0, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
    CHECK_EQ_INT(cuMemsetD8(p, 7, 16), CUDA_SUCCESS);
    fill_on(NULL, p, 4, 40);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&r, 64), CUDA_SUCCESS); /* c2's */
    CHECK_EQ_INT(cuCtxPopCurrent(&got), CUDA_SUCCESS);
    CHECK(got == c2);
    CHECK_EQ_INT(cuMemcpyDtoH(back, p, sizeof back), CUDA_SUCCESS);
    CHECK_EQ_INT(back[3], 43);
    CHECK_EQ_INT(cuMemsetD8(r, 0, 16), CUDA_ERROR_INVALID_VALUE); /* not the other way */
    /* Two contexts of one device, and devices of different majors, are no peers. */
    b0 = new_context(0);
    CHECK_EQ_INT(cuCtxEnablePeerAccess(a0, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    CHECK_EQ_INT(cuCtxDestroy(b0), CUDA_SUCCESS);
    d1 = new_context(1);
    CHECK_EQ_INT(cuCtxEnablePeerAccess(a0, 0), CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
    /* cuMemcpyPeer moves bytes between any two contexts' memory. */
    CHECK_EQ_INT(cuMemAlloc(&q, sizeof src), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyHtoD(q, src, sizeof src), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyPeer(p, a0, q, d1, sizeof src), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyPeer(p, d1, q, d1, sizeof src), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS); /* asynchronous to the host */
    CHECK_EQ_INT(cuCtxDestroy(d1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(back, p, sizeof back), CUDA_SUCCESS);
    CHECK_EQ_INT(back[2], 3);
    /* A peer's access ends with the context it was enabled for. */
    CHECK_EQ_INT(cuCtxPushCurrent(c2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDisablePeerAccess(a0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDisablePeerAccess(a0), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
    CHECK_EQ_INT(cuMemsetD8(p, 0, 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxDestroy(c2), CUDA_SUCCESS);

    /* Pitched memory, 16- and 32-bit and 2-D memsets, the one settable pointer attribute. */
    {
        CUdeviceptr pitched;
        size_t pitch = 0;
        unsigned words[4] = {0}, sync = 0, one = 1;
        unsigned short halves[4] = {0};
        CHECK_EQ_INT(cuMemAllocPitch(&pitched, &pitch, 100, 3, 4), CUDA_SUCCESS);
        CHECK_EQ_INT(pitch, 512);
        CHECK_EQ_INT(attrs_of(pitched).size, 3 * 512);
        CHECK_EQ_INT(cuMemAllocPitch(&q, &pitch, 100, 3, 3), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuMemsetD2D32(pitched, pitch, 0x01020304, 4, 3), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemsetD16(pitched + 2 * pitch, 0xBEEF, 2), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemsetD32(pitched + 2, 0, 1), CUDA_ERROR_INVALID_VALUE); /* misaligned */
        CHECK_EQ_INT(cuMemcpyDtoH(words, pitched + pitch, sizeof words), CUDA_SUCCESS);
        CHECK_EQ_INT(words[3], 0x01020304);
        CHECK_EQ_INT(cuMemcpyDtoH(halves, pitched + 2 * pitch, sizeof halves), CUDA_SUCCESS);
        CHECK(halves[1] == 0xBEEF && halves[2] == 0x0304);
        CHECK_EQ_INT(cuPointerSetAttribute(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, pitched),
                     CUDA_SUCCESS);
        CHECK_EQ_INT(cuPointerGetAttribute(&sync, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, pitched + 4),
                     CUDA_SUCCESS);
        CHECK_EQ_INT(sync, 1);
        CHECK_EQ_INT(cuMemFree(pitched), CUDA_SUCCESS);
    }

    /* 3-D copies: a box of 5 x 3 x 2 bytes from pageable memory into pitched memory of 3 slices
     * of 4 rows at (1, 1, 1), every byte of the allocation read back with one 3-D copy; the
     * pitch (a multiple of the texture pitch alignment), slice and position rules. */
    {
        enum { W = 5, H = 3, D = 2, ROWS = 4, SLICES = 3 };
        CUdeviceptr box;
        CUstream cs;
        size_t pitch = 0;
        unsigned char box_src[D][H][W], *all;
        int align = 0;
        CUDA_MEMCPY3D c;
        CUDA_MEMCPY2D c2d;
        for (int z = 0; z < D; z++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    box_src[z][y][x] = (unsigned char)(1 + x + 10 * y + 100 * z);
        CHECK_EQ_INT(cuDeviceGetAttribute(&align, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 0),
                     CUDA_SUCCESS);
        CHECK_EQ_INT(align, 32);
        CHECK_EQ_INT(cuMemAllocPitch(&box, &pitch, 40, ROWS * SLICES, 16), CUDA_SUCCESS);
        CHECK(pitch >= 40 && pitch % (size_t)align == 0);
        CHECK(host_touch_faults(box + 40)); /* the padding is device memory */
        REQUIRE((all = malloc(pitch * ROWS * SLICES)) != NULL);
        CHECK_EQ_INT(cuMemsetD8(box, 0xee, pitch * ROWS * SLICES), CUDA_SUCCESS);
        memset(&c, 0, sizeof c);
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = box_src;
        c.srcPitch = W;
        c.srcHeight = H;
        c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c.dstDevice = box;
        c.dstXInBytes = c.dstY = c.dstZ = 1;
        c.dstPitch = pitch;
        c.dstHeight = ROWS;
        c.WidthInBytes = W;
        c.Height = H;
        c.Depth = D;
        /* Queued from pageable memory (after the memset: a blocking stream): the source is taken
         * at the call. */
        CHECK_EQ_INT(cuStreamCreate(&cs, CU_STREAM_DEFAULT), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemcpy3DAsync(&c, cs), CUDA_SUCCESS);
        box_src[0][0][0] = 0;
        CHECK_EQ_INT(cuStreamSynchronize(cs), CUDA_SUCCESS);
        box_src[0][0][0] = 1;
        memset(&c, 0, sizeof c);
        c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c.srcDevice = box;
        c.srcPitch = c.dstPitch = pitch;
        c.srcHeight = c.dstHeight = ROWS;
        c.dstMemoryType = CU_MEMORYTYPE_HOST;
        c.dstHost = all;
        c.WidthInBytes = pitch;
        c.Height = ROWS;
        c.Depth = SLICES;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_SUCCESS);
        for (size_t z = 0, bad = 0; z < SLICES; z++)
            for (size_t y = 0; y < ROWS; y++)
                for (size_t x = 0; x < pitch; x++) {
                    bool in = x >= 1 && x < 1 + W && y >= 1 && y < 1 + H && z >= 1 && z < 1 + D;
                    unsigned char want = in ? box_src[z - 1][y - 1][x - 1] : 0xee;
                    if (all[(z * ROWS + y) * pitch + x] != want && bad++ == 0)
                        CHECK(!"cuMemcpy3D bytes");
                }
        /* One row and one slice need no pitch or slice height; more need room for the box. */
        c.WidthInBytes = 1;
        c.Height = c.Depth = 1;
        c.srcPitch = c.dstPitch = 0;
        c.srcHeight = c.dstHeight = 0;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_SUCCESS);
        c.srcPitch = c.dstPitch = pitch;
        c.srcHeight = c.dstHeight = ROWS;
        c.Height = c.Depth = 2;
        c.srcXInBytes = pitch;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE); /* pitch < x + width */
        c.srcXInBytes = 0;
        c.srcY = ROWS - 1;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE); /* height < y + Height */
        c.srcY = 0;
        c.srcZ = SLICES - 1;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE); /* past the allocation */
        c.srcZ = 0;
        c.srcLOD = 1;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
        c.srcLOD = 0;
        c.reserved1 = all;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
        c.reserved1 = NULL;
        c.srcPitch = (size_t)2147483647 + 1;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE);
        c.srcPitch = pitch;
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE); /* no arrays */
        c.srcMemoryType = CU_MEMORYTYPE_HOST;
        c.srcHost = all;
        c.dstMemoryType = CU_MEMORYTYPE_HOST;
        c.dstHost = (void *)(uintptr_t)box;
        CHECK_EQ_INT(cuMemcpy3D(&c), CUDA_ERROR_INVALID_VALUE); /* device memory as host memory */
        CHECK_EQ_INT(cuMemcpy3D(NULL), CUDA_ERROR_INVALID_VALUE);
        /* cuMemcpy2D: the pitch holds the x position too. */
        memset(&c2d, 0, sizeof c2d);
        c2d.srcMemoryType = CU_MEMORYTYPE_HOST;
        c2d.srcHost = all;
        c2d.srcPitch = pitch;
        c2d.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c2d.dstDevice = box;
        c2d.dstPitch = pitch;
        c2d.dstXInBytes = pitch - 8;
        c2d.WidthInBytes = 8;
        c2d.Height = 2;
        CHECK_EQ_INT(cuMemcpy2D(&c2d), CUDA_SUCCESS);
        c2d.WidthInBytes = 9;
        CHECK_EQ_INT(cuMemcpy2D(&c2d), CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuStreamDestroy(cs), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemFree(box), CUDA_SUCCESS);
        free(all);
    }

    /* Streams and contexts answer what they were made with; a host function runs in stream
     * order, when the host observes the stream. */
    CHECK_EQ_INT(cuCtxGetStreamPriorityRange(&least, &greatest), CUDA_SUCCESS);
    CHECK(least == 0 && greatest < 0);
    CHECK_EQ_INT(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, -100), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamGetPriority(s, &priority), CUDA_SUCCESS);
    CHECK_EQ_INT(priority, greatest);
    CHECK_EQ_INT(cuStreamGetFlags(s, &flags), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_STREAM_NON_BLOCKING);
    CHECK_EQ_INT(cuStreamGetCtx(s, &got), CUDA_SUCCESS);
    CHECK(got == a0);
    CHECK_EQ_INT(cuLaunchHostFunc(s, host_fn, &host_fn_ran), CUDA_SUCCESS);
    CHECK(!host_fn_ran);
    CHECK_EQ_INT(cuStreamSynchronize(s), CUDA_SUCCESS);
    CHECK(host_fn_ran);
    {
        CUevent e;
        CHECK_EQ_INT(cuEventCreate(&e, 0), CUDA_SUCCESS);
        CHECK_EQ_INT(cuEventRecordWithFlags(e, s, CU_EVENT_RECORD_EXTERNAL),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuEventRecordWithFlags(e, s, CU_EVENT_RECORD_DEFAULT), CUDA_SUCCESS);
        CHECK_EQ_INT(cuEventSynchronize(e), CUDA_SUCCESS);
        CHECK_EQ_INT(cuEventDestroy(e), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuStreamDestroy(s), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(a0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxSetFlags(2, CU_CTX_SCHED_BLOCKING_SYNC), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxSetFlags(2, 3), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&got, 2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxPushCurrent(got), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxGetFlags(&flags), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_CTX_SCHED_BLOCKING_SYNC);
    CHECK_EQ_INT(cuCtxPopCurrent(&got), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(2), CUDA_SUCCESS);
}

/* Page-locked host memory: allocated (portable, mapped, write-combined) and registered, host
 * memory of the allocating or registering context, reachable from the device when mapped. */
static void check_host_memory(void)
{
    CUcontext ctx = new_context(0), other;
    void *mapped, *plain;
    unsigned flags = 0, type = 0;
    CUcontext owner = NULL;
    CUdeviceptr dp = 0, d;
    static unsigned reg[2048] __attribute__((aligned(4096)));

    CHECK_EQ_INT(
        cuMemHostAlloc(&mapped, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED),
        CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostAlloc(&plain, 4096, CU_MEMHOSTALLOC_PORTABLE), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostGetFlags(&flags, mapped), CUDA_SUCCESS);
    CHECK_EQ_INT(flags, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       (CUdeviceptr)(uintptr_t)mapped),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(type, CU_MEMORYTYPE_HOST);
    CHECK_EQ_INT(
        cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)(uintptr_t)mapped),
        CUDA_SUCCESS);
    CHECK(owner == ctx);
    CHECK_EQ_INT(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                       (CUdeviceptr)(uintptr_t)mapped),
                 CUDA_SUCCESS);
    CHECK(dp == (CUdeviceptr)(uintptr_t)mapped);
    CHECK_EQ_INT(cuMemHostGetDevicePointer(&dp, plain, 0), CUDA_ERROR_INVALID_VALUE); /* unmapped */
    /* Mapped but not portable: not another context's. */
    other = new_context(0);
    CHECK_EQ_INT(cuMemHostGetDevicePointer(&dp, mapped, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_SUCCESS);

    /* Registered memory: host memory of the registering context, mapped when asked. */
    CHECK_EQ_INT(cuMemHostRegister(reg, sizeof reg, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostRegister(reg + 100, 64, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_EQ_INT(cuMemHostRegister(plain, 64, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK_EQ_INT(cuMemHostGetFlags(&flags, reg), CUDA_ERROR_INVALID_VALUE);
    {
        attrs_t a = attrs_of((CUdeviceptr)(uintptr_t)(reg + 5));
        CHECK_EQ_INT(a.type, CU_MEMORYTYPE_HOST);
        CHECK(a.ctx == ctx);
        CHECK_EQ_INT(a.ordinal, 0);
        CHECK(a.start == (CUdeviceptr)(uintptr_t)reg && a.size == sizeof reg);
    }
    CHECK_EQ_INT(cuMemHostGetDevicePointer(&dp, reg, 0), CUDA_SUCCESS);
    fill_on(NULL, dp, 2048, 1);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
    CHECK_EQ_INT(reg[2047], 2048);
    CHECK_EQ_INT(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostRegister((void *)(uintptr_t)d, 64, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemHostRegister(reg, sizeof reg, CU_MEMHOSTREGISTER_READ_ONLY),
                 CUDA_ERROR_NOT_SUPPORTED);
    CHECK_EQ_INT(cuMemHostUnregister(reg), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemHostUnregister(reg), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CHECK_EQ_INT(cuMemFreeHost(mapped), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeHost(plain), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* What goes with a context: its cuMemAlloc memory and what it opened; pool and VMM memory stay
 * (cuda.h, cuCtxDestroy: they "are not associated with any CUDA context"), through a primary
 * context's reset too. */
static void check_teardown(void)
{
    CUcontext ctx = new_context(0), prim;
    CUdeviceptr d, pp, va;
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp prop;
    size_t gran = 2 << 20;
    unsigned type;
    CUmemAccessDesc rw0 = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    CHECK_EQ_INT(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocAsync(&pp, 64, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    va = vmm_map(h, gran);
    CHECK_EQ_INT(cuMemSetAccess(va, gran, &rw0, 1), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pp), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&prim, 0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxPushCurrent(prim), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
                 CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(poke_from(0, pp), CUDA_SUCCESS);
    CHECK_EQ_INT(poke_from(0, va), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeAsync(pp, NULL), CUDA_SUCCESS);
    vmm_unmap(va, gran, h);
    CHECK_EQ_INT(cuCtxPopCurrent(&prim), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

/* What the IPC test's parent hands its child through a pipe: a legacy handle, the export data of
 * a pool allocation and the descriptors (inherited) of the pool and of a VMM allocation. */
typedef struct {
    CUipcMemHandle legacy;
    CUmemPoolPtrExportData pool_ptr;
    int pool_fd, vmm_fd;
    size_t vmm_size;
} ipc_msg_t;

#define IPC_BYTES 256

/* Checks that @p n bytes at @p p read i, then writes 0xEE over the first 16 (current context). */
static void ipc_read_write(CUdeviceptr p)
{
    unsigned char back[IPC_BYTES];
    CHECK_EQ_INT(cuMemcpyDtoH(back, p, sizeof back), CUDA_SUCCESS);
    for (int i = 0; i < IPC_BYTES; i++)
        CHECK_EQ_INT(back[i], i);
    CHECK_EQ_INT(cuMemsetD8(p, 0xEE, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_SUCCESS);
}

/* The child process of check_ipc: opens each kind of shared memory, checks what the driver
 * answers for it, reads it and writes over its first bytes. */
static int ipc_child(const char *pipe_fd)
{
    ipc_msg_t m;
    CUcontext ctx, other;
    CUdeviceptr x, y, pp, z, va;
    CUmemoryPool pool;
    CUmemGenericAllocationHandle h;
    attrs_t a;
    int fd = atoi(pipe_fd);
    CUmemAccessDesc rw0 = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};

    REQUIRE(read(fd, &m, sizeof m) == (ssize_t)sizeof m);
    close(fd);
    REQUIRE(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
    REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);

    /* Legacy IPC: the opening context's, device memory of the exporter's device. */
    CHECK_EQ_INT(cuIpcOpenMemHandle(&x, m.legacy, 0), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&x, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&y, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_SUCCESS);
    CHECK(x == y); /* opened again: the same pointer, one more reference */
    a = attrs_of(x + 1);
    CHECK(a.ctx == ctx);
    CHECK_EQ_INT(a.type, CU_MEMORYTYPE_DEVICE);
    CHECK_EQ_INT(a.ordinal, 2);
    CHECK(a.start == x && a.size == IPC_BYTES);
    CHECK(a.pool == NULL);
    CHECK(host_touch_faults(x));
    CHECK_EQ_INT(poke_from(0, x), CUDA_ERROR_ILLEGAL_ADDRESS); /* another context */
    other = new_context(0);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&y, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_ERROR_INVALID_CONTEXT); /* one context per device */
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_SUCCESS);
    other = new_context(1);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&y, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_ERROR_PEER_ACCESS_UNSUPPORTED); /* device 1 is no peer of device 2 */
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_SUCCESS);
    other = new_context(2);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&y, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_SUCCESS); /* a context of another device: its own mapping */
    CHECK(y != x);
    CHECK(attrs_of(y).ctx == other);
    CHECK_EQ_INT(cuCtxDestroy(other), CUDA_SUCCESS); /* closes it */
    CHECK_EQ_INT(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    CHECK_EQ_INT(cuPointerGetAttribute(&a.type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, y),
                 CUDA_ERROR_INVALID_VALUE);
    ipc_read_write(x);
    CHECK_EQ_INT(cuIpcCloseMemHandle(x), CUDA_SUCCESS);
    CHECK_EQ_INT(cuIpcCloseMemHandle(x), CUDA_SUCCESS);
    CHECK_EQ_INT(cuIpcCloseMemHandle(x), CUDA_ERROR_INVALID_VALUE);

    /* A pool of device 2 and one of its allocations: the pool's memory, no context's. */
    CHECK_EQ_INT(cuMemPoolImportFromShareableHandle(&pool, (void *)(intptr_t)m.pool_fd,
                                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 CUDA_SUCCESS);
    close(m.pool_fd);
    CHECK_EQ_INT(cuMemPoolImportPointer(&pp, pool, &m.pool_ptr), CUDA_SUCCESS);
    a = attrs_of(pp);
    CHECK(a.ctx == NULL && a.pool == pool);
    CHECK_EQ_INT(a.ordinal, 2);
    CHECK_EQ_INT(a.handles, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&z, 16, pool, NULL), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuMemsetD8(pp, 0, 16), CUDA_ERROR_INVALID_VALUE); /* device 0: not granted */
    CHECK_EQ_INT(cuMemPoolSetAccess(pool, &rw0, 1), CUDA_SUCCESS);
    ipc_read_write(pp);
    CHECK_EQ_INT(cuMemFree(pp), CUDA_SUCCESS);

    /* A VMM allocation of device 0. */
    CHECK_EQ_INT(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)m.vmm_fd,
                                                CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
                 CUDA_SUCCESS);
    close(m.vmm_fd);
    va = vmm_map(h, m.vmm_size);
    CHECK_EQ_INT(cuMemSetAccess(va, m.vmm_size, &rw0, 1), CUDA_SUCCESS);
    ipc_read_write(va);
    vmm_unmap(va, m.vmm_size, h);
    return check_failures ? 1 : 0;
}

/* Memory shared with another process (a second copy of this test, started with "ipc"): cuMemAlloc
 * memory by a legacy handle, which this process cannot open itself; a pool allocation; a VMM
 * allocation. What the child writes is seen here. */
static void check_ipc(const char *self)
{
    CUcontext p0, own;
    CUdeviceptr d, pp, va, x;
    CUmemoryPool pool;
    CUmemPoolProps props;
    CUmemAllocationProp prop;
    CUmemGenericAllocationHandle h;
    CUipcMemHandle other;
    unsigned char pattern[IPC_BYTES], back[IPC_BYTES];
    unsigned capable = 9;
    ipc_msg_t m;
    size_t gran = 2 << 20;
    CUmemAccessDesc rw0 = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUdeviceptr bufs[3];

    for (int i = 0; i < IPC_BYTES; i++)
        pattern[i] = (unsigned char)i;
    memset(&m, 0, sizeof m);
    CHECK_EQ_INT(cuDevicePrimaryCtxRetain(&p0, 2), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSetCurrent(p0), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&d, IPC_BYTES), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyHtoD(d, pattern, IPC_BYTES), CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuPointerGetAttribute(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, d),
        CUDA_SUCCESS);
    CHECK_EQ_INT(capable, 1);
    CHECK_EQ_INT(cuIpcGetMemHandle(&m.legacy, d + 16), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ_INT(cuIpcGetMemHandle(&m.legacy, d), CUDA_SUCCESS);
    CHECK_EQ_INT(cuIpcGetMemHandle(&other, d), CUDA_SUCCESS); /* again: lightweight */
    /* Its pages are shared now, its contents kept, and still no host code's. */
    CHECK_EQ_INT(cuMemcpyDtoH(back, d, IPC_BYTES), CUDA_SUCCESS);
    CHECK(memcmp(back, pattern, IPC_BYTES) == 0);
    CHECK(host_touch_faults(d));
    CHECK_EQ_INT(cuIpcOpenMemHandle(&x, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_ERROR_INVALID_CONTEXT); /* the exporting process */
    own = new_context(2);
    CHECK_EQ_INT(cuIpcOpenMemHandle(&x, m.legacy, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                 CUDA_ERROR_INVALID_CONTEXT);
    CHECK_EQ_INT(cuCtxDestroy(own), CUDA_SUCCESS);

    memset(&props, 0, sizeof props);
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 2;
    props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_EQ_INT(cuMemPoolCreate(&pool, &props), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAllocFromPoolAsync(&pp, IPC_BYTES, pool, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyHtoD(pp, pattern, IPC_BYTES), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemPoolExportToShareableHandle(&m.pool_fd, pool,
                                                  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                 CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemPoolExportPointer(&m.pool_ptr, pp), CUDA_SUCCESS);

    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CHECK_EQ_INT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
    va = vmm_map(h, gran);
    {
        CUmemAccessDesc rw2 = {{CU_MEM_LOCATION_TYPE_DEVICE, 2},
                               CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CHECK_EQ_INT(cuMemSetAccess(va, gran, &rw2, 1), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuMemcpyHtoD(va, pattern, IPC_BYTES), CUDA_SUCCESS);
    CHECK_EQ_INT(
        cuMemExportToShareableHandle(&m.vmm_fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        CUDA_SUCCESS);
    m.vmm_size = gran;
    (void)rw0;

    CHECK(child_succeeded(child_run_piped(self, self, "ipc", &m, sizeof m)));

    bufs[0] = d;
    bufs[1] = pp;
    bufs[2] = va;
    for (int b = 0; b < 3; b++) {
        CHECK_EQ_INT(cuMemcpyDtoH(back, bufs[b], IPC_BYTES), CUDA_SUCCESS);
        CHECK_EQ_INT(back[15], 0xEE);
        CHECK_EQ_INT(back[16], 16);
    }
    close(m.pool_fd);
    close(m.vmm_fd);
    CHECK_EQ_INT(cuMemFree(d), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemFreeAsync(pp, NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemPoolDestroy(pool), CUDA_SUCCESS);
    vmm_unmap(va, gran, h);
    CHECK_EQ_INT(cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuDevicePrimaryCtxRelease(2), CUDA_SUCCESS);
}

/* CUBINs load on the same SM major with no newer minor; PTX on any SM it targets or newer. */
static void check_module_rules(void)
{
    char *sm80 = nvrtc_image("sm_80"), *sm90 = nvrtc_image("sm_90"), *ptx;
    CUcontext c0 = new_context(0), c1;
    CUmodule mod;
    CUfunction f;
    CUresult rc;
    CUresult newer = driver_version < 13000 ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_SUCCESS;

    CHECK_EQ_INT(cuModuleLoadData(&mod, sm80), CUDA_ERROR_NO_BINARY_FOR_GPU);
    /* On driver 12.4 a CUBIN from toolkit 13 does not load at all. */
    CHECK_EQ_INT(cuModuleLoadData(&mod, sm90), newer);
    CHECK_EQ_INT(cuModuleLoadData(&mod, "garbage"), CUDA_ERROR_INVALID_IMAGE);
    c1 = new_context(1); /* sm_86 */
    CHECK_EQ_INT(cuModuleLoadData(&mod, sm80), newer);
    if (newer == CUDA_SUCCESS) {
        f = function(mod, "fill");
        CHECK(f != NULL);
        CHECK_EQ_INT(cuModuleGetFunction(&f, mod, "not_a_kernel"), CUDA_ERROR_NOT_FOUND);
        CHECK_EQ_INT(cuModuleGetFunction(&f, mod, "nope"), CUDA_ERROR_NOT_FOUND);
        CHECK_EQ_INT(cuModuleUnload(mod), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuModuleLoadData(&mod, sm90), CUDA_ERROR_NO_BINARY_FOR_GPU);
    ptx = nvrtc_image("compute_90");
    CHECK_EQ_INT(cuModuleLoadData(&mod, ptx), driver_version < 13000
                                                  ? CUDA_ERROR_UNSUPPORTED_PTX_VERSION
                                                  : CUDA_ERROR_NO_BINARY_FOR_GPU);
    free(ptx);
    /* An ISA newer than any driver here knows. */
    CHECK_EQ_INT(cuModuleLoadData(&mod, "// c\n.version 9.9\n.target sm_80\n"),
                 CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    CHECK_EQ_INT(cuCtxDestroy(c1), CUDA_SUCCESS);

    /* Launch limits, and a function used from another context. */
    mod = load_module(&rc);
    REQUIRE(rc == CUDA_SUCCESS);
    f = function(mod, "fill");
    {
        CUdeviceptr p;
        unsigned n = 1, v = 0;
        void *params[] = {&p, &n, &v};
        CHECK_EQ_INT(cuMemAlloc(&p, 4), CUDA_SUCCESS);
        CHECK_EQ_INT(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuLaunchKernel(f, 1, 1, 1, 32, 32, 2, 0, NULL, params, NULL),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuLaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuLaunchKernel(f, 1, 65536, 1, 32, 1, 1, 0, NULL, params, NULL),
                     CUDA_ERROR_INVALID_VALUE);
        CHECK_EQ_INT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 49 * 1024, NULL, params, NULL),
                     CUDA_ERROR_INVALID_VALUE);
        c1 = new_context(0);
        CHECK_EQ_INT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
                     CUDA_ERROR_INVALID_HANDLE);
        CHECK_EQ_INT(cuCtxDestroy(c1), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuCtxDestroy(c0), CUDA_SUCCESS);
    free(sm80);
    free(sm90);
}

/* The second load of the same source compiles nothing: the kernel cache serves it. */
static void check_kernel_cache(void)
{
    CUcontext ctx = new_context(0);
    CUresult rc;
    long long before = stats("kernel_compiles");
    CUmodule mod = load_module(&rc);
    CHECK_EQ_INT(rc, CUDA_SUCCESS);
    CHECK_EQ_INT(stats("kernel_compiles"), before);
    CHECK_EQ_INT(cuModuleUnload(mod), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* Entry points newer than 12.4 are absent from that build and resolved by version. */
static void check_versions(void)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult status;
    int newer = driver_version >= 13000;

    CHECK_EQ_INT(dlsym(RTLD_DEFAULT, "cuEventElapsedTime_v2") != NULL, newer);
    CHECK_EQ_INT(dlsym(RTLD_DEFAULT, "cuCtxCreate_v4") != NULL, newer);
    CHECK_EQ_INT(cuGetProcAddress("cuEventElapsedTime", &fn, 12080, 0, &status), CUDA_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, newer ? "cuEventElapsedTime_v2" : "cuEventElapsedTime"));
    CHECK_EQ_INT(cuGetProcAddress("cuEventElapsedTime", &fn, 12000, 0, &status), CUDA_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuEventElapsedTime"));
    CHECK_EQ_INT(cuGetProcAddress("cuCtxCreate", &fn, 13000, 0, &status), CUDA_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, newer ? "cuCtxCreate_v4" : "cuCtxCreate_v2"));
    CHECK_EQ_INT(cuGetProcAddress("cuMemAlloc", &fn, 13000, 0, &status), CUDA_SUCCESS);
    CHECK(fn == dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"));
    CHECK_EQ_INT(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &status), CUDA_ERROR_NOT_FOUND);
    CHECK_EQ_INT(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK_EQ_INT(cuGetProcAddress("cuMemAllocManaged", &fn, 5000, 0, &status),
                 CUDA_ERROR_NOT_FOUND);
    CHECK_EQ_INT(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

/* ---- the rules of emulated kernels ---------------------------------------------------------- */

/* A pack kernel as typejit's generator writes them (its name, `word_t`, `WORDS`), 8 words per
 * object, one word per thread; MODE breaks it: 1 two threads write word 4 (and word 5 stays
 * unwritten), 2 word 5 is never written, 3 word 5 goes past the packed bytes (still inside the
 * allocation). */
static const char pack_src[] =
    "extern \"C\" __global__ void tj_pack(void *__restrict__ dst, const void *__restrict__ src,\n"
    "                                     long long count)\n"
    "{\n"
    "    typedef unsigned int word_t;\n"
    "    typedef unsigned int index_t;\n"
    "    const index_t WORDS = 8u;\n"
    "    const word_t *in = (const word_t *)src;\n"
    "    word_t *out = (word_t *)dst;\n"
    "    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count * WORDS;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "        long long j = i;\n"
    "        if (MODE == 1 && i == 5)\n"
    "            j = 4;\n"
    "        if (MODE == 2 && i == 5)\n"
    "            continue;\n"
    "        if (MODE == 3 && i == 5)\n"
    "            j = count * WORDS;\n"
    "        out[j] = in[i];\n"
    "    }\n"
    "}\n";

/* An unpack kernel of the same layout whose threads 0 and 1 both write word 0. */
static const char unpack_twice_src[] =
    "extern \"C\" __global__ void tj_unpack(void *__restrict__ dst, const void *__restrict__ src,\n"
    "                                       long long count)\n"
    "{\n"
    "    typedef unsigned int word_t;\n"
    "    typedef unsigned int index_t;\n"
    "    const index_t WORDS = 8u;\n"
    "    unsigned i = threadIdx.x;\n"
    "    if (i < count * WORDS)\n"
    "        ((word_t *)dst)[i == 1 ? 0 : i] = ((const word_t *)src)[i];\n"
    "}\n";

/* A kernel named as typejit's pack kernel whose source does not say its word and words. */
static const char pack_unknown_src[] =
    "extern \"C\" __global__ void tj_pack(void *dst, const void *src, long long count)\n"
    "{\n"
    "    if (threadIdx.x < count)\n"
    "        ((char *)dst)[threadIdx.x] = ((const char *)src)[threadIdx.x];\n"
    "}\n";

/* A parts kernel as typejit's generator writes them (tj_parts_*: `word_t`, a baked
 * `OBJECT_BYTES`, or the object size in its fourth argument), 8 words per object; MODE 1: two
 * threads write word 4 (word 5 stays unwritten); MODE 2: the source bakes no object size and
 * moves 7 words an object where the launch says 8 (32 bytes). */
static const char parts_src[] =
    "struct tj_parts_args_t {\n"
    "    const void *table;\n"
    "    long long parts, fbytes, obytes, extent;\n"
    "};\n"
    "extern \"C\" __global__ void tj_parts_pack(void *__restrict__ dst,\n"
    "                                           const void *__restrict__ src, long long count,\n"
    "                                           const tj_parts_args_t args)\n"
    "{\n"
    "    typedef unsigned int word_t;\n"
    "#if MODE != 2\n"
    "    const long long OBJECT_BYTES = 32LL;\n"
    "    const long long words = OBJECT_BYTES / 4;\n"
    "#else\n"
    "    const long long words = args.obytes / 4 - 1;\n"
    "#endif\n"
    "    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count * words;\n"
    "         i += (long long)gridDim.x * blockDim.x) {\n"
    "        long long j = MODE == 1 && i == 5 ? 4 : i;\n"
    "        ((word_t *)dst)[j] = ((const word_t *)src)[i];\n"
    "    }\n"
    "}\n";

/* The serial unpack of an overlapping layout: one thread writes the 8 packed words of each
 * object over its 4 typed words, in order (the last write wins). */
static const char serial_src[] =
    "struct tj_parts_args_t {\n"
    "    const void *table;\n"
    "    long long parts, fbytes, obytes, extent;\n"
    "};\n"
    "extern \"C\" __global__ void tj_parts_unpack_serial(void *__restrict__ dst,\n"
    "                                                    const void *__restrict__ src,\n"
    "                                                    long long count,\n"
    "                                                    const tj_parts_args_t args)\n"
    "{\n"
    "    typedef unsigned int word_t;\n"
    "    const long long OBJECT_BYTES = 32LL;\n"
    "    for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < count * 8;\n"
    "         i += (long long)gridDim.x * blockDim.x)\n"
    "        ((word_t *)dst)[i / 8 * 4 + i % 4] = ((const word_t *)src)[i];\n"
    "}\n";

/* Each thread writes where in its block's run it ran (the blocks' counters are the threads'
 * only shared state, and a block's threads run one after another on one host thread when there
 * are more blocks than host threads). */
static const char order_src[] =
    "extern \"C\" __global__ void order(unsigned *out, unsigned *counter)\n"
    "{\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = counter[blockIdx.x]++;\n"
    "}\n";

static CUfunction load_kernel(const char *src, int mode, const char *name, CUmodule *mod)
{
    char *text = malloc(strlen(src) + 32), *ptx;
    CUfunction f = NULL;
    REQUIRE(text != NULL);
    snprintf(text, strlen(src) + 32, "#define MODE %d\n%s", mode, src);
    ptx = ptx_of(text);
    REQUIRE(cuModuleLoadData(mod, ptx) == CUDA_SUCCESS);
    REQUIRE(cuModuleGetFunction(&f, *mod, name) == CUDA_SUCCESS);
    free(ptx);
    free(text);
    return f;
}

/* Moves 3 objects of 8 words with kernel @p name of @p src (MODE @p mode) on a grid of @p blocks
 * thread blocks of @p threads, in a context of its own, @p args the kernel's argument after (dst,
 * in, count) if it has one: the synchronisation's result, and the first 24 words of the
 * destination in @p out. */
static CUresult run_moves(const char *src, int mode, const char *name, unsigned blocks,
                          unsigned threads, void *args, unsigned *out)
{
    CUcontext ctx = new_context(0);
    CUmodule mod;
    CUfunction f = load_kernel(src, mode, name, &mod);
    CUdeviceptr in, dst;
    long long count = 3;
    unsigned host[24];
    void *params[] = {&dst, &in, &count, args};
    CUresult rc;

    for (unsigned i = 0; i < 24; i++)
        host[i] = 1000 + i;
    REQUIRE(cuMemAlloc(&in, sizeof host) == CUDA_SUCCESS);
    REQUIRE(cuMemAlloc(&dst, 4096) == CUDA_SUCCESS);
    REQUIRE(cuMemcpyHtoD(in, host, sizeof host) == CUDA_SUCCESS);
    REQUIRE(cuMemsetD8(dst, 0, 4096) == CUDA_SUCCESS);
    launch1(f, blocks, threads, NULL, params, CUDA_SUCCESS);
    rc = cuCtxSynchronize();
    if (rc == CUDA_SUCCESS && out != NULL)
        CHECK_EQ_INT(cuMemcpyDtoH(out, dst, 24 * sizeof(unsigned)), CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    return rc;
}

/* Packs with kernel @p name (dst, in, count) on 2 blocks of 32 threads. */
static CUresult run_pack(const char *src, int mode, const char *name, unsigned *out)
{
    return run_moves(src, mode, name, 2, 32, NULL, out);
}

/* Moves with parts kernel @p name, whose part table argument describes one part of 32 bytes. */
static CUresult run_parts(const char *src, int mode, const char *name, unsigned blocks,
                          unsigned threads, unsigned *out)
{
    struct {
        const void *table;
        long long parts, fbytes, obytes, extent;
    } args = {NULL, 1, 32, 32, 32};
    return run_moves(src, mode, name, blocks, threads, &args, out);
}

/* A correct pack kernel passes and is counted; a block's threads run in a shuffled order; the
 * blocks of a launch run on several host threads. */
static void check_rules_kept(void)
{
    unsigned out[24], host[4 * 256], zero[4] = {0, 0, 0, 0};
    long long tracked = stats("launches_tracked"), pooled = stats("blocks_on_pool");
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr d, counter;
    void *params[] = {&d, &counter};
    bool identity = true;

    CHECK_EQ_INT(run_pack(pack_src, 0, "tj_pack", out), CUDA_SUCCESS);
    for (unsigned i = 0; i < 24; i++)
        CHECK_EQ_INT(out[i], 1000 + i);
    CHECK_EQ_INT(stats("launches_tracked"), tracked + 1);
    CHECK_EQ_INT(stats("write_violations"), 0);
    /* A parts kernel; its serial unpack, one thread, may write a byte again. */
    CHECK_EQ_INT(run_parts(parts_src, 0, "tj_parts_pack", 2, 32, out), CUDA_SUCCESS);
    for (unsigned i = 0; i < 24; i++)
        CHECK_EQ_INT(out[i], 1000 + i);
    CHECK_EQ_INT(run_parts(serial_src, 0, "tj_parts_unpack_serial", 1, 1, out), CUDA_SUCCESS);
    for (unsigned i = 0; i < 12; i++)
        CHECK_EQ_INT(out[i], 1000 + i / 4 * 8 + 4 + i % 4);
    CHECK_EQ_INT(stats("launches_tracked"), tracked + 3);
    CHECK_EQ_INT(stats("write_violations"), 0);

    ctx = new_context(0);
    f = load_kernel(order_src, 0, "order", &mod);
    REQUIRE(cuMemAlloc(&d, sizeof host) == CUDA_SUCCESS);
    REQUIRE(cuMemAlloc(&counter, sizeof zero) == CUDA_SUCCESS);
    REQUIRE(cuMemcpyHtoD(counter, zero, sizeof zero) == CUDA_SUCCESS);
    launch1(f, 4, 256, NULL, params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(host, d, sizeof host), CUDA_SUCCESS);
    for (unsigned b = 0; b < 4; b++) {
        unsigned seen[256] = {0};
        for (unsigned t = 0; t < 256; t++) {
            unsigned at = host[b * 256 + t];
            CHECK(at < 256 && seen[at]++ == 0); /* each thread ran once */
            identity = identity && at == t;
        }
    }
    CHECK(!identity);
    /* FAKECUDA_THREADS=4 (the default): the pool ran some of the four blocks. */
    CHECK(stats("blocks_on_pool") > pooled);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
}

/* The child: kernels that break the rules, each in a context of its own. Each launch fails with
 * a sticky error and says why on stderr; the process then exits with status 70. */
static int rules_child(void)
{
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr in, dst;
    long long count = 1;
    void *params[] = {&dst, &in, &count};

    CHECK_EQ_INT(run_pack(pack_src, 1, "tj_pack", NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(run_pack(pack_src, 2, "tj_pack", NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(run_pack(pack_src, 3, "tj_pack", NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(run_pack(pack_unknown_src, 0, "tj_pack", NULL), CUDA_ERROR_LAUNCH_FAILED);
    ctx = new_context(0);
    f = load_kernel(unpack_twice_src, 0, "tj_unpack", &mod);
    REQUIRE(cuMemAlloc(&in, 64) == CUDA_SUCCESS);
    REQUIRE(cuMemAlloc(&dst, 64) == CUDA_SUCCESS);
    launch1(f, 1, 32, NULL, params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuCtxSynchronize(), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    /* Parts kernels: a word written twice, a word left unwritten of the size the launch gives,
     * a serial unpack launched as several threads. */
    CHECK_EQ_INT(run_parts(parts_src, 1, "tj_parts_pack", 2, 32, NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(run_parts(parts_src, 2, "tj_parts_pack", 2, 32, NULL), CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(run_parts(serial_src, 0, "tj_parts_unpack_serial", 1, 2, NULL),
                 CUDA_ERROR_LAUNCH_FAILED);
    CHECK_EQ_INT(stats("write_violations"), 8);
    return check_failures ? 1 : 0;
}

/* An int multiplication that overflows: undefined behaviour, which only a sanitizer shows. */
static const char overflow_src[] = "extern \"C\" __global__ void overflow(int *out, int x)\n"
                                   "{\n"
                                   "    out[threadIdx.x] = x * 65536 * 65536;\n"
                                   "}\n";

/* The child built with FAKECUDA_CXXFLAGS="-fsanitize=undefined -fno-sanitize-recover=undefined":
 * the overflow ends the process with UndefinedBehaviorSanitizer's report. */
static int ubsan_child(void)
{
    CUmodule mod;
    CUfunction f;

    new_context(0);
    f = load_kernel(overflow_src, 0, "overflow", &mod);
    CUdeviceptr out;
    int x = 3;
    void *params[] = {&out, &x};

    REQUIRE(cuMemAlloc(&out, 64) == CUDA_SUCCESS);
    launch1(f, 1, 2, NULL, params, CUDA_SUCCESS);
    cuCtxSynchronize();
    return 0; /* not reached: the sanitizer ends the process */
}

/* The child run with FAKECUDA_FAIL=cuMemsetD8_v2%30: which of 200 memsets fail, as a line of
 * 0 and 1 on stdout. */
static int chance_child(void)
{
    CUcontext ctx = new_context(0);
    CUdeviceptr p;
    char line[201];

    REQUIRE(cuMemAlloc(&p, 16) == CUDA_SUCCESS);
    for (int i = 0; i < 200; i++)
        line[i] = cuMemsetD8(p, 1, 16) == CUDA_SUCCESS ? '0' : '1';
    line[200] = '\0';
    puts(line);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    return check_failures ? 1 : 0;
}

/* Whether @p path holds @p text. */
static bool file_has(const char *path, const char *text)
{
    char buf[16384];
    size_t n;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

/* Runs `self mode` with @p var=@p value, its stderr into @p log; its wait status. */
static int run_child(const char *self, const char *mode, const char *var, const char *value,
                     char *log)
{
    int fd = mkstemp(log);
    pid_t pid;

    REQUIRE(fd >= 0);
    pid = child_fork();
    if (pid == 0) {
        dup2(fd, 2);
        setenv(var, value, 1);
        execl(self, self, mode, (char *)NULL);
        _exit(127);
    }
    close(fd);
    return child_wait(pid);
}

/* The number of files in the NVRTC cache @p dir, and the inode of the last one listed into
 * @p inode unless NULL: the cache holds one file per compile, replaced (a new inode) whenever it
 * is stored again. */
static long nvrtc_cache_files(const char *dir, ino_t *inode)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long n = 0;
    struct stat st;
    char path[4400];

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".nvrtc") == 0) {
            n++;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (inode != NULL && stat(path, &st) == 0)
                *inode = st.st_ino;
        }
    }
    closedir(d);
    return n;
}

/* Cuts every file of the NVRTC cache to half its size. */
static void nvrtc_cache_truncate(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct stat st;
    char path[4400];

    REQUIRE(d != NULL);
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && stat(path, &st) == 0)
            REQUIRE(truncate(path, st.st_size / 2) == 0);
    }
    closedir(d);
}

/* The child run with FAKECUDA_NVRTC_CACHE set to an empty folder: the second compile of a
 * program is served from the cache (its file stays as it was), byte for byte as the first and
 * loadable; other options are another entry; a damaged file is compiled again and replaced. */
static int nvrtc_cache_child(void)
{
    const char *dir = getenv("FAKECUDA_NVRTC_CACHE");
    size_t size1, size2, size3;
    char *first, *again, *healed, *ptx;
    ino_t stored = 0, kept = 0;
    CUmodule mod;
    CUfunction f;

    REQUIRE(dir != NULL);
    new_context(0);
    first = nvrtc_image_sized(kernels_src, "sm_90", &size1);
    CHECK_EQ_INT((int)nvrtc_cache_files(dir, &stored), 1);
    again = nvrtc_image_sized(kernels_src, "sm_90", &size2);
    CHECK_EQ_INT((int)nvrtc_cache_files(dir, &kept), 1);
    CHECK(kept == stored);
    CHECK(size2 == size1 && memcmp(first, again, size1) == 0);
    if (driver_version >= 13000) { /* driver 12.4 takes no CUBIN of NVRTC 13 */
        CHECK_EQ_INT(cuModuleLoadData(&mod, again), CUDA_SUCCESS);
        CHECK_EQ_INT(cuModuleGetFunction(&f, mod, "fill"), CUDA_SUCCESS);
    }
    ptx = nvrtc_image_of(kernels_src, "compute_90");
    CHECK_EQ_INT((int)nvrtc_cache_files(dir, NULL), 2);
    CHECK(strstr(ptx, ".entry fill") != NULL);
    nvrtc_cache_truncate(dir);
    healed = nvrtc_image_sized(kernels_src, "sm_90", &size3);
    CHECK(size3 == size1 && memcmp(first, healed, size1) == 0);
    CHECK_EQ_INT((int)nvrtc_cache_files(dir, NULL), 2);
    free(first);
    free(again);
    free(healed);
    free(ptx);
    return check_failures ? 1 : 0;
}

static void check_nvrtc_cache(const char *self)
{
    char dir[] = "/tmp/test_fakecuda_nvrtc_XXXXXX", log[] = "/tmp/test_fakecuda_nvrtc_log_XXXXXX";
    char cmd[200];
    int status;

    REQUIRE(mkdtemp(dir) != NULL);
    status = run_child(self, "nvrtc_cache", "FAKECUDA_NVRTC_CACHE", dir, log);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (check_failures) {
        fprintf(stderr, "the NVRTC cache child's stderr is in %s\n", log);
    } else {
        unlink(log);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK_EQ_INT(system(cmd), 0);
    }
}

/* FAKECUDA_CXXFLAGS reaches the host compile: a sanitizer runtime reports the kernel's undefined
 * behaviour. */
static void check_cxxflags(const char *self)
{
    char log[] = "/tmp/test_fakecuda_ubsan_XXXXXX";
    int status = run_child(self, "ubsan", "FAKECUDA_CXXFLAGS",
                           "-fsanitize=undefined -fno-sanitize-recover=undefined", log);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    CHECK(file_has(log, "runtime error: signed integer overflow"));
    if (check_failures)
        fprintf(stderr, "the ubsan child's stderr is in %s\n", log);
    else
        unlink(log);
}

/* The line chance_child prints under FAKECUDA_SEED=@p seed. */
static void chance_line(const char *self, const char *seed, char *line, size_t len)
{
    char cmd[4200];
    FILE *f;
    snprintf(cmd, sizeof cmd, "FAKECUDA_FAIL=cuMemsetD8_v2%%30 FAKECUDA_SEED=%s '%s' chance", seed,
             self);
    f = popen(cmd, "r");
    REQUIRE(f != NULL);
    if (fgets(line, (int)len, f) == NULL)
        line[0] = '\0';
    CHECK_EQ_INT(pclose(f), 0);
}

/* FAKECUDA_FAIL=NAME%P: about P percent of the calls fail, the same ones for the same seed. */
static void check_chance(const char *self)
{
    char a[256], b[256], c[256];
    int ones = 0;
    chance_line(self, "7", a, sizeof a);
    chance_line(self, "7", b, sizeof b);
    chance_line(self, "8", c, sizeof c);
    CHECK_EQ_INT((int)strlen(a), 201);
    CHECK(strcmp(a, b) == 0);
    CHECK(strcmp(a, c) != 0);
    for (const char *x = a; *x != '\0'; x++)
        ones += *x == '1';
    CHECK(ones >= 30 && ones <= 90);
}

static void check_rules_broken(const char *self)
{
    char log[] = "/tmp/test_fakecuda_rules_XXXXXX";
    int status = run_child(self, "rules", "FAKECUDA_SEED", "12345", log);

    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 70);
    CHECK(file_has(log, "kernel tj_pack (launch 1, grid 2x1x1, block 32x1x1) wrote byte 16 of "
                        "its packed output (from its destination pointer) twice"));
    CHECK(file_has(log, "left byte 20 of its packed output unwritten (92 of 96 bytes written)"));
    CHECK(file_has(log, "wrote device memory at byte 96 from its destination pointer, outside "
                        "its packed output (96 bytes)"));
    CHECK(file_has(log, "cannot tell from its source what kernel tj_pack writes"));
    CHECK(file_has(log, "kernel tj_unpack (launch 4, grid 1x1x1, block 32x1x1) wrote byte 0 of "
                        "its typed output (from its destination pointer) twice"));
    CHECK(file_has(log, "kernel tj_parts_pack (launch 5, grid 2x1x1, block 32x1x1) wrote byte 16 "
                        "of its packed output (from its destination pointer) twice"));
    CHECK(file_has(log, "kernel tj_parts_pack (launch 6, grid 2x1x1, block 32x1x1) left byte 84 "
                        "of its packed output unwritten (84 of 96 bytes written)"));
    CHECK(file_has(log, "kernel tj_parts_unpack_serial (launch 0, grid 1x1x1, block 2x1x1) is a "
                        "serial unpack launched with more than one thread"));
    CHECK(file_has(log, "(FAKECUDA_SEED=12345 replays this process's thread orders)"));
    CHECK(file_has(log, "8 kernel launch(es) broke the rules of the device (see above); exiting "
                        "with status 70"));
    if (check_failures)
        fprintf(stderr, "the rules child's stderr is in %s\n", log);
    else
        unlink(log);
}

/* Run with FAKECUDA_FAIL=cuMemAlloc_v2:2,cuModuleLoadData:1,cuLaunchKernel:1,
 * cuMemcpyDtoH_v2:1,cuStreamSynchronize:2=700,cuMemAllocAsync:1: the entry points of every
 * allocation kind go through the same injection. */
static int inject_child(void)
{
    CUcontext ctx = new_context(0);
    CUdeviceptr p;
    CUmodule mod = NULL;
    CUfunction f;
    char *ptx = ptx_for_driver();
    unsigned n = 4, v = 1, host[4];
    void *params[] = {&p, &n, &v};

    CHECK_EQ_INT(cuMemAlloc(&p, 16), CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 16), CUDA_ERROR_OUT_OF_MEMORY);
    CHECK_EQ_INT(cuMemAlloc(&p, 16), CUDA_SUCCESS);
    {
        CUdeviceptr q;
        CHECK_EQ_INT(cuMemAllocAsync(&q, 16, NULL), CUDA_ERROR_OUT_OF_MEMORY);
        CHECK_EQ_INT(cuMemAllocAsync(&q, 16, NULL), CUDA_SUCCESS);
        CHECK_EQ_INT(cuMemFreeAsync(q, NULL), CUDA_SUCCESS);
    }
    CHECK_EQ_INT(cuModuleLoadData(&mod, ptx), CUDA_ERROR_INVALID_IMAGE);
    CHECK_EQ_INT(cuModuleLoadData(&mod, ptx), CUDA_SUCCESS);
    f = function(mod, "fill");
    launch1(f, 1, 32, NULL, params, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    launch1(f, 1, 32, NULL, params, CUDA_SUCCESS);
    CHECK_EQ_INT(cuMemcpyDtoH(host, p, sizeof host), CUDA_ERROR_UNKNOWN);
    CHECK_EQ_INT(cuMemcpyDtoH(host, p, sizeof host), CUDA_SUCCESS);
    CHECK_EQ_INT(host[3], 4);
    CHECK_EQ_INT(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    CHECK_EQ_INT(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuMemAlloc(&p, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
    CHECK_EQ_INT(cuCtxDestroy(ctx), CUDA_SUCCESS);
    free(ptx);
    return check_failures ? 1 : 0;
}

static void check_injection(const char *self)
{
    pid_t pid = child_fork();

    if (pid == 0) {
        setenv("FAKECUDA_FAIL",
               "cuMemAlloc_v2:2,cuModuleLoadData:1,cuLaunchKernel:1,cuMemcpyDtoH_v2:1,"
               "cuStreamSynchronize:2=700,cuMemAllocAsync:1",
               1);
        execl(self, self, "inject", (char *)NULL);
        _exit(127);
    }
    CHECK(child_succeeded(child_wait(pid)));
}

int main(int argc, char **argv)
{
    int count = 0;
    CUdeviceptr p;

    /* Three devices, sm_90, sm_86 and sm_90: the module rules, and peers (0 and 2) and
     * non-peers (1 and the others) for memory of one device another's kernels touch. */
    setenv("FAKECUDA_DEVICES", "3", 1);
    setenv("FAKECUDA_SM", "90,86,90", 1);
    *(void **)&stats = dlsym(RTLD_DEFAULT, "fakecuda_stats");
    REQUIRE(stats != NULL);
    CHECK_EQ_INT(cuDriverGetVersion(&driver_version), CUDA_SUCCESS);
    if (argc == 1)
        CHECK_EQ_INT(cuMemAlloc(&p, 1), CUDA_ERROR_NOT_INITIALIZED);
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    nvrtc_open();
    if (argc > 1 && strcmp(argv[1], "inject") == 0)
        return inject_child();
    if (argc > 1 && strcmp(argv[1], "rules") == 0)
        return rules_child();
    if (argc > 1 && strcmp(argv[1], "ubsan") == 0)
        return ubsan_child();
    if (argc > 1 && strcmp(argv[1], "chance") == 0)
        return chance_child();
    if (argc > 1 && strcmp(argv[1], "nvrtc_cache") == 0)
        return nvrtc_cache_child();
    if (argc > 1 && strcmp(argv[1], "pageable") == 0)
        return pageable_child();
    if (argc > 2 && strcmp(argv[1], "ipc") == 0)
        return ipc_child(argv[2]);
    CHECK_EQ_INT(cuDeviceGetCount(&count), CUDA_SUCCESS);
    CHECK_EQ_INT(count, 3);
    check_no_context();
    check_primary();
    check_context_ids();
    check_stack_and_threads();
    check_host_access_faults();
    check_guard_page();
    check_misaligned();
    check_queued_work();
    check_pointer_attributes();
    check_pools();
    check_vmm();
    check_ipc(argv[0]);
    check_managed();
    check_devices();
    check_host_memory();
    check_teardown();
    check_pageable(argv[0]);
    check_module_rules();
    check_kernel_cache();
    check_versions();
    check_injection(argv[0]);
    check_rules_kept();
    check_rules_broken(argv[0]);
    check_cxxflags(argv[0]);
    check_chance(argv[0]);
    check_nvrtc_cache(argv[0]);
    CHECK_DONE();
}
