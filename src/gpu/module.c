/* SPDX-License-Identifier: BSD-3-Clause */
/* Modules loaded in the current context, each unloaded in the instance of the context it was
 * loaded in, and launches of their kernels on typejit's stream. */
#include "gpu/cuda_internal.h"

#include <stdlib.h>

struct tj_gpu_module {
    CUmodule module;
    CUcontext ctx;
    unsigned gen; /* the context's instance it was loaded in */
};

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
    tj_gpu_check_assumed();
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
    tj_gpu.cu.cuModuleUnload(m->module);
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
    if (tj_gpu_enter_instance_to_release(module->ctx, module->gen, &scope) == TJ_OK) {
        CU_CHECK(cuModuleUnload(module->module));
        tj_gpu_leave(&scope);
    }
    free(module);
}

tj_status_t tj_gpu_launch(tj_gpu_function_t fn, const unsigned grid[3], const unsigned block[3],
                          void **args)
{
    tj_status_t st;

    IN_SCOPE(st, cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1],
                                block[2], 0, tj_gpu_stream(), args, NULL));
    return st;
}
