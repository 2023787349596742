/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel image's modules, one per CUDA context it runs in: loaded on first use in each
 * context, again after the context was reset, and a failure to load remembered per context. */
#ifndef TJ_KERNELS_MODULE_H
#define TJ_KERNELS_MODULE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "gpu/cuda.h"

/* Contexts one image can be loaded in (the driver layer tracks as many). */
#define TJ_MODULE_MAX_CONTEXTS 64

/* The image's module in one context, or the remembered failure to load it there. */
typedef struct {
    tj_gpu_ctx_t ctx;
    unsigned gen; /* the context's instance (tj_gpu_generation) */
    tj_gpu_module_t *module;
    tj_gpu_function_t fn; /* NULL: the load failed */
} tj_module_t;

/* Launches read the loaded modules without the lock: an entry is written whole before the count
 * that publishes it, and never changed afterwards (a context's later instance gets an entry of
 * its own). The lock serialises loads, once per context instance. */
typedef struct {
    pthread_mutex_t lock;
    tj_module_t loaded[TJ_MODULE_MAX_CONTEXTS];
    atomic_int n;
} tj_modules_t;

void tj_modules_init(tj_modules_t *modules);

/* Unload every module (the contexts that still exist) and destroy the set. */
void tj_modules_release(tj_modules_t *modules);

/* The function of the image already loaded in the current context (a tj_gpu_enter scope):
 * true, with it in @p fn, else false (tj_modules_function loads it). No lock: the entries
 * before the count are written whole before it is published. */
static inline bool tj_modules_loaded(const tj_modules_t *modules, tj_gpu_function_t *fn)
{
    unsigned gen;
    tj_gpu_ctx_t ctx = tj_gpu_current_instance(&gen);

    for (int i = atomic_load_explicit(&modules->n, memory_order_acquire) - 1; ctx != NULL && i >= 0;
         i--)
        if (modules->loaded[i].ctx == ctx && modules->loaded[i].gen == gen) {
            if (modules->loaded[i].fn == NULL)
                return false;
            *fn = modules->loaded[i].fn;
            return true;
        }
    return false;
}

/* The function @p name of @p image in the current context (a tj_gpu_enter scope, or the
 * caller's current context), loading the image there on first use. A failed load is
 * remembered per context: TJ_ERR_CUDA at once, logged only the first time. */
tj_status_t tj_modules_function(tj_modules_t *modules, const void *image, size_t len,
                                const char *name, tj_gpu_function_t *fn);

#endif /* TJ_KERNELS_MODULE_H */
