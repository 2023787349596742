/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA driver behind a table of function pointers filled by dlsym, so that the preloaded
 * library starts on hosts without any CUDA driver. Every driver call goes through CU_CHECK.
 *
 * typejit works in whatever context owns the user's buffer: a scope pushes that context (when
 * it is not already current) and pops it on the way out, so the application's current context
 * is never changed. Each context typejit has worked in gets a record with its own stream; a
 * sticky error (a faulting kernel) marks the record dead, reported once, and typejit stops
 * using that context. */
#include "gpu/cuda.h"

#include <cuda.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/common.h"
#include "util/log.h"
#include "util/stats.h"

/* Field, whether the library needs it, and the exported names to try in order: the versioned
 * name cuda.h maps to first, then older ones a driver of the supported range may have instead.
 * An optional entry (cuCtxGetId, CUDA 12.0) is used when the driver has it. */
#define TJ_CU_SYMBOLS(_X)                                                                          \
    _X(cuInit, 1, "cuInit", NULL)                                                                  \
    _X(cuGetErrorString, 1, "cuGetErrorString", NULL)                                              \
    _X(cuDriverGetVersion, 1, "cuDriverGetVersion", NULL)                                          \
    _X(cuDeviceGetCount, 1, "cuDeviceGetCount", NULL)                                              \
    _X(cuDeviceGet, 1, "cuDeviceGet", NULL)                                                        \
    _X(cuDeviceGetAttribute, 1, "cuDeviceGetAttribute", NULL)                                      \
    _X(cuDeviceGetName, 1, "cuDeviceGetName", NULL)                                                \
    _X(cuDevicePrimaryCtxRetain, 1, "cuDevicePrimaryCtxRetain", NULL)                              \
    _X(cuDevicePrimaryCtxRelease, 1, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease")  \
    _X(cuDevicePrimaryCtxGetState, 1, "cuDevicePrimaryCtxGetState", NULL)                          \
    _X(cuCtxGetCurrent, 1, "cuCtxGetCurrent", NULL)                                                \
    _X(cuCtxSetCurrent, 1, "cuCtxSetCurrent", NULL)                                                \
    _X(cuCtxPushCurrent, 1, "cuCtxPushCurrent_v2", "cuCtxPushCurrent")                             \
    _X(cuCtxPopCurrent, 1, "cuCtxPopCurrent_v2", "cuCtxPopCurrent")                                \
    _X(cuCtxGetDevice, 1, "cuCtxGetDevice", NULL)                                                  \
    _X(cuCtxGetId, 0, "cuCtxGetId", NULL)                                                          \
    _X(cuPointerGetAttributes, 1, "cuPointerGetAttributes", NULL)                                  \
    _X(cuPointerGetAttribute, 1, "cuPointerGetAttribute", NULL)                                    \
    _X(cuMemRetainAllocationHandle, 0, "cuMemRetainAllocationHandle", NULL)                        \
    _X(cuMemGetAllocationPropertiesFromHandle, 0, "cuMemGetAllocationPropertiesFromHandle", NULL)  \
    _X(cuMemRelease, 0, "cuMemRelease", NULL)                                                      \
    _X(cuMemGetAccess, 0, "cuMemGetAccess", NULL)                                                  \
    _X(cuModuleLoadData, 1, "cuModuleLoadData", NULL)                                              \
    _X(cuModuleGetFunction, 1, "cuModuleGetFunction", NULL)                                        \
    _X(cuModuleUnload, 1, "cuModuleUnload", NULL)                                                  \
    _X(cuLaunchKernel, 1, "cuLaunchKernel", NULL)                                                  \
    _X(cuStreamCreate, 1, "cuStreamCreate", NULL)                                                  \
    _X(cuStreamSynchronize, 1, "cuStreamSynchronize", NULL)                                        \
    _X(cuStreamDestroy, 1, "cuStreamDestroy_v2", "cuStreamDestroy")                                \
    _X(cuMemAlloc, 1, "cuMemAlloc_v2", NULL)                                                       \
    _X(cuMemFree, 1, "cuMemFree_v2", NULL)                                                         \
    _X(cuMemHostAlloc, 1, "cuMemHostAlloc", NULL)                                                  \
    _X(cuMemFreeHost, 1, "cuMemFreeHost", NULL)                                                    \
    _X(cuMemHostGetDevicePointer, 1, "cuMemHostGetDevicePointer_v2", NULL)                         \
    _X(cuMemcpyHtoDAsync, 1, "cuMemcpyHtoDAsync_v2", NULL)                                         \
    _X(cuMemcpyDtoHAsync, 1, "cuMemcpyDtoHAsync_v2", NULL)                                         \
    _X(cuMemsetD8Async, 1, "cuMemsetD8Async", NULL)                                                \
    _X(cuEventCreate, 1, "cuEventCreate", NULL)                                                    \
    _X(cuEventRecord, 1, "cuEventRecord", NULL)                                                    \
    _X(cuEventQuery, 1, "cuEventQuery", NULL)                                                      \
    _X(cuEventSynchronize, 1, "cuEventSynchronize", NULL)                                          \
    _X(cuEventDestroy, 1, "cuEventDestroy_v2", "cuEventDestroy")

static struct {
#define TJ_CU_FIELD(_name, _required, _sym, _alt) __typeof__(&_name) _name;
    TJ_CU_SYMBOLS(TJ_CU_FIELD)
#undef TJ_CU_FIELD
} cu;

/* Contexts typejit has worked in; records are never removed before tj_gpu_finalize. */
#define TJ_GPU_MAX_CONTEXTS 64
/* Devices whose primary contexts typejit may retain for memory without a context of its own. */
#define TJ_GPU_MAX_DEVICES 64
/* Allocations per context whose ids tj_gpu_enter_at remembers (a power of two). */
#define TJ_GPU_SEEN 16
/* Distinct (call site, error) pairs logged at warning level; repeats go to the debug level. */
#define TJ_GPU_MAX_REPORTED 64

/* Threads read a record without entry_lock; what a renewal changes (stream, id, gen, dead) is
 * atomic, the rest is written before the record is published (nentries). */
typedef struct {
    CUcontext ctx;
    CUdevice dev;
    int ordinal;
    _Atomic(CUstream) stream;
    bool retained;    /* typejit holds a reference to this primary context */
    atomic_bool dead; /* a sticky error: nothing more is done in this context */
    /* Which instance of the context behind the handle: cuCtxGetId (0 where the driver lacks
     * it), and typejit's count of the instances seen (tj_gpu_generation). A reset primary
     * context (cudaDeviceReset) keeps its handle but takes everything made in it along. */
    atomic_ullong id;
    atomic_uint gen;
    /* Ids of allocations found in the present instance (tj_gpu_enter_at), by their low bits:
     * while a query still finds one, the instance is the same (a reset frees every
     * allocation). 0: none. */
    atomic_ullong seen[TJ_GPU_SEEN];
    /* Ticks of the event records on the stream (tj_gpu_event_implied). */
    atomic_ullong event_ticks;
} ctx_entry_t;

static void *libcuda;
static tj_status_t init_status = TJ_ERR_NO_CUDA;
/* What tj_gpu_init found, for the hot paths' one-load test (tj_gpu_absent). */
atomic_int tj_gpu_state = TJ_GPU_UNKNOWN;
static int driver_version;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t entry_lock = PTHREAD_MUTEX_INITIALIZER;
static ctx_entry_t entries[TJ_GPU_MAX_CONTEXTS];
static atomic_int nentries;
/* Devices the driver has, at most TJ_GPU_MAX_DEVICES of them, and the primary contexts typejit
 * retained for memory without a context (primary_of), released at finalize. */
static int ndevices;
static _Atomic(CUcontext) primaries[TJ_GPU_MAX_DEVICES];
/* Primary contexts tj_gpu_use retained for the typejit command, released at finalize. */
static CUdevice used[TJ_GPU_MAX_CONTEXTS];
static int nused;

/* Initial-exec: read on every device call, as one load (the library is loaded at start). */
#define TLS _Thread_local __attribute__((tls_model("initial-exec")))
static TLS ctx_entry_t *here; /* the record of the innermost scope */
static TLS int releasing;     /* inside tj_gpu_enter_to_release scopes */
/* The context this thread had current outside typejit's scopes when typejit last asked
 * (tj_gpu_enter_at assumes it still is), and the innermost scope, for calls that must check
 * an assumed one. */
static TLS CUcontext last_current;
static TLS tj_gpu_scope_t *innermost;

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int line;
    CUresult rc;
} reported[TJ_GPU_MAX_REPORTED];
static int nreported;

