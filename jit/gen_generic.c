/* SPDX-License-Identifier: BSD-3-Clause */
/* The generic kernels: templates/generic.cu, which takes the layout of a strided block as a
 * run-time argument, its arguments and its launch geometry. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/gen.h"
#include "jit/gen_internal.h"
#include "jit/templates.h"
#include "jit/text.h"
#include "util/common.h"
#include "util/log.h"

/* templates/generic.cu declares the argument with the same layout: no padding may differ. */
_Static_assert(sizeof(tj_generic_params_t) == 296,
               "tj_generic_params_t is 296 bytes in generic.cu");
_Static_assert(offsetof(tj_generic_params_t, words) == 24 &&
                   offsetof(tj_generic_params_t, ndims) == 28 &&
                   offsetof(tj_generic_params_t, word) == 32 &&
                   offsetof(tj_generic_params_t, wide) == 36 &&
                   offsetof(tj_generic_params_t, bias) == 40 &&
                   offsetof(tj_generic_params_t, stride) == 48 &&
                   offsetof(tj_generic_params_t, dims) == 56 &&
                   sizeof(((tj_generic_params_t *)0)->dims[0]) == 16,
               "tj_generic_params_t has the layout of generic.cu");

int tj_gen_generic_words_per_thread(int word)
{
    /* The JIT kernels' reason holds here too: a narrow word costs as many instructions as a wide
     * one, so the trip's setup is shared by several. */
    return (int)tj_gen_unroll(word);
}

tj_status_t tj_gen_generic_source(int word, char **source)
{
    char word_s[8], trip_s[16];

    if (!tj_gen_valid_word(word))
        return TJ_ERR_INVALID;
    snprintf(word_s, sizeof(word_s), "%d", word);
    snprintf(trip_s, sizeof(trip_s), "%du", tj_gen_generic_words_per_thread(word));
    const tj_gen_subst_t subst[] = {
        {"WORD", word_s}, {"WORD_TYPE", tj_gen_word_type(word)}, {"TRIP_WORDS", trip_s}};
    return tj_gen_fill("generic.cu", subst, TJ_ARRAY_SIZE(subst), source);
}

/* Word indices of one object below this fit the generic kernels' 32-bit arithmetic, with room
 * for the grid-stride step. */
#define GENERIC_WORDS_LIMIT ((int64_t)1 << 31)

bool tj_gen_generic_usable(const tj_block_t *block, int word)
{
    return tj_gen_valid_block(block) &&
           block->size / tj_gen_effective_word(block, word) < GENERIC_WORDS_LIMIT;
}

void tj_gen_generic_params(const tj_block_t *block, int word, tj_generic_params_t *params)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    tj_generic_params_t p;
    uint64_t below_count = 1;
    int n;

    memset(&p, 0, sizeof(p));
    p.ndims = 1;
    if (!tj_gen_generic_usable(block, word)) {
        *params = p; /* no words: the kernels do nothing */
        return;
    }
    word = tj_gen_effective_word(block, word);
    n = tj_gen_merge_dims(block, word, dims);
    /* Offsets count from the object's lowest byte: 32 bits hold them where its highest word
     * starts within 4 GiB of it. The differences are exact in unsigned arithmetic. */
    p.wide = (uint64_t)block->hi - (uint64_t)block->lo - (uint64_t)word > UINT32_MAX;
    p.start = block->lo;
    p.extent = block->extent;
    p.size = block->size;
    p.words = (unsigned)(block->size / word);
    p.word = word;
    p.bias = (long long)((uint64_t)block->start - (uint64_t)block->lo);
    p.stride = n > 0 ? dims[0].stride : word;
    /* Each product of counts divides the words of an object: each is below 2^31. */
    for (int d = 1; d < n; d++) {
        below_count *= (uint64_t)dims[d - 1].count;
        tj_gen_magic_divider(below_count, &p.dims[d - 1].magic, &p.dims[d - 1].shift);
        p.dims[d - 1].weight =
            (long long)((uint64_t)dims[d].stride -
                        (uint64_t)dims[d - 1].count * (uint64_t)dims[d - 1].stride);
    }
    p.ndims = n > 0 ? n : 1;
    *params = p;
}

void tj_gen_generic_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch)
{
    int64_t threads;
    unsigned bx = 1;
    tj_launch_t l;

    if (!tj_gen_valid_block(block)) {
        tj_gen_launch_one(launch);
        return;
    }
    word = tj_gen_effective_word(block, word);
    /* Threads one object needs; x is a power of two up to the whole thread block, y holds as
     * many objects as fit beside it. */
    threads = tj_gen_ceil_div(block->size / word, tj_gen_generic_words_per_thread(word));
    while (bx < TJ_GEN_BLOCK_THREADS && bx < threads)
        bx *= 2;
    l.block[0] = bx;
    l.block[1] = TJ_GEN_BLOCK_THREADS / bx;
    l.block[2] = 1;
    l.grid[0] = (unsigned)TJ_MIN(tj_gen_ceil_div(threads, bx), TJ_GEN_GRID_X_MAX);
    l.grid[1] = (unsigned)TJ_MIN(tj_gen_ceil_div(TJ_MAX(count, 1), l.block[1]), TJ_GEN_GRID_YZ_MAX);
    l.grid[2] = 1;
    *launch = l;
}
