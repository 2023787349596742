/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a kernel image once per CUDA context. */
#include "kernels/module.h"

#include <stdbool.h>

void tj_modules_init(tj_modules_t *modules)
{
    pthread_mutex_init(&modules->lock, NULL);
    atomic_init(&modules->n, 0);
}

void tj_modules_release(tj_modules_t *modules)
{
    int n = atomic_load(&modules->n);

    for (int i = 0; i < n; i++)
        tj_gpu_module_unload(modules->loaded[i].module);
    atomic_store(&modules->n, 0);
    pthread_mutex_destroy(&modules->lock);
}

/* The entry of (@p ctx, @p gen) among the first @p n, or NULL. */
static const tj_module_t *find(const tj_modules_t *modules, int n, tj_gpu_ctx_t ctx, unsigned gen)
{
    for (int i = n - 1; i >= 0; i--)
        if (modules->loaded[i].ctx == ctx && modules->loaded[i].gen == gen)
            return &modules->loaded[i];
    return NULL;
}

tj_status_t tj_modules_function(tj_modules_t *modules, const void *image, size_t len,
                                const char *name, tj_gpu_function_t *fn)
{
    tj_gpu_ctx_t ctx;
    unsigned gen;
    const tj_module_t *l;
    tj_status_t st = TJ_OK;
    int n;

    if ((ctx = tj_gpu_current_instance(&gen)) == NULL)
        return TJ_ERR_INVALID;
    if ((l = find(modules, atomic_load_explicit(&modules->n, memory_order_acquire), ctx, gen)) !=
        NULL) {
        if (l->fn == NULL)
            return TJ_ERR_CUDA;
        *fn = l->fn;
        return TJ_OK;
    }
    pthread_mutex_lock(&modules->lock);
    n = atomic_load_explicit(&modules->n, memory_order_relaxed);
    if ((l = find(modules, n, ctx, gen)) == NULL && n < TJ_MODULE_MAX_CONTEXTS) {
        /* Loaded once per context instance; a failure is remembered there (logged once, where
         * the driver call failed) and the calls that need it are staged. An entry of an earlier
         * instance of this context (reset since) stays: its module went with the instance, and
         * unloading it at the release is refused quietly. */
        tj_module_t *fresh = &modules->loaded[n];
        fresh->ctx = ctx;
        fresh->gen = gen;
        if (tj_gpu_module_load(image, len, name, &fresh->module, &fresh->fn) != TJ_OK) {
            fresh->module = NULL;
            fresh->fn = NULL;
        }
        atomic_store_explicit(&modules->n, n + 1, memory_order_release);
        l = fresh;
    }
    if (l == NULL || l->fn == NULL)
        st = TJ_ERR_CUDA;
    else
        *fn = l->fn;
    pthread_mutex_unlock(&modules->lock);
    return st;
}
