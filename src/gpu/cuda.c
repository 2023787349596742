/* The CUDA driver behind a table of function pointers filled by dlsym, so that the preloaded
 * library starts on hosts without any CUDA driver. Every driver call goes through CU_CHECK. */
#include "gpu/cuda.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "util/log.h"

/* Name in this file, and the versioned symbol the driver exports. */
#define TJ_CU_SYMBOLS(_X)                                                                          \
    _X(cuInit, "cuInit")                                                                           \
    _X(cuGetErrorString, "cuGetErrorString")                                                       \
    _X(cuDeviceGetCount, "cuDeviceGetCount")                                                       \
    _X(cuDeviceGet, "cuDeviceGet")                                                                 \
    _X(cuDeviceGetAttribute, "cuDeviceGetAttribute")                                               \
    _X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")                                       \
    _X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2")                                  \
    _X(cuCtxSetCurrent, "cuCtxSetCurrent")                                                         \
    _X(cuPointerGetAttributes, "cuPointerGetAttributes")                                           \
    _X(cuModuleLoadData, "cuModuleLoadData")                                                       \
    _X(cuModuleGetFunction, "cuModuleGetFunction")                                                 \
    _X(cuModuleUnload, "cuModuleUnload")                                                           \
    _X(cuLaunchKernel, "cuLaunchKernel")                                                           \
    _X(cuStreamCreate, "cuStreamCreate")                                                           \
    _X(cuStreamSynchronize, "cuStreamSynchronize")                                                 \
    _X(cuStreamDestroy, "cuStreamDestroy_v2")                                                      \
    _X(cuMemAlloc, "cuMemAlloc_v2")                                                                \
    _X(cuMemFree, "cuMemFree_v2")                                                                  \
    _X(cuMemHostAlloc, "cuMemHostAlloc")                                                           \
    _X(cuMemFreeHost, "cuMemFreeHost")                                                             \
    _X(cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2")                                  \
    _X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2")                                                  \
    _X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")                                                  \
    _X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")                                                  \
    _X(cuMemcpy2DAsync, "cuMemcpy2DAsync_v2")                                                      \
    _X(cuMemsetD8Async, "cuMemsetD8Async")                                                         \
    _X(cuEventCreate, "cuEventCreate")                                                             \
    _X(cuEventRecord, "cuEventRecord")                                                             \
    _X(cuEventSynchronize, "cuEventSynchronize")                                                   \
    _X(cuEventElapsedTime, "cuEventElapsedTime_v2")                                                \
    _X(cuEventDestroy, "cuEventDestroy_v2")

static struct {
#define TJ_CU_FIELD(_name, _sym) __typeof__(&_name) _name;
    TJ_CU_SYMBOLS(TJ_CU_FIELD)
#undef TJ_CU_FIELD
} cu;

#define TJ_MAX_DEVICES 64

typedef struct {
    CUcontext ctx;
    CUstream stream;
    bool ready;
} device_t;

static void *libcuda;
static tj_status_t init_status = TJ_ERR_NO_CUDA;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static device_t devices[TJ_MAX_DEVICES];
static int device_count;
static _Thread_local int current = -1;

struct tj_gpu_module {
    CUmodule module;
};

static tj_status_t cu_check(CUresult rc, const char *call, const char *file, int line)
{
    const char *msg = NULL;
    if (rc == CUDA_SUCCESS)
        return TJ_OK;
    if (cu.cuGetErrorString == NULL || cu.cuGetErrorString(rc, &msg) != CUDA_SUCCESS || !msg)
        msg = "unknown error";
    tj_log_write(TJ_LOG_WARN, file, line, "cuda call %s failed: %s (%d)", call, msg, (int)rc);
    return TJ_ERR_CUDA;
}

/* Every driver call: log the call, the error string, file and line; map to TJ_ERR_CUDA. */
#define CU_CHECK(_call) cu_check(cu._call, #_call, __FILE__, __LINE__)

static void init_driver(void)
{
    int count = 0;

    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == NULL) {
        tj_log_debug("no cuda driver: %s", dlerror());
        return;
    }