struct tj_gpu_module {
    CUmodule module;
    CUcontext ctx;
    unsigned gen; /* the context's instance it was loaded in */
};

/* Errors after which the context cannot be used again (the CUDA documentation's "sticky"
 * errors: the process must destroy the context). */
static bool is_sticky(CUresult rc)
{
    switch (rc) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
        return true;
    default:
        return false;
    }
}

/* True the first time this (call site, error) pair is seen. */
static bool first_report(int line, CUresult rc)
{
    bool first = true;
    pthread_mutex_lock(&report_lock);
    for (int i = 0; i < nreported && first; i++)
        first = reported[i].line != line || reported[i].rc != rc;
    if (first && nreported < TJ_GPU_MAX_REPORTED) {
        reported[nreported].line = line;
        reported[nreported].rc = rc;
        nreported++;
    }
    pthread_mutex_unlock(&report_lock);
    return first;
}

static tj_status_t cu_failed(CUresult rc, const char *call, bool quiet, const char *file, int line)
{
    tj_log_level_t level;
    const char *msg = NULL;
    if (cu.cuGetErrorString == NULL || cu.cuGetErrorString(rc, &msg) != CUDA_SUCCESS || !msg)
        msg = "unknown error";
    if (is_sticky(rc) && here != NULL) {
        if (!atomic_exchange(&here->dead, true) && tj_log_level >= TJ_LOG_ERROR)
            tj_log_write(TJ_LOG_ERROR, file, line,
                         "cuda call %s failed: %s (%d); the cuda context of device %d is "
                         "unusable, typejit stops using it (its buffers now get MPI errors)",
                         call, msg, (int)rc, here->ordinal);
        return TJ_ERR_CONTEXT;
    }
    /* A failure repeated on every call is logged once; its repeats are debug lines, and so are
     * failures while releasing what typejit made in a context the application destroyed. */
    level = !releasing && !quiet && first_report(line, rc) ? TJ_LOG_WARN : TJ_LOG_DEBUG;
    if (tj_log_level >= (int)level)
        tj_log_write(level, file, line, "cuda call %s failed: %s (%d)", call, msg, (int)rc);
    return TJ_ERR_CUDA;
}

static inline tj_status_t cu_check(CUresult rc, const char *call, bool quiet, const char *file,
                                   int line)
{
    return TJ_LIKELY(rc == CUDA_SUCCESS) ? TJ_OK : cu_failed(rc, call, quiet, file, line);
}

/* Every driver call: log the call, the error string, file and line; map to TJ_ERR_CUDA, or to
 * TJ_ERR_CONTEXT for a sticky error in a scope's context. */
#define CU_CHECK(_call) cu_check(cu._call, #_call, false, __FILE__, __LINE__)
/* The same for a call whose failure has a fallback the caller takes and reports itself: logged
 * at debug level (a sticky error is still an error). */
#define CU_CHECK_QUIET(_call) cu_check(cu._call, #_call, true, __FILE__, __LINE__)

/* The first of two names the driver exports (@p alt may be NULL). */
static void *symbol(const char *name, const char *alt)
{
    void *p = dlsym(libcuda, name);
    return p != NULL || alt == NULL ? p : dlsym(libcuda, alt);
}

static bool load_symbols(void)
{
    void *p;
#define TJ_CU_LOAD(_name, _required, _sym, _alt)                                                   \
    p = symbol(_sym, _alt);                                                                        \
    *(void **)&cu._name = p;                                                                       \
    if (p == NULL && (_required)) {                                                                \
        tj_log_warn("cuda driver lacks %s; device buffers go to the system MPI", _sym);            \
        return false;                                                                              \
    }
    TJ_CU_SYMBOLS(TJ_CU_LOAD)
#undef TJ_CU_LOAD
    return true;
}

static void init_driver(void)
{
    int count = 0;

    if (atomic_load(&tj_gpu_state) == TJ_GPU_ABSENT)
        return; /* tj_gpu_driver_installed found none, and said so */
    libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == NULL) {
        tj_log_debug("no cuda driver: %s", dlerror());
        return;
    }
    if (!load_symbols())
        return;
    if (cu.cuDriverGetVersion(&driver_version) != CUDA_SUCCESS)
        driver_version = 0;
    if (cu.cuInit(0) != CUDA_SUCCESS || cu.cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
        tj_log_debug("cuda driver %d present but no usable device", driver_version);
        return;
    }
    tj_log_debug("cuda driver %d, %d device(s)", driver_version, count);
    ndevices = count < TJ_GPU_MAX_DEVICES ? count : TJ_GPU_MAX_DEVICES;
    init_status = TJ_OK;
}

