/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA driver behind a table of function pointers filled by dlsym, so that the preloaded
 * library starts on hosts without any CUDA driver; the layer's state, which tj_gpu_init sets up
 * (finalize.c releases it); and the questions asked of a driver without loading one.
 *
 * typejit works in whatever context owns the user's buffer: a scope pushes that context (when
 * it is not already current) and pops it on the way out, so the application's current context
 * is never changed (scope.c). Each context typejit has worked in gets a record with its own
 * stream (context.c); a sticky error (a faulting kernel) marks the record dead, reported once
 * (error.c), and typejit stops using that context. */
#include "gpu/cuda_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"

tj_gpu_t tj_gpu = {
    .init_once = PTHREAD_ONCE_INIT,
    .init_status = TJ_ERR_NO_CUDA,
    .probe_once = PTHREAD_ONCE_INIT,
    .searched_adds = ~0ULL,
    .report_lock = PTHREAD_MUTEX_INITIALIZER,
    .entry_lock = PTHREAD_MUTEX_INITIALIZER,
    .events_lock = ATOMIC_FLAG_INIT,
};
_Thread_local tj_gpu_thread_t tj_gpu_thread;
/* What tj_gpu_init found, for the hot paths' one-load test (tj_gpu_absent). */
atomic_int tj_gpu_state = TJ_GPU_UNKNOWN;

/* The first of two names the driver exports (@p alt may be NULL). */
static void *symbol(const char *name, const char *alt)
{
    void *p = dlsym(tj_gpu.libcuda, name);
    return p != NULL || alt == NULL ? p : dlsym(tj_gpu.libcuda, alt);
}

static bool load_symbols(void)
{
    void *p;
#define TJ_CU_LOAD(_name, _required, _sym, _alt)                                                   \
    p = symbol(_sym, _alt);                                                                        \
    *(void **)&tj_gpu.cu._name = p;                                                                \
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
    tj_gpu.libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (tj_gpu.libcuda == NULL) {
        tj_log_debug("no cuda driver: %s", dlerror());
        return;
    }
    if (!load_symbols())
        return;
    if (tj_gpu.cu.cuDriverGetVersion(&tj_gpu.driver_version) != CUDA_SUCCESS)
        tj_gpu.driver_version = 0;
    if (tj_gpu.cu.cuInit(0) != CUDA_SUCCESS || tj_gpu.cu.cuDeviceGetCount(&count) != CUDA_SUCCESS ||
        count < 1) {
        tj_log_debug("cuda driver %d present but no usable device", tj_gpu.driver_version);
        return;
    }
    tj_log_debug("cuda driver %d, %d device(s)", tj_gpu.driver_version, count);
    tj_gpu.ndevices = count < TJ_GPU_MAX_DEVICES ? count : TJ_GPU_MAX_DEVICES;
    tj_gpu.init_status = TJ_OK;
}

/* init_driver with its result published for tj_gpu_absent. */
static void init_once_body(void)
{
    init_driver();
    atomic_store(&tj_gpu_state, tj_gpu.init_status == TJ_OK ? TJ_GPU_PRESENT : TJ_GPU_ABSENT);
}

static void probe_driver(void)
{
    const char *err;
    void *lib;

    if (atomic_load(&tj_gpu_state) != TJ_GPU_UNKNOWN) {
        tj_gpu.installed = atomic_load(&tj_gpu_state) == TJ_GPU_PRESENT;
        return;
    }
    /* RTLD_NOLOAD searches the library path as dlopen does but maps nothing: NULL with no error
     * when the file is there and not loaded yet, NULL with an error when there is none. */
    (void)dlerror();
    lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    err = lib == NULL ? dlerror() : NULL;
    if (lib != NULL)
        dlclose(lib);
    tj_gpu.installed = err == NULL;
    if (!tj_gpu.installed) {
        int unknown = TJ_GPU_UNKNOWN;
        tj_log_debug("no cuda driver: %s", err);
        atomic_compare_exchange_strong(&tj_gpu_state, &unknown, TJ_GPU_ABSENT);
    }
}

bool tj_gpu_driver_installed(void)
{
    if (tj_gpu_absent())
        return false;
    pthread_once(&tj_gpu.probe_once, probe_driver);
    return tj_gpu.installed && !tj_gpu_absent();
}

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
        if (s->adds != 0 && s->adds == atomic_load(&tj_gpu.searched_adds))
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
        return tj_gpu.cu.cuCtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != NULL;
    if ((get = atomic_load(&tj_gpu.loaded_ctx_get)) == NULL) {
        driver_search_t search = {.first = true};
        void *lib;

        dl_iterate_phdr(find_driver, &search);
        if (search.path[0] == '\0') {
            atomic_store(&tj_gpu.searched_adds, search.adds);
            return false;
        }
        if ((lib = dlopen(search.path, RTLD_LAZY | RTLD_NOLOAD)) == NULL)
            return false;
        if ((*(void **)&get = dlsym(lib, "cuCtxGetCurrent")) == NULL) {
            dlclose(lib);
            return false;
        }
        atomic_store(&tj_gpu.loaded_ctx_get, get);
    }
    /* Before anyone's cuInit the driver answers CUDA_ERROR_NOT_INITIALIZED: no context. */
    return get(&ctx) == CUDA_SUCCESS && ctx != NULL;
}

tj_status_t tj_gpu_init(void)
{
    if (atomic_load_explicit(&tj_gpu_state, memory_order_acquire) == TJ_GPU_PRESENT)
        return TJ_OK;
    pthread_once(&tj_gpu.init_once, init_once_body);
    return tj_gpu.init_status;
}

int tj_gpu_driver_version(void)
{
    pthread_once(&tj_gpu.init_once, init_once_body);
    return tj_gpu.driver_version;
}