#define TJ_CU_LOAD(_name, _sym)                                                                    \
    *(void **)&cu._name = dlsym(libcuda, _sym);                                                    \
    if (cu._name == NULL) {                                                                        \
        tj_log_warn("cuda driver lacks %s; device buffers go to the system MPI", _sym);            \
        return;                                                                                    \
    }
    TJ_CU_SYMBOLS(TJ_CU_LOAD)
#undef TJ_CU_LOAD
    if (cu.cuInit(0) != CUDA_SUCCESS || cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
        tj_log_debug("cuda driver present but no usable device");
        return;
    }
    device_count = count < TJ_MAX_DEVICES ? count : TJ_MAX_DEVICES;
    init_status = TJ_OK;
}

tj_status_t tj_gpu_init(void)
{
    pthread_once(&init_once, init_driver);
    return init_status;
}

bool tj_gpu_available(void)
{
    return tj_gpu_init() == TJ_OK;
}

tj_mem_t tj_gpu_classify(const void *ptr, int *device)
{
    CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                    CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    void *data[3] = {&type, &managed, &ordinal};

    if (ptr == NULL || tj_gpu_init() != TJ_OK)
        return TJ_MEM_HOST;
    /* Unknown host memory is not an error for the plural query: it reports type 0. */
    if (cu.cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        return TJ_MEM_HOST;
    if (device != NULL)
        *device = ordinal;
    if (managed)
        return TJ_MEM_MANAGED;
    if (type == CU_MEMORYTYPE_DEVICE)
        return TJ_MEM_DEVICE;
    if (type == CU_MEMORYTYPE_HOST)
        return TJ_MEM_PINNED;
    return TJ_MEM_HOST;
}

tj_status_t tj_gpu_sm(int device, int *sm)
{
    int major, minor;
    CUdevice dev;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                            dev))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                            dev))) != TJ_OK)
        return st;
    *sm = major * 10 + minor;
    return TJ_OK;
}

tj_status_t tj_gpu_use(int device)
{
    device_t *d;
    CUdevice dev;
    tj_status_t st = TJ_OK;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if (device < 0 || device >= device_count)
        return TJ_ERR_INVALID;
    d = &devices[device];
    if (!d->ready) {
        pthread_mutex_lock(&device_lock);
        if (!d->ready) {
            if ((st = CU_CHECK(cuDeviceGet(&dev, device))) == TJ_OK &&
                (st = CU_CHECK(cuDevicePrimaryCtxRetain(&d->ctx, dev))) == TJ_OK &&
                (st = CU_CHECK(cuCtxSetCurrent(d->ctx))) == TJ_OK &&
                (st = CU_CHECK(cuStreamCreate(&d->stream, CU_STREAM_DEFAULT))) == TJ_OK)
                d->ready = true;
        }
        pthread_mutex_unlock(&device_lock);
        if (st != TJ_OK)
            return st;
    }
    /* The context is made current per thread; the cheap call is repeated only on a change. */
    if (current != device) {
        if ((st = CU_CHECK(cuCtxSetCurrent(d->ctx))) != TJ_OK)
            return st;
        current = device;
    }
    return TJ_OK;
}

static CUstream stream(void)
{
    return current >= 0 ? devices[current].stream : NULL;
}

tj_status_t tj_gpu_module_load(const void *image, size_t len, const char *name,
                               tj_gpu_module_t **module, tj_gpu_function_t *fn)
{
    tj_gpu_module_t *m;
    CUfunction f;
    tj_status_t st;

    (void)len; /* CUBIN and PTX images carry their own length */
    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return TJ_ERR_NOMEM;
    if ((st = CU_CHECK(cuModuleLoadData(&m->module, image))) != TJ_OK)
        goto out_free;
    if ((st = CU_CHECK(cuModuleGetFunction(&f, m->module, name))) != TJ_OK)
        goto out_unload;
    *module = m;
    *fn = f;
    return TJ_OK;
out_unload:
    cu.cuModuleUnload(m->module);
out_free:
    free(m);
    return st;
}

void tj_gpu_module_unload(tj_gpu_module_t *module)
{
    if (module == NULL)
        return;
    cu.cuModuleUnload(module->module);
    free(module);
}

tj_status_t tj_gpu_launch(tj_gpu_function_t fn, const unsigned grid[3], const unsigned block[3],
                          void **args)
{
    return CU_CHECK(cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
                                   block[2], 0, stream(), args, NULL));
}