/* init_driver with its result published for tj_gpu_absent. */
static void init_once_body(void)
{
    init_driver();
    atomic_store(&tj_gpu_state, init_status == TJ_OK ? TJ_GPU_PRESENT : TJ_GPU_ABSENT);
}

/* What tj_gpu_driver_installed found. */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool installed;

static void probe_driver(void)
{
    const char *err;
    void *lib;

    if (atomic_load(&tj_gpu_state) != TJ_GPU_UNKNOWN) {
        installed = atomic_load(&tj_gpu_state) == TJ_GPU_PRESENT;
        return;
    }
    /* RTLD_NOLOAD searches the library path as dlopen does but maps nothing: NULL with no error
     * when the file is there and not loaded yet, NULL with an error when there is none. */
    (void)dlerror();
    lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    err = lib == NULL ? dlerror() : NULL;
    if (lib != NULL)
        dlclose(lib);
    installed = err == NULL;
    if (!installed) {
        int unknown = TJ_GPU_UNKNOWN;
        tj_log_debug("no cuda driver: %s", err);
        atomic_compare_exchange_strong(&tj_gpu_state, &unknown, TJ_GPU_ABSENT);
    }
}

bool tj_gpu_driver_installed(void)
{
    if (tj_gpu_absent())
        return false;
    pthread_once(&probe_once, probe_driver);
    return installed && !tj_gpu_absent();
}

/* cuCtxGetCurrent of a driver someone else loaded; the reference taken to find it is kept, so
 * that the driver stays for the process. */
static _Atomic(__typeof__(&cuCtxGetCurrent)) loaded_ctx_get;

/* The loader's count of objects loaded when the process's objects were last searched for the
 * driver without finding it: until it changes, no search is needed (a commit of a process that
 * never loads the driver pays one callback, not a walk of every object). */
static atomic_ullong searched_adds = ~0ULL;

typedef struct {
    char path[PATH_MAX];
    unsigned long long adds;
    bool first;
} driver_search_t;

/* Finds the path of a loaded libcuda.so.1 (or libcuda.so) among the process's objects; stops at
 * the first object when nothing was loaded since the last search. */
static int find_driver(struct dl_phdr_info *info, size_t size, void *arg)
{
    driver_search_t *s = arg;
    const char *name = info->dlpi_name, *base;

    if (s->first) {
        s->first = false;
        s->adds = size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)
                      ? info->dlpi_adds
                      : 0;
        if (s->adds != 0 && s->adds == atomic_load(&searched_adds))
            return 1;
    }
    if (name == NULL)
        return 0;
    base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
    if (strcmp(base, "libcuda.so.1") != 0 && strcmp(base, "libcuda.so") != 0)
        return 0;
    snprintf(s->path, sizeof(s->path), "%s", name);
    return 1;
}

bool tj_gpu_context_current(void)
{
    __typeof__(&cuCtxGetCurrent) get;
    CUcontext ctx = NULL;

    if (tj_gpu_absent())
        return false;
    if (atomic_load_explicit(&tj_gpu_state, memory_order_acquire) == TJ_GPU_PRESENT)
        return cu.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != NULL;
    if ((get = atomic_load(&loaded_ctx_get)) == NULL) {
        driver_search_t search = {.first = true};
        void *lib;

        dl_iterate_phdr(find_driver, &search);
        if (search.path[0] == '\0') {
            atomic_store(&searched_adds, search.adds);
            return false;
        }
        if ((lib = dlopen(search.path, RTLD_LAZY | RTLD_NOLOAD)) == NULL)
            return false;
        if ((*(void **)&get = dlsym(lib, "cuCtxGetCurrent")) == NULL) {
            dlclose(lib);
            return false;
        }
        atomic_store(&loaded_ctx_get, get);
    }
    /* Before anyone's cuInit the driver answers CUDA_ERROR_NOT_INITIALIZED: no context. */
    return get(&ctx) == CUDA_SUCCESS && ctx != NULL;
}

static atomic_bool memory_met;

bool tj_gpu_memory_met(void)
{
    return atomic_load_explicit(&memory_met, memory_order_relaxed);
}

tj_status_t tj_gpu_init(void)
{
    if (atomic_load_explicit(&tj_gpu_state, memory_order_acquire) == TJ_GPU_PRESENT)
        return TJ_OK;
    pthread_once(&init_once, init_once_body);
    return init_status;
}

int tj_gpu_driver_version(void)
{
    pthread_once(&init_once, init_once_body);
    return driver_version;
}

/* A query the driver failed: one error line naming the buffer and the reason (its repeats, the
 * same call failing the same way, at debug level), and TJ_ERR_CUDA for the caller to pass up. */
static tj_status_t cannot_tell(const void *ptr, const char *call, CUresult rc, int line)
{
    const char *msg = NULL;
    tj_log_level_t level = first_report(line, rc) ? TJ_LOG_ERROR : TJ_LOG_DEBUG;

    if (cu.cuGetErrorString == NULL || cu.cuGetErrorString(rc, &msg) != CUDA_SUCCESS || !msg)
        msg = "unknown error";
    if (tj_log_level >= (int)level)
        tj_log_write(level, __FILE__, line, "cannot tell where buffer %p lies: %s failed: %s (%d)",
                     ptr, call, msg, (int)rc);
    return TJ_ERR_CUDA;
}

#define CANNOT_TELL(_ptr, _call, _rc) cannot_tell((_ptr), (_call), (_rc), __LINE__)

/* The primary context of device @p ordinal, retained by typejit at its first need (memory without
 * a context of its own runs there) and released by tj_gpu_finalize. Retaining it creates it when
 * the application has not, as any user of the device's primary context would. */
static tj_status_t primary_of(int ordinal, CUcontext *ctx)
{
    CUcontext c = atomic_load_explicit(&primaries[ordinal], memory_order_acquire);
    CUdevice dev;
    tj_status_t st = TJ_OK;

    if (c == NULL) {
        pthread_mutex_lock(&entry_lock);
        c = atomic_load_explicit(&primaries[ordinal], memory_order_relaxed);
        if (c == NULL && (st = CU_CHECK(cuDeviceGet(&dev, ordinal))) == TJ_OK &&
            (st = CU_CHECK(cuDevicePrimaryCtxRetain(&c, dev))) == TJ_OK)
            atomic_store_explicit(&primaries[ordinal], c, memory_order_release);
        pthread_mutex_unlock(&entry_lock);
    }
    if (st == TJ_OK)
        *ctx = c;
    return st;
}

