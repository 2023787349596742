/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel: the checks every spec shares, and the object the kernel lookup keeps. What differs
 * between kinds is asked of their table (kernels/kind.h). */
#include "kernels/kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kind.h"

tj_status_t tj_kernel_check(const tj_kernel_spec_t *spec)
{
    const tj_kind_t *kind;

    if (spec == NULL || spec->target == NULL || spec->target[0] == '\0' ||
        strlen(spec->target) >= TJ_TARGET_MAX ||
        (spec->dir != TJ_DIR_PACK && spec->dir != TJ_DIR_UNPACK) ||
        (kind = tj_kind_of(spec->kind)) == NULL)
        return TJ_ERR_INVALID;
    return kind->check(spec);
}

const char *tj_kernel_name(const tj_kernel_spec_t *spec)
{
    return tj_kind_of(spec->kind)->function(spec);
}

tj_status_t tj_kernel_source(const tj_kernel_spec_t *spec, char **source)
{
    tj_status_t st;

    if ((st = tj_kernel_check(spec)) != TJ_OK)
        return st;
    return tj_kind_of(spec->kind)->source(spec, source);
}

tj_status_t tj_kernel_new(const tj_kernel_spec_t *spec, tj_kernel_t **kernel)
{
    tj_kernel_t *k = calloc(1, sizeof(*k));

    if (k == NULL)
        return TJ_ERR_NOMEM;
    if (spec->nblocks > 0 &&
        ((k->blocks = malloc((size_t)spec->nblocks * sizeof(tj_block_t))) == NULL ||
         (spec->words != NULL && (k->words = malloc((size_t)spec->nblocks * sizeof(int))) == NULL)))
        goto out_nomem;
    /* A kernel outlives its type: it keeps what its source depends on. */
    if (spec->layout != NULL && tj_layout_signature(spec->layout, &k->layout) != TJ_OK)
        goto out_nomem;
    k->serial = spec->serial;
    k->one_object = spec->one_object;
    k->kind = spec->kind;
    k->nblocks = spec->nblocks;
    for (int i = 0; i < spec->nblocks; i++) {
        k->blocks[i] = tj_block_at_zero(&spec->blocks[i]);
        if (k->words != NULL)
            k->words[i] = spec->words[i];
    }
    k->word = spec->word;
    k->edge = spec->edge;
    k->dir = spec->dir;
    snprintf(k->target, sizeof(k->target), "%s", spec->target);
    k->op = spec->op.kind;
    if (spec->op.kind == TJ_OP_REDUCE) {
        snprintf(k->ctype, sizeof(k->ctype), "%s", spec->op.ctype);
        snprintf(k->expr, sizeof(k->expr), "%s", spec->op.expr);
        snprintf(k->what, sizeof(k->what), "%s", spec->op.what);
    }
    tj_modules_init(&k->modules);
    if (k->kind == TJ_KERNEL_SINGLE)
        tj_gen_edges_geometry(&k->blocks[0], k->word, k->edge, &k->geo);
    *kernel = k;
    return TJ_OK;
out_nomem:
    free(k->words);
    free(k->blocks);
    free(k);
    return TJ_ERR_NOMEM;
}

tj_kernel_spec_t tj_kernel_spec(const tj_kernel_t *kernel)
{
    tj_kernel_spec_t s = {.kind = kernel->kind,
                          .blocks = kernel->blocks,
                          .nblocks = kernel->nblocks,
                          .word = kernel->word,
                          .edge = kernel->edge,
                          .words = kernel->words,
                          .dir = kernel->dir,
                          .target = kernel->target,
                          .op = {kernel->op, kernel->ctype, kernel->expr, kernel->what},
                          .layout = kernel->layout,
                          .serial = kernel->serial,
                          .one_object = kernel->one_object};
    return s;
}

void tj_kernel_free(tj_kernel_t *kernel)
{
    if (kernel == NULL)
        return;
    tj_modules_release(&kernel->modules);
    tj_layout_release(kernel->layout);
    free(kernel->words);
    free(kernel->blocks);
    free(kernel->image);
    free(kernel);
}

tj_status_t tj_kernel_load(tj_kernel_t *kernel, tj_gpu_function_t *fn)
{
    tj_kernel_spec_t spec = tj_kernel_spec(kernel);

    return tj_modules_function(&kernel->modules, kernel->image, kernel->len, tj_kernel_name(&spec),
                               fn);
}