tj_status_t tj_gpu_sync(void)
{
    return CU_CHECK(cuStreamSynchronize(stream()));
}

tj_status_t tj_gpu_copy_dtoh(void *dst, tj_devptr_t src, size_t len)
{
    tj_status_t st = CU_CHECK(cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, len, stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_copy_htod(tj_devptr_t dst, const void *src, size_t len)
{
    tj_status_t st = CU_CHECK(cuMemcpyHtoDAsync((CUdeviceptr)dst, src, len, stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_copy_dtod(tj_devptr_t dst, tj_devptr_t src, size_t len)
{
    tj_status_t st = CU_CHECK(cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, len, stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_alloc(size_t len, tj_devptr_t *ptr)
{
    CUdeviceptr p;
    tj_status_t st = CU_CHECK(cuMemAlloc(&p, len ? len : 1));
    if (st == TJ_OK)
        *ptr = (tj_devptr_t)p;
    return st;
}

void tj_gpu_free(tj_devptr_t ptr)
{
    if (ptr != 0)
        CU_CHECK(cuMemFree((CUdeviceptr)ptr));
}

tj_status_t tj_gpu_alloc_host(size_t len, void **ptr)
{
    void *p;
    tj_status_t st = CU_CHECK(
        cuMemHostAlloc(&p, len ? len : 1, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    if (st == TJ_OK)
        *ptr = p;
    return st;
}

void tj_gpu_free_host(void *ptr)
{
    if (ptr != NULL)
        CU_CHECK(cuMemFreeHost(ptr));
}

tj_status_t tj_gpu_host_devptr(void *host, tj_devptr_t *dev)
{
    CUdeviceptr p;
    tj_status_t st = CU_CHECK(cuMemHostGetDevicePointer(&p, host, 0));
    if (st == TJ_OK)
        *dev = (tj_devptr_t)p;
    return st;
}

tj_status_t tj_gpu_memset(tj_devptr_t dst, unsigned char value, size_t len)
{
    tj_status_t st = CU_CHECK(cuMemsetD8Async((CUdeviceptr)dst, value, len, stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_copy_2d(tj_devptr_t dst, size_t dpitch, tj_devptr_t src, size_t spitch,
                           size_t width, size_t height)
{
    CUDA_MEMCPY2D c = {0};
    c.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.srcDevice = (CUdeviceptr)src;
    c.srcPitch = spitch;
    c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
    c.dstDevice = (CUdeviceptr)dst;
    c.dstPitch = dpitch;
    c.WidthInBytes = width;
    c.Height = height;
    return CU_CHECK(cuMemcpy2DAsync(&c, stream()));
}

tj_status_t tj_gpu_event_time(void (*work)(void *), void *arg, int reps, double *seconds)
{
    CUevent start, stop;
    float ms = 0;
    tj_status_t st;

    if ((st = CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT))) != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT))) != TJ_OK)
        goto out_start;
    if ((st = CU_CHECK(cuEventRecord(start, stream()))) != TJ_OK)
        goto out_stop;
    for (int i = 0; i < reps; i++)
        work(arg);
    if ((st = CU_CHECK(cuEventRecord(stop, stream()))) != TJ_OK ||
        (st = CU_CHECK(cuEventSynchronize(stop))) != TJ_OK ||
        (st = CU_CHECK(cuEventElapsedTime(&ms, start, stop))) != TJ_OK)
        goto out_stop;
    *seconds = ms * 1e-3 / (reps > 0 ? reps : 1);
out_stop:
    cu.cuEventDestroy(stop);
out_start:
    cu.cuEventDestroy(start);
    return st;
}

void tj_gpu_finalize(void)
{
    CUdevice dev;
    if (init_status != TJ_OK)
        return;
    pthread_mutex_lock(&device_lock);
    for (int i = 0; i < device_count; i++) {
        device_t *d = &devices[i];
        if (!d->ready)
            continue;
        cu.cuCtxSetCurrent(d->ctx);
        cu.cuStreamDestroy(d->stream);
        if (cu.cuDeviceGet(&dev, i) == CUDA_SUCCESS)
            cu.cuDevicePrimaryCtxRelease(dev);
        d->ready = false;
    }
    current = -1;
    pthread_mutex_unlock(&device_lock);
}
