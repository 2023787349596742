/* SPDX-License-Identifier: BSD-3-Clause */
/* The strided kernels' forms and launch geometry: which (block, word, edge) a kernel is made for,
 * how its words map to threads (its shape), and the grid of a launch of `count` objects. */
#include <stdbool.h>
#include <stdint.h>

#include "jit/gen.h"
#include "jit/gen_internal.h"
#include "util/common.h"

bool tj_gen_valid_word(int word)
{
    return word == 1 || word == 2 || word == 4 || word == 8 || word == 16;
}

bool tj_gen_valid_block(const tj_block_t *block)
{
    if (block->ndims < 1 || block->ndims > TJ_BLOCK_MAX_DIMS || block->strides[0] != 1 ||
        block->size < 1)
        return false;
    for (int d = 0; d < block->ndims; d++)
        if (block->counts[d] < 1)
            return false;
    return true;
}

int tj_gen_effective_word(const tj_block_t *block, int word)
{
    /* Guards the void geometry functions against a word the generator would have refused. */
    return tj_gen_valid_word(word) && block->counts[0] % word == 0 ? word : 1;
}

bool tj_gen_valid_form(const tj_block_t *block, int word, int edge)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];

    if (!tj_gen_valid_block(block) || !tj_gen_valid_word(word))
        return false;
    if (edge == 0)
        return block->word % word == 0 && block->counts[0] % word == 0;
    return tj_gen_valid_word(edge) && edge < word && block->word % edge == 0 &&
           block->edges_word % word == 0 && tj_gen_edge_dims(block, dims) > 0;
}

unsigned tj_gen_unroll(int word)
{
    return word == 1 ? 8 : word == 2 ? 4 : 1;
}

static int64_t round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

void tj_gen_shape_of(int64_t words, int word, shape_t *shape)
{
    shape->words = words;
    if (words <= TJ_GEN_SMALL_WORDS) {
        shape->objects = (unsigned)(TJ_GEN_BLOCK_THREADS / words);
        shape->span = (unsigned)words;
        shape->threads = (unsigned)round_up((int64_t)shape->objects * shape->span, 32);
        shape->kstep = tj_gen_unroll(word);
        shape->istep = 1;
    } else {
        shape->objects = 1;
        shape->span = (unsigned)TJ_MIN(TJ_GEN_BLOCK_THREADS, round_up(words, 32));
        shape->threads = shape->span;
        shape->kstep = 1;
        shape->istep = tj_gen_unroll(word);
    }
}

int64_t tj_gen_words_of(const tj_block_t *block, int word, int edge)
{
    dim_t dims[TJ_BLOCK_MAX_DIMS];

    if (edge == 0 || tj_gen_edge_dims(block, dims) == 0)
        return block->size / word;
    return block->size / dims[0].count * tj_gen_edge_slots(dims[0].count, word, edge);
}

void tj_gen_launch_one(tj_launch_t *launch)
{
    tj_launch_t l = {{1, 1, 1}, {1, 1, 1}};
    *launch = l;
}

/* The shape of the kernel (block, word, edge), for a form the generator would have made; the
 * void geometry functions take a refused one as W = 1 without edges. */
static void form_shape(const tj_block_t *block, int word, int edge, shape_t *shape)
{
    if (edge == 0 || !tj_gen_valid_form(block, word, edge)) {
        word = tj_gen_effective_word(block, word);
        edge = 0;
    }
    tj_gen_shape_of(tj_gen_words_of(block, word, edge), word, shape);
}

int tj_gen_words_per_thread(const tj_block_t *block, int word, int edge)
{
    shape_t shape;
    if (!tj_gen_valid_block(block))
        return 1;
    form_shape(block, word, edge, &shape);
    return (int)(shape.kstep * shape.istep);
}

void tj_gen_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch)
{
    tj_gen_edges_launch(block, word, 0, count, launch);
}

void tj_gen_edges_geometry(const tj_block_t *block, int word, int edge, tj_gen_geometry_t *geo)
{
    shape_t shape;
    tj_launch_t l;

    if (!tj_gen_valid_block(block)) {
        tj_gen_launch_one(&geo->one);
        geo->per_y = INT64_MAX; /* one thread block, whatever the count */
        return;
    }
    form_shape(block, word, edge, &shape);
    l.block[0] = shape.threads;
    l.block[1] = 1;
    l.block[2] = 1;
    l.grid[0] = (unsigned)TJ_MIN(tj_gen_ceil_div(shape.words, (int64_t)shape.span * shape.istep),
                                 TJ_GEN_GRID_X_MAX);
    l.grid[1] = 1;
    l.grid[2] = 1;
    geo->one = l;
    geo->per_y = (int64_t)shape.objects * shape.kstep;
}

void tj_gen_edges_launch(const tj_block_t *block, int word, int edge, int64_t count,
                         tj_launch_t *launch)
{
    tj_gen_geometry_t geo;

    tj_gen_edges_geometry(block, word, edge, &geo);
    tj_gen_geometry_launch(&geo, count, launch);
}
