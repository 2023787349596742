/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a kernel image once per CUDA context. */
#include "kernels/module.h"

#include <stdbool.h>

void tj_modules_init(tj_modules_t *modules)
{
    pthread_mutex_init(&modules->lock, NULL);
    modules->n = 0;
}

void tj_modules_release(tj_modules_t *modules)
{
    for (int i = 0; i < modules->n; i++)
        tj_gpu_module_unload(modules->loaded[i].module);
    modules->n = 0;
    pthread_mutex_destroy(&modules->lock);
}

tj_status_t tj_modules_function(tj_modules_t *modules, const void *image, size_t len,
                                const char *name, tj_gpu_function_t *fn)
{
    tj_gpu_ctx_t ctx = tj_gpu_current();
    unsigned gen = tj_gpu_generation();
    tj_module_t *l = NULL;
    bool load = false;
    tj_status_t st = TJ_OK;

    if (ctx == NULL)
        return TJ_ERR_INVALID;
    /* An uncontended lock per launch keeps the lazy load simple and race-free. */
    pthread_mutex_lock(&modules->lock);
    for (int i = 0; i < modules->n && l == NULL; i++)
        if (modules->loaded[i].ctx == ctx)
            l = &modules->loaded[i];
    if (l != NULL && l->gen != gen) {
        /* Loaded in an earlier instance of this context (reset since): the module went with
         * it, and so did a failure to load. */
        tj_gpu_module_unload(l->module); /* frees the record only: the instance differs */
        load = true;
    } else if (l == NULL && modules->n < TJ_MODULE_MAX_CONTEXTS) {
        l = &modules->loaded[modules->n++];
        load = true;
    }
    if (load) {
        /* Loaded once per context; a failure is remembered there (logged once, where the
         * driver call failed) and the calls that need it are staged. */
        l->ctx = ctx;
        l->gen = gen;
        if (tj_gpu_module_load(image, len, name, &l->module, &l->fn) != TJ_OK) {
            l->module = NULL;
            l->fn = NULL;
        }
    }
    if (l == NULL || l->fn == NULL)
        st = TJ_ERR_CUDA;
    else
        *fn = l->fn;
    pthread_mutex_unlock(&modules->lock);
    return st;
}
