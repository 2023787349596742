/* A kernel: its spec, the source the spec compiles from, and the object the supply keeps. */
#include "kernels/kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static bool valid_word(int word)
{
    return word == 1 || word == 2 || word == 4 || word == 8 || word == 16;
}

tj_status_t tj_kernel_check(const tj_kernel_spec_t *spec)
{
    if (spec == NULL || spec->target == NULL || spec->target[0] == '\0' ||
        strlen(spec->target) >= TJ_TARGET_MAX ||
        (spec->dir != TJ_DIR_PACK && spec->dir != TJ_DIR_UNPACK))
        return TJ_ERR_INVALID;
    switch (spec->kind) {
    case TJ_KERNEL_GENERIC:
        return spec->nblocks == 0 && valid_word(spec->word) ? TJ_OK : TJ_ERR_INVALID;
    case TJ_KERNEL_SOURCE:
        return spec->nblocks == 0 && spec->source != NULL && spec->name != NULL &&
                       spec->name[0] != '\0' && strlen(spec->name) < TJ_KERNEL_NAME_MAX
                   ? TJ_OK
                   : TJ_ERR_INVALID;
    case TJ_KERNEL_PARTS:
        return spec->nblocks == 0 && spec->layout != NULL && spec->layout->finished &&
                       valid_word(spec->word) && spec->layout->word % spec->word == 0 &&
                       (!spec->serial || spec->dir == TJ_DIR_UNPACK)
                   ? TJ_OK
                   : TJ_ERR_INVALID;
    case TJ_KERNEL_SINGLE:
        if (spec->nblocks != 1)
            return TJ_ERR_INVALID;
        break;
    case TJ_KERNEL_FUSED:
        if (spec->nblocks < 1 || spec->nblocks > TJ_FUSED_MAX)
            return TJ_ERR_INVALID;
        break;
    default:
        return TJ_ERR_INVALID;
    }
    if (spec->blocks == NULL || !valid_word(spec->word) ||
        (spec->edge != 0 && spec->kind != TJ_KERNEL_SINGLE) ||
        (spec->words != NULL && spec->kind != TJ_KERNEL_FUSED))
        return TJ_ERR_INVALID;
    for (int i = 0; i < spec->nblocks; i++) {
        const tj_block_t *b = &spec->blocks[i];
        int word = tj_kernel_block_word(spec, i);
        if (b->ndims < 1 || b->ndims > TJ_BLOCK_MAX_DIMS || !valid_word(word))
            return TJ_ERR_INVALID;
        if (spec->edge != 0 ? !valid_word(spec->edge) || spec->edge >= word ||
                                  b->word % spec->edge != 0 || b->edges_word % word != 0
                            : b->word % word != 0)
            return TJ_ERR_INVALID;
    }
    return TJ_OK;
}

int tj_kernel_block_word(const tj_kernel_spec_t *spec, int i)
{
    return spec->kind == TJ_KERNEL_FUSED && spec->words != NULL ? spec->words[i] : spec->word;
}

const char *tj_kernel_name(const tj_kernel_spec_t *spec)
{
    bool pack = spec->dir == TJ_DIR_PACK;
    switch (spec->kind) {
    case TJ_KERNEL_GENERIC:
        return pack ? "tj_generic_pack" : "tj_generic_unpack";
    case TJ_KERNEL_FUSED:
        return pack ? "tj_fused_pack" : "tj_fused_unpack";
    case TJ_KERNEL_SOURCE:
        return spec->name;
    case TJ_KERNEL_PARTS:
        return pack ? "tj_parts_pack" : spec->serial ? "tj_parts_unpack_serial" : "tj_parts_unpack";
    default:
        return pack ? "tj_pack" : "tj_unpack";
    }
}

tj_status_t tj_kernel_source(const tj_kernel_spec_t *spec, char **source)
{
    tj_block_t zero[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX];
    tj_status_t st;

    if ((st = tj_kernel_check(spec)) != TJ_OK)
        return st;
    if (spec->kind == TJ_KERNEL_SOURCE) {
        if ((*source = strdup(spec->source)) == NULL)
            return TJ_ERR_NOMEM;
        return TJ_OK;
    }
    if (spec->kind == TJ_KERNEL_GENERIC)
        return tj_gen_generic_source(spec->word, source);
    if (spec->kind == TJ_KERNEL_PARTS)
        return tj_gen_parts_source(spec->layout, spec->word, spec->dir, tj_kernel_name(spec),
                                   source);
    for (int i = 0; i < spec->nblocks; i++) {
        zero[i] = tj_block_at_zero(&spec->blocks[i]);
        words[i] = tj_kernel_block_word(spec, i);
    }
    if (spec->kind == TJ_KERNEL_SINGLE && spec->edge != 0)
        return tj_gen_edges_source(&zero[0], spec->word, spec->edge, spec->dir,
                                   tj_kernel_name(spec), source);
    if (spec->kind == TJ_KERNEL_SINGLE)
        return tj_gen_source(&zero[0], spec->word, spec->dir, tj_kernel_name(spec), source);
    return tj_gen_fused_source(zero, words, spec->nblocks, spec->dir, tj_kernel_name(spec), source);
}

tj_status_t tj_kernel_new(const tj_kernel_spec_t *spec, tj_kernel_t **kernel)
{
    tj_kernel_t *k = calloc(1, sizeof(*k));

    if (k == NULL)
        return TJ_ERR_NOMEM;
    if (spec->nblocks > 0 &&
        ((k->blocks = malloc((size_t)spec->nblocks * sizeof(tj_block_t))) == NULL ||
         (spec->words != NULL &&
          (k->words = malloc((size_t)spec->nblocks * sizeof(int))) == NULL))) {
        free(k->blocks);
        free(k);
        return TJ_ERR_NOMEM;
    }
    if (spec->kind == TJ_KERNEL_PARTS && tj_layout_signature(spec->layout, &k->layout) != TJ_OK) {
        free(k->words);
        free(k->blocks);
        free(k);
        return TJ_ERR_NOMEM;
    }
    k->serial = spec->serial;
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
    if (spec->kind == TJ_KERNEL_SOURCE)
        snprintf(k->name, sizeof(k->name), "%s", spec->name);
    tj_modules_init(&k->modules);
    *kernel = k;
    return TJ_OK;
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
                          .name = kernel->name,
                          .layout = kernel->layout,
                          .serial = kernel->serial};
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

tj_status_t tj_kernel_function(tj_kernel_t *kernel, tj_gpu_function_t *fn)
{
    tj_kernel_spec_t spec = tj_kernel_spec(kernel);
    return tj_modules_function(&kernel->modules, kernel->image, kernel->len, tj_kernel_name(&spec),
                               fn);
}