/* The properties of the VMM allocation mapped at @p ptr (its location): the handle retained,
 * read and released again. */
static tj_status_t vmm_props(const void *ptr, CUmemAllocationProp *prop)
{
    CUmemGenericAllocationHandle h;
    CUresult rc;

    if (cu.cuMemRetainAllocationHandle == NULL ||
        cu.cuMemGetAllocationPropertiesFromHandle == NULL || cu.cuMemRelease == NULL ||
        cu.cuMemGetAccess == NULL) {
        tj_log_error("cannot tell where buffer %p lies: it has no cuda context, and this cuda "
                     "driver lacks the virtual memory management calls that would say",
                     ptr);
        return TJ_ERR_CUDA;
    }
    if ((rc = cu.cuMemRetainAllocationHandle(&h, (void *)ptr)) != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuMemRetainAllocationHandle", rc);
    memset(prop, 0, sizeof(*prop));
    rc = cu.cuMemGetAllocationPropertiesFromHandle(prop, h);
    cu.cuMemRelease(h);
    if (rc != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuMemGetAllocationPropertiesFromHandle", rc);
    return TJ_OK;
}

/* The access @p loc has to the mapping at @p ptr: CU_MEM_ACCESS_FLAGS_PROT_*. A location the
 * driver will not answer for has none. */
static unsigned long long access_of(const void *ptr, CUmemLocationType type, int id)
{
    CUmemLocation loc = {.type = type, .id = id};
    unsigned long long flags = 0;

    if (cu.cuMemGetAccess(&flags, &loc, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS)
        return CU_MEM_ACCESS_FLAGS_PROT_NONE;
    return flags;
}

/* A VMM mapping of host memory (a host or host NUMA location): host memory the CPU may touch
 * when it was granted read and write access; otherwise only kernels and copies may, as device
 * memory, in the primary context of a device that has access (read and write if one has). */
static tj_status_t vmm_host(const void *ptr, const CUmemAllocationProp *prop, tj_gpu_ptr_t *p)
{
    int device = -1;

    if ((access_of(ptr, prop->location.type, prop->location.id) &
         CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
        p->kind = TJ_MEM_PINNED;
        return TJ_OK;
    }
    for (int d = 0; d < ndevices; d++) {
        unsigned long long flags = access_of(ptr, CU_MEM_LOCATION_TYPE_DEVICE, d);
        if ((flags & CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            device = d;
            break;
        }
        if ((flags & CU_MEM_ACCESS_FLAGS_PROT_READ) && device < 0)
            device = d;
    }
    if (device < 0) {
        tj_log_error("cannot move buffer %p: it is host memory mapped with cuMemMap that neither "
                     "the CPU nor any device was given access to (cuMemSetAccess)",
                     ptr);
        return TJ_ERR_CUDA;
    }
    p->kind = TJ_MEM_DEVICE;
    p->device = device;
    return TJ_OK;
}

/* Memory that belongs to no context (stream-ordered pools, VMM mappings; the driver answers
 * CONTEXT NULL): it runs in its device's primary context. The device is the pointer's device
 * ordinal, or, where that is not one, the location of the VMM allocation (managed memory, which
 * every device may touch, runs on the caller's current device, else device 0). Host memory
 * without a context is a host pool's (the CPU may touch it: pools of a host location are
 * accessible from the host by default) or a VMM mapping's, whose access decides. */
static tj_status_t contextless(const void *ptr, tj_gpu_ptr_t *p)
{
    CUmemAllocationProp prop;
    CUcontext ctx;
    CUmemoryPool pool = NULL;
    CUresult rc;
    tj_status_t st;

    if (p->kind == TJ_MEM_PINNED) {
        rc = cu.cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
                                      (CUdeviceptr)(uintptr_t)ptr);
        if (rc != CUDA_SUCCESS)
            return CANNOT_TELL(ptr, "cuPointerGetAttribute(MEMPOOL_HANDLE)", rc);
        if (pool != NULL)
            return TJ_OK;
        if ((st = vmm_props(ptr, &prop)) != TJ_OK || (st = vmm_host(ptr, &prop, p)) != TJ_OK)
            return st;
    } else if ((p->device < 0 || p->device >= ndevices) && p->kind == TJ_MEM_MANAGED) {
        CUdevice dev;
        p->device = cu.cuCtxGetDevice(&dev) == CUDA_SUCCESS && (int)dev < ndevices ? (int)dev : 0;
    } else if (p->device < 0 || p->device >= ndevices) {
        if ((st = vmm_props(ptr, &prop)) != TJ_OK)
            return st;
        if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
            if ((st = vmm_host(ptr, &prop, p)) != TJ_OK)
                return st;
        } else if ((p->device = prop.location.id) < 0 || p->device >= ndevices) {
            tj_log_error("cannot tell where buffer %p lies: the driver places it on device %d, "
                         "of %d",
                         ptr, p->device, ndevices);
            return TJ_ERR_CUDA;
        }
    }
    /* Host memory the CPU may touch needs no context. */
    if (p->kind == TJ_MEM_PINNED)
        return TJ_OK;
    if ((st = primary_of(p->device, &ctx)) == TJ_OK)
        p->ctx = ctx;
    return st;
}

tj_status_t tj_gpu_query(const void *ptr, tj_gpu_ptr_t *out)
{
    static CUpointer_attribute attrs[7] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,      CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,   CU_POINTER_ATTRIBUTE_CONTEXT,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CU_POINTER_ATTRIBUTE_BUFFER_ID};
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    CUcontext ctx = NULL;
    CUdeviceptr start = 0;
    size_t size = 0;
    unsigned long long id = 0;
    void *data[7] = {&type, &managed, &ordinal, &ctx, &start, &size, &id};
    tj_gpu_ptr_t p = {TJ_MEM_HOST, -1, NULL, 0, 0, 0, 0};
    CUresult rc;
    tj_status_t st;

    if (ptr == NULL || tj_gpu_init() != TJ_OK) {
        *out = p;
        return TJ_OK;
    }
    /* Memory CUDA does not know is no error for the plural query: every value is its default
     * (cuda.h). An error is the driver's failure to answer, documented with no retry: the caller
     * must not take the buffer for host memory. */
    rc = cu.cuPointerGetAttributes(7, attrs, data, (CUdeviceptr)(uintptr_t)ptr);
    if (rc != CUDA_SUCCESS)
        return CANNOT_TELL(ptr, "cuPointerGetAttributes", rc);
    if (managed)
        p.kind = TJ_MEM_MANAGED;
    else if (type == CU_MEMORYTYPE_DEVICE)
        p.kind = TJ_MEM_DEVICE;
    else if (type == CU_MEMORYTYPE_HOST)
        p.kind = TJ_MEM_PINNED;
    if (p.kind != TJ_MEM_HOST) {
        if (!atomic_load_explicit(&memory_met, memory_order_relaxed))
            atomic_store(&memory_met, true);
        p.device = ordinal;
        p.ctx = ctx;
        p.base = (uintptr_t)start;
        p.size = size;
        /* Memory of a context dies with its instance; memory of none (pools, VMM mappings) may
         * outlive a reset of the primary context it runs in, so its id says nothing of that. */
        p.id = ctx != NULL ? id : 0;
        if (ctx == NULL && (st = contextless(ptr, &p)) != TJ_OK)
            return st;
    }
    *out = p;
    return TJ_OK;
}

bool tj_gpu_inside(const tj_gpu_ptr_t *p, uintptr_t lo, uintptr_t hi)
{
    /* Host memory has no bounds typejit can see, and a driver that reports no range for an
     * allocation leaves nothing to check. */
    if (p->kind == TJ_MEM_HOST || p->size == 0)
        return true;
    return lo >= p->base && hi >= lo && hi - p->base <= p->size;
}

/* The record of @p ctx, which must be current; created on first use with its stream. A primary
 * context in use is retained, so that it outlives the application's last release until
 * tj_gpu_finalize has destroyed typejit's stream and modules in it. */
static ctx_entry_t *entry_for(CUcontext ctx)
{
    ctx_entry_t *e = NULL;
    unsigned long long id;
    CUstream stream;
    CUcontext primary;
    unsigned flags;
    int n, active = 0;

    n = atomic_load_explicit(&nentries, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (entries[i].ctx == ctx)
            return &entries[i];
    pthread_mutex_lock(&entry_lock);
    n = atomic_load_explicit(&nentries, memory_order_relaxed);
    for (int i = 0; i < n && e == NULL; i++)
        if (entries[i].ctx == ctx)
            e = &entries[i];
    if (e != NULL)
        goto out_unlock;
    if (n == TJ_GPU_MAX_CONTEXTS) {
        tj_log_warn_once("more than %d cuda contexts in use; buffers of the others go through "
                         "the system MPI's path",
                         TJ_GPU_MAX_CONTEXTS);
        goto out_unlock;
    }
    e = &entries[n];
    *e = (ctx_entry_t){.ctx = ctx};
    atomic_init(&e->dead, false);
    atomic_init(&e->gen, 1);
    for (int i = 0; i < TJ_GPU_SEEN; i++)
        atomic_init(&e->seen[i], 0);
    if (cu.cuCtxGetId == NULL || cu.cuCtxGetId(ctx, &id) != CUDA_SUCCESS)
        id = 0;
    atomic_init(&e->id, id);
    /* A blocking stream: work the application queued on the legacy default stream before its
     * MPI call is ordered before typejit's. */
    if (CU_CHECK(cuCtxGetDevice(&e->dev)) != TJ_OK ||
        CU_CHECK(cuStreamCreate(&stream, CU_STREAM_DEFAULT)) != TJ_OK) {
        e = NULL;
        goto out_unlock;
    }
    atomic_init(&e->stream, stream);
    e->ordinal = (int)e->dev;
    /* Retaining an inactive primary context would create one: only an active one can be the
     * context of a live allocation, so only then is it compared. */
    if (cu.cuDevicePrimaryCtxGetState(e->dev, &flags, &active) == CUDA_SUCCESS && active &&
        CU_CHECK(cuDevicePrimaryCtxRetain(&primary, e->dev)) == TJ_OK) {
        if (primary == ctx)
            e->retained = true;
        else
            cu.cuDevicePrimaryCtxRelease(e->dev);
    }
    atomic_store_explicit(&nentries, n + 1, memory_order_release);
out_unlock:
    pthread_mutex_unlock(&entry_lock);
    return e;
}

/* When the context behind @p e's handle is another instance than the one typejit set up (the
 * application reset or replaced it; the caller has made it current), start again there: what
 * typejit made in the old instance went with it and is never touched again (staging and
 * kernels compare generations), and a sticky error of the old instance is gone too. */
static void renew_if_replaced(ctx_entry_t *e)
{
    unsigned long long id;
    CUstream fresh;

    if (cu.cuCtxGetId == NULL || cu.cuCtxGetId(e->ctx, &id) != CUDA_SUCCESS ||
        id == atomic_load(&e->id))
        return;
    pthread_mutex_lock(&entry_lock);
    if (id != atomic_load(&e->id) && CU_CHECK(cuStreamCreate(&fresh, CU_STREAM_DEFAULT)) == TJ_OK) {
        /* The allocations seen were the old instance's. */
        for (int i = 0; i < TJ_GPU_SEEN; i++)
            atomic_store(&e->seen[i], 0);
        /* The stream first: a thread that sees the new instance's id uses its stream. */
        atomic_store(&e->stream, fresh);
        atomic_store(&e->id, id);
        atomic_fetch_add(&e->gen, 1);
        atomic_store(&e->dead, false);
        tj_log_info("the cuda context of device %d was reset or replaced; typejit's stream, "
                    "kernels and staging there are made anew",
                    e->ordinal);
    }
    pthread_mutex_unlock(&entry_lock);
}

/* The record of @p ctx if typejit has one, asking nothing. */
static ctx_entry_t *entry_known(CUcontext ctx)
{
    int n = atomic_load_explicit(&nentries, memory_order_acquire);

    for (int i = 0; i < n; i++)
        if (entries[i].ctx == ctx)
            return &entries[i];
    return NULL;
}

static void scope_opened(tj_gpu_scope_t *scope, ctx_entry_t *e, bool quiet)
{
    scope->entry = e;
    scope->releasing = quiet;
    releasing += quiet;
    here = e;
    scope->prev_scope = innermost;
    innermost = scope;
}

static tj_status_t enter(tj_gpu_ctx_t ctx, bool quiet, tj_gpu_scope_t *scope)
{
    CUcontext cur = NULL, popped;
    ctx_entry_t *e;
    tj_status_t st;

    scope->entry = NULL;
    scope->prev = here;
    scope->pushed = false;
    scope->releasing = false;
    scope->assumed = false;
    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if (ctx == NULL)
        return TJ_ERR_INVALID;
    if ((st = CU_CHECK(cuCtxGetCurrent(&cur))) != TJ_OK)
        return st;
    if (here == NULL)
        last_current = cur;
    if (cur != (CUcontext)ctx) {
        if (quiet && cu.cuCtxPushCurrent((CUcontext)ctx) != CUDA_SUCCESS)
            return TJ_ERR_CONTEXT;
        if (!quiet && (st = CU_CHECK(cuCtxPushCurrent((CUcontext)ctx))) != TJ_OK)
            return st;
        scope->pushed = true;
    }
    e = entry_for((CUcontext)ctx);
    if (e != NULL)
        renew_if_replaced(e);
    if (e == NULL || atomic_load(&e->dead)) {
        if (scope->pushed)
            cu.cuCtxPopCurrent(&popped);
        scope->pushed = false;
        return e == NULL ? TJ_ERR_CUDA : TJ_ERR_CONTEXT;
    }
    scope_opened(scope, e, quiet);
    return TJ_OK;
}

tj_status_t tj_gpu_enter(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    return enter(ctx, false, scope);
}

/* Open @p scope in @p e's context without a driver call, when the context current on the thread
 * is known to be it: the enclosing scope's (exactly known), or outside any scope the one this
 * thread had at typejit's last check (assumed). */
static bool enter_known(ctx_entry_t *e, tj_gpu_scope_t *scope)
{
    CUcontext cur = here != NULL ? here->ctx : last_current;

    if (cur != e->ctx || atomic_load_explicit(&e->dead, memory_order_relaxed))
        return false;
    scope->prev = here;
    scope->pushed = false;
    scope->releasing = false;
    scope->assumed = here == NULL;
    scope_opened(scope, e, false);
    return true;
}

tj_status_t tj_gpu_enter_at(const tj_gpu_ptr_t *p, tj_gpu_scope_t *scope)
{
    ctx_entry_t *e = here;
    tj_status_t st;

    /* Inside a scope of the same context (entered for this buffer earlier in the call), or the
     * context assumed current, its instance known by the allocation seen in it before. */
    if (e == NULL || e->ctx != (CUcontext)p->ctx) {
        e = entry_known((CUcontext)p->ctx);
        if (e == NULL || p->id == 0 ||
            atomic_load_explicit(&e->seen[p->id & (TJ_GPU_SEEN - 1)], memory_order_relaxed) !=
                p->id ||
            (here != NULL ? here->ctx : last_current) != e->ctx)
            goto slow;
    }
    if (atomic_load_explicit(&e->dead, memory_order_relaxed))
        goto slow;
    scope->entry = e;
    scope->prev = here;
    scope->prev_scope = innermost;
    scope->pushed = false;
    scope->releasing = false;
    scope->assumed = here == NULL;
    here = e;
    innermost = scope;
    return TJ_OK;
slow:
    if ((st = enter(p->ctx, false, scope)) == TJ_OK && p->id != 0)
        /* The instance was checked on entering (renew_if_replaced): the allocation is its. */
        atomic_store_explicit(&((ctx_entry_t *)scope->entry)->seen[p->id & (TJ_GPU_SEEN - 1)],
                              p->id, memory_order_relaxed);
    return st;
}

tj_status_t tj_gpu_enter_again(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    ctx_entry_t *e = entry_known((CUcontext)ctx);

    if (e != NULL && enter_known(e, scope))
        return TJ_OK;
    return enter(ctx, false, scope);
}

/* In an assumed scope (tj_gpu_enter_at), after a driver call failed: whether the context was
 * not current after all; it is then pushed, and the caller makes the call again. Calls that
 * make something in the current context (a module, memory, a stream) ask first
 * (confirm_current), so that nothing is made in another context. */
static bool was_not_current(void)
{
    tj_gpu_scope_t *scope = innermost;
    CUcontext cur = NULL;

    if (scope == NULL || !scope->assumed)
        return false;
    scope->assumed = false;
    if (cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return false;
    last_current = cur;
    if (cur == here->ctx || cu.cuCtxPushCurrent(here->ctx) != CUDA_SUCCESS)
        return false;
    scope->pushed = true;
    return true;
}

static void confirm_current(void)
{
    tj_gpu_scope_t *scope = innermost;
    CUcontext cur = NULL;

    if (scope == NULL || !scope->assumed)
        return;
    scope->assumed = false;
    if (cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return;
    last_current = cur;
    if (cur != here->ctx && cu.cuCtxPushCurrent(here->ctx) == CUDA_SUCCESS)
        scope->pushed = true;
}

tj_status_t tj_gpu_enter_to_release(tj_gpu_ctx_t ctx, tj_gpu_scope_t *scope)
{
    return enter(ctx, true, scope);
}

void tj_gpu_leave(tj_gpu_scope_t *scope)
{
    CUcontext popped;
    if (scope->pushed) {
        CU_CHECK(cuCtxPopCurrent(&popped));
        scope->pushed = false;
    }
    if (scope->releasing) {
        releasing--;
        scope->releasing = false;
    }
    here = scope->prev;
    innermost = scope->prev_scope;
}

/* The record of the innermost scope, else of the caller's current context. */
static ctx_entry_t *entry_here(void)
{
    CUcontext cur = NULL;
    if (here != NULL)
        return here;
    if (tj_gpu_init() != TJ_OK || cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS || cur == NULL)
        return NULL;
    return entry_for(cur);
}

unsigned tj_gpu_generation(void)
{
    ctx_entry_t *e = entry_here();
    return e != NULL ? atomic_load(&e->gen) : 0;
}

tj_gpu_ctx_t tj_gpu_current(void)
{
    CUcontext cur = NULL;
    if (here != NULL)
        return here->ctx;
    if (tj_gpu_init() != TJ_OK || cu.cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return NULL;
    return cur;
}

tj_gpu_ctx_t tj_gpu_current_instance(unsigned *generation)
{
    ctx_entry_t *e = here;

    if (e == NULL && (e = entry_here()) == NULL) {
        *generation = 0;
        return tj_gpu_current();
    }
    *generation = atomic_load(&e->gen);
    return e->ctx;
}

int tj_gpu_current_device(void)
{
    CUdevice dev;
    if (here != NULL)
        return here->ordinal;
    if (tj_gpu_current() == NULL || cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
        return -1;
    return (int)dev;
}

tj_status_t tj_gpu_use(int device)
{
    CUdevice dev;
    CUcontext ctx;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK)
        return st;
    pthread_mutex_lock(&entry_lock);
    if (nused == TJ_GPU_MAX_CONTEXTS) {
        st = TJ_ERR_INVALID;
    } else if ((st = CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev))) == TJ_OK) {
        used[nused++] = dev;
    }
    pthread_mutex_unlock(&entry_lock);
    if (st != TJ_OK)
        return st;
    if ((st = CU_CHECK(cuCtxSetCurrent(ctx))) != TJ_OK)
        return st;
    here = NULL;
    return entry_for(ctx) != NULL ? TJ_OK : TJ_ERR_CUDA;
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

tj_status_t tj_gpu_device_name(int device, char *name, size_t len)
{
    CUdevice dev;
    tj_status_t st;

    if ((st = tj_gpu_init()) != TJ_OK)
        return st;
    if (len == 0 || len > INT_MAX)
        return TJ_ERR_INVALID;
    if ((st = CU_CHECK(cuDeviceGet(&dev, device))) != TJ_OK ||
        (st = CU_CHECK(cuDeviceGetName(name, (int)len, dev))) != TJ_OK)
        return st;
    name[len - 1] = '\0';
    return TJ_OK;
}

static CUstream stream(void)
{
    ctx_entry_t *e = entry_here();
    return e != NULL ? atomic_load(&e->stream) : NULL;
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
    confirm_current();
    if ((st = CU_CHECK(cuCtxGetCurrent(&m->ctx))) != TJ_OK)
        goto out_free;
    m->gen = tj_gpu_generation();
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
    tj_gpu_scope_t scope;
    if (module == NULL)
        return;
    /* A module of a dead, destroyed or reset context went with it; nothing can be unloaded
     * there. */
    if (tj_gpu_enter_to_release(module->ctx, &scope) == TJ_OK) {
        if (tj_gpu_generation() == module->gen)
            CU_CHECK(cuModuleUnload(module->module));
        tj_gpu_leave(&scope);
    }
    free(module);
}

/* A driver call in the current scope, made again once when the scope was assumed and its
 * context turned out not to be current (was_not_current). */
#define IN_SCOPE(_st, _call)                                                                       \
    do {                                                                                           \
        CUresult rc_ = cu._call;                                                                   \
        if (rc_ != CUDA_SUCCESS && was_not_current())                                              \
            rc_ = cu._call;                                                                        \
        (_st) = cu_check(rc_, #_call, false, __FILE__, __LINE__);                                  \
    } while (0)

tj_status_t tj_gpu_launch(tj_gpu_function_t fn, const unsigned grid[3], const unsigned block[3],
                          void **args)
{
    tj_status_t st;

    IN_SCOPE(st, cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
                                block[2], 0, stream(), args, NULL));
    return st;
}

/* The microseconds since @p t0 (tj_clock_seconds), counted in gpu_wait_us: how long the host
 * was blocked by the device. */
static void waited_since(double t0)
{
    tj_stats_add(TJ_STAT_gpu_wait_us, (uint64_t)((tj_clock_seconds() - t0) * 1e6 + 0.5));
}

tj_status_t tj_gpu_sync(void)
{
    tj_status_t st;
    double t0 = tj_clock_seconds();

    /* The one place typejit waits for its stream: every wait is counted, and its time. */
    tj_stats_inc(TJ_STAT_gpu_waits);
    IN_SCOPE(st, cuStreamSynchronize(stream()));
    waited_since(t0);
    return st;
}

tj_status_t tj_gpu_copy_dtoh_async(void *dst, tj_devptr_t src, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, len, stream()));
    return st;
}

tj_status_t tj_gpu_copy_htod_async(tj_devptr_t dst, const void *src, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemcpyHtoDAsync((CUdeviceptr)dst, src, len, stream()));
    return st;
}

tj_status_t tj_gpu_copy_dtoh(void *dst, tj_devptr_t src, size_t len)
{
    tj_status_t st = tj_gpu_copy_dtoh_async(dst, src, len);
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_copy_htod(tj_devptr_t dst, const void *src, size_t len)
{
    tj_status_t st = tj_gpu_copy_htod_async(dst, src, len);
    return st == TJ_OK ? tj_gpu_sync() : st;
}

tj_status_t tj_gpu_alloc(size_t len, tj_devptr_t *ptr)
{
    CUdeviceptr p;
    tj_status_t st;

    confirm_current();
    st = CU_CHECK(cuMemAlloc(&p, len ? len : 1));
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
    tj_status_t st;

    confirm_current();
    st = CU_CHECK_QUIET(
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
    tj_status_t st;

    /* The device address is the current context's. */
    confirm_current();
    st = CU_CHECK_QUIET(cuMemHostGetDevicePointer(&p, host, 0));
    if (st == TJ_OK)
        *dev = (tj_devptr_t)p;
    return st;
}

tj_status_t tj_gpu_memset(tj_devptr_t dst, unsigned char value, size_t len)
{
    tj_status_t st;

    IN_SCOPE(st, cuMemsetD8Async((CUdeviceptr)dst, value, len, stream()));
    return st == TJ_OK ? tj_gpu_sync() : st;
}

/* ---- events --------------------------------------------------------------------------------
 * Events of typejit's streams, kept for reuse in one process-wide list under a spinning lock
 * (each section a few loads and stores), so that a steady deferred send creates none. */
struct tj_gpu_event {
    CUevent event;
    CUcontext ctx;
    unsigned gen;     /* the context's instance it was made in */
    atomic_int refs;  /* holders; the last release puts it back */
    atomic_bool done; /* a query or wait saw it complete */
    /* The context's event ticks just before and just after its record: an event whose record
     * ended before another's began is before it on the stream. */
    unsigned long long begun, ended;
    struct tj_gpu_event *next;
};

static atomic_flag events_lock = ATOMIC_FLAG_INIT;
static tj_gpu_event_t *events_free;

static void lock_events(void)
{
    while (atomic_flag_test_and_set_explicit(&events_lock, memory_order_acquire))
        ;
}

static void unlock_events(void)
{
    atomic_flag_clear_explicit(&events_lock, memory_order_release);
}

/* An event of the current scope's context and instance from the list, or NULL. */
static tj_gpu_event_t *event_reuse(CUcontext ctx, unsigned gen)
{
    tj_gpu_event_t *e, **at;

    lock_events();
    for (at = &events_free; *at != NULL; at = &(*at)->next)
        if ((*at)->ctx == ctx && (*at)->gen == gen)
            break;
    e = *at;
    if (e != NULL)
        *at = e->next;
    unlock_events();
    return e;
}

tj_status_t tj_gpu_event_record(tj_gpu_event_t **out)
{
    ctx_entry_t *e = here;
    tj_gpu_event_t *ev;
    tj_status_t st;
    unsigned gen;

    if (e == NULL)
        return TJ_ERR_CONTEXT;
    gen = atomic_load(&e->gen);
    if ((ev = event_reuse(e->ctx, gen)) == NULL) {
        if ((ev = calloc(1, sizeof(*ev))) == NULL)
            return TJ_ERR_NOMEM;
        confirm_current();
        if ((st = CU_CHECK(cuEventCreate(&ev->event, CU_EVENT_DISABLE_TIMING))) != TJ_OK) {
            free(ev);
            return st;
        }
        ev->ctx = e->ctx;
        ev->gen = gen;
    }
    ev->begun = atomic_fetch_add_explicit(&e->event_ticks, 1, memory_order_relaxed);
    IN_SCOPE(st, cuEventRecord(ev->event, stream()));
    if (st != TJ_OK) {
        tj_gpu_event_release(ev);
        return st;
    }
    ev->ended = atomic_fetch_add_explicit(&e->event_ticks, 1, memory_order_relaxed);
    atomic_store_explicit(&ev->refs, 1, memory_order_relaxed);
    atomic_store_explicit(&ev->done, false, memory_order_relaxed);
    *out = ev;
    return TJ_OK;
}

tj_gpu_event_t *tj_gpu_event_hold(tj_gpu_event_t *ev)
{
    atomic_fetch_add_explicit(&ev->refs, 1, memory_order_relaxed);
    return ev;
}

/* Enter @p ev's context; TJ_ERR_CONTEXT when the instance it was made in is gone (a reset or
 * a sticky error took the work along). */
static tj_status_t event_enter(const tj_gpu_event_t *ev, tj_gpu_scope_t *scope)
{
    tj_status_t st = tj_gpu_enter_again(ev->ctx, scope);

    if (st == TJ_OK && atomic_load(&here->gen) != ev->gen) {
        tj_gpu_leave(scope);
        st = TJ_ERR_CONTEXT;
    }
    return st;
}

tj_status_t tj_gpu_event_query(tj_gpu_event_t *ev, bool *done)
{
    tj_gpu_scope_t scope;
    tj_status_t st;
    CUresult rc;

    *done = atomic_load_explicit(&ev->done, memory_order_acquire);
    if (*done)
        return TJ_OK;
    if ((st = event_enter(ev, &scope)) != TJ_OK)
        return st;
    rc = cu.cuEventQuery(ev->event);
    if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY && was_not_current())
        rc = cu.cuEventQuery(ev->event);
    if (rc == CUDA_SUCCESS) {
        atomic_store_explicit(&ev->done, true, memory_order_release);
        *done = true;
    } else if (rc != CUDA_ERROR_NOT_READY) {
        st = cu_check(rc, "cuEventQuery", false, __FILE__, __LINE__);
    }
    tj_gpu_leave(&scope);
    return st;
}

tj_gpu_ctx_t tj_gpu_event_context(const tj_gpu_event_t *ev)
{
    return ev->ctx;
}

bool tj_gpu_event_done(const tj_gpu_event_t *ev)
{
    return atomic_load_explicit(&ev->done, memory_order_acquire);
}

bool tj_gpu_event_implied(tj_gpu_event_t *ev, const tj_gpu_event_t *later)
{
    if (atomic_load_explicit(&ev->done, memory_order_acquire))
        return true;
    if (!atomic_load_explicit(&later->done, memory_order_acquire) || ev->ctx != later->ctx ||
        ev->gen != later->gen || ev->ended >= later->begun)
        return false;
    atomic_store_explicit(&ev->done, true, memory_order_release);
    return true;
}

tj_status_t tj_gpu_event_wait(tj_gpu_event_t *ev)
{
    tj_gpu_scope_t scope;
    tj_status_t st;

    if (atomic_load_explicit(&ev->done, memory_order_acquire))
        return TJ_OK;
    if ((st = event_enter(ev, &scope)) != TJ_OK)
        return st;
    /* A wait for the device, counted as tj_gpu_sync's are. */
    double t0 = tj_clock_seconds();
    tj_stats_inc(TJ_STAT_gpu_waits);
    IN_SCOPE(st, cuEventSynchronize(ev->event));
    waited_since(t0);
    if (st == TJ_OK)
        atomic_store_explicit(&ev->done, true, memory_order_release);
    tj_gpu_leave(&scope);
    return st;
}

void tj_gpu_event_release(tj_gpu_event_t *ev)
{
    if (ev == NULL || atomic_fetch_sub_explicit(&ev->refs, 1, memory_order_acq_rel) > 1)
        return;
    lock_events();
    ev->next = events_free;
    events_free = ev;
    unlock_events();
}

/* The listed events, destroyed in their contexts where those still hold them. */
static void events_finalize(void)
{
    tj_gpu_event_t *list;

    lock_events();
    list = events_free;
    events_free = NULL;
    unlock_events();
    while (list != NULL) {
        tj_gpu_event_t *ev = list;
        tj_gpu_scope_t scope;
        list = ev->next;
        if (tj_gpu_enter_to_release(ev->ctx, &scope) == TJ_OK) {
            if (tj_gpu_generation() == ev->gen)
                CU_CHECK(cuEventDestroy(ev->event));
            tj_gpu_leave(&scope);
        }
        free(ev);
    }
}

void tj_gpu_finalize(void)
{
    CUcontext popped;
    int n;

    if (init_status != TJ_OK)
        return;
    events_finalize();
    pthread_mutex_lock(&entry_lock);
    n = atomic_load(&nentries);
    for (int i = 0; i < n; i++) {
        ctx_entry_t *e = &entries[i];
        /* Plain calls: an application may have destroyed its own context already, and a
         * dead context refuses everything; neither is worth a warning at exit. */
        if (!atomic_load(&e->dead) && cu.cuCtxPushCurrent(e->ctx) == CUDA_SUCCESS) {
            cu.cuStreamDestroy(atomic_load(&e->stream));
            cu.cuCtxPopCurrent(&popped);
        }
        if (e->retained)
            cu.cuDevicePrimaryCtxRelease(e->dev);
    }
    atomic_store(&nentries, 0);
    for (int i = 0; i < nused; i++)
        cu.cuDevicePrimaryCtxRelease(used[i]);
    nused = 0;
    for (int i = 0; i < ndevices; i++) {
        CUdevice dev;
        if (atomic_load(&primaries[i]) != NULL && cu.cuDeviceGet(&dev, i) == CUDA_SUCCESS)
            cu.cuDevicePrimaryCtxRelease(dev);
        atomic_store(&primaries[i], NULL);
    }
    here = NULL;
    innermost = NULL;
    last_current = NULL;
    pthread_mutex_unlock(&entry_lock);
}
