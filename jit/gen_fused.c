/* SPDX-License-Identifier: BSD-3-Clause */
/* The fused kernels: one launch moving a set of members of several strided blocks
 * (templates/fused.cu), their arguments and their launch geometry. */
#include <inttypes.h>
#include <stdbool.h>
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

/* Thread blocks one member of a fused launch may have: with TJ_FUSED_MAX members the flattened
 * grid stays below 2^31. */
#define FUSED_MEMBER_BLOCKS ((int64_t)1 << 25)
#define FUSED_GX_MAX        ((int64_t)1 << 20)

/* templates/fused.cu declares the argument with the same layout: no padding may differ. */
_Static_assert(sizeof(tj_fused_entry_t) == 40, "tj_fused_entry_t is 40 bytes in fused.cu");
_Static_assert((TJ_FUSED_MAX & (TJ_FUSED_MAX - 1)) == 0,
               "fused.cu's binary search halves TJ_FUSED_MAX");
_Static_assert(sizeof(tj_fused_args_t) == 40 * TJ_FUSED_MAX + 8,
               "tj_fused_args_t has the layout of fused.cu");

/* The thread blocks across the words of one object of a fused member (the x extent of its
 * grid): a constant of its block, baked into its case. */
static unsigned fused_gx(const shape_t *shape)
{
    return (unsigned)TJ_MIN(tj_gen_ceil_div(shape->words, shape->span), FUSED_GX_MAX);
}

/* One leaf of the fused kernel's tree: the body of templates/strided.cu for block @p s and its
 * word. */
static void emit_case(text_t *t, int s, const tj_block_t *block, int word, bool pack)
{
    text_t dims_text = {0}, offset_text = {0};
    char start[48], extent[48];
    dim_t dims[TJ_BLOCK_MAX_DIMS];
    shape_t shape;
    bool index32;
    int n;

    tj_gen_shape_of(block->size / word, word, &shape);
    index32 = shape.words <= TJ_GEN_INDEX32_LIMIT;
    n = tj_gen_merge_dims(block, word, dims);
    tj_gen_emit_dimensions(&dims_text, dims, n, index32 ? "u" : "ull");
    tj_gen_emit_offset(&offset_text, dims, n, "i");
    tj_gen_literal(start, sizeof(start), block->start);
    tj_gen_literal(extent, sizeof(extent), block->extent);
    if (dims_text.failed || offset_text.failed) {
        t->failed = true;
        goto out;
    }
    tj_text_printf(t, "    { /* block %d, W = %d */\n", s, word);
    tj_text_printf(t, "    typedef %s word_t;\n", tj_gen_word_type(word));
    tj_text_printf(t, "    %sword_t *packed = (%sword_t *)packed_bytes;\n", pack ? "" : "const ",
                   pack ? "" : "const ");
    tj_text_printf(t, "    typedef %s index_t;\n", index32 ? "unsigned int" : "unsigned long long");
    tj_text_printf(t, "    const long long START = %s;\n    const long long EXTENT = %s;\n", start,
                   extent);
    tj_text_printf(t, "    const index_t WORDS = %" PRId64 "%s;\n", shape.words,
                   index32 ? "u" : "ull");
    tj_text_printf(t, "    const unsigned OBJECTS = %uu;\n    const unsigned SPAN = %uu;\n",
                   shape.objects, shape.span);
    tj_text_printf(t, "    const unsigned GX = %uu;\n", fused_gx(&shape));
    tj_text_append(t, dims_text.buf, dims_text.len);
    /* The member's blocks are GX * gy (tj_gen_fused_launch): by < gy needs no test. */
    tj_text_printf(t, "\n    const unsigned bx = local %% GX;\n"
                      "    const unsigned by = local / GX;\n");
    /* A launch has at most TJ_GEN_BLOCK_THREADS threads per block: with a span that wide, every
     * thread has a word of the object and nothing is left to test. */
    if (shape.objects == 1 && shape.span == TJ_GEN_BLOCK_THREADS)
        tj_text_printf(t, "    const unsigned lane = threadIdx.x, slot = 0;\n");
    else
        tj_text_printf(t, "    const unsigned lane = threadIdx.x %% SPAN;\n"
                          "    const unsigned slot = threadIdx.x / SPAN;\n"
                          "    if (slot >= OBJECTS)\n        return;\n");
    if (shape.objects > 1) {
        /* As templates/strided.cu with several objects per thread block: SPAN is the object. */
        tj_text_printf(t, "    if (bx != 0)\n        return;\n    const index_t i = lane;\n");
        tj_text_append(t, offset_text.buf, offset_text.len);
        tj_text_printf(t, "\n#pragma unroll 1\n"
                          "    for (long long k = (long long)by * OBJECTS + slot; k < count;\n"
                          "         k += (long long)gy * OBJECTS) {\n"
                          "        const long long base = START + k * EXTENT;\n");
    } else {
        tj_text_printf(t, "#pragma unroll 1\n"
                          "    for (long long k = (long long)by + slot; k < count; k += gy) {\n"
                          "        const long long base = START + k * EXTENT;\n"
                          "#pragma unroll 1\n"
                          "        for (index_t i = (index_t)bx * SPAN + lane; i < WORDS;\n"
                          "             i += (index_t)GX * SPAN) {\n");
        tj_text_append(t, offset_text.buf, offset_text.len);
        tj_text_printf(t, "\n");
    }
    tj_text_printf(t, "%s\n%s    }\n    return;\n    }\n",
                   pack ? "            packed[k * WORDS + i] = *(const word_t *)(typed + (base + "
                          "off));"
                        : "            *(word_t *)(typed + (base + off)) = packed[k * WORDS + i];",
                   shape.objects > 1 ? "" : "        }\n");
out:
    free(offset_text.buf);
    free(dims_text.buf);
}

/* The tree of tests that leads each member to its block's code: blocks [lo, hi), in order. */
static void emit_tree(text_t *t, int lo, int hi, const tj_block_t *blocks, const int *words,
                      bool pack)
{
    int mid = lo + (hi - lo) / 2;

    if (hi - lo == 1) {
        emit_case(t, lo, &blocks[lo], words[lo], pack);
        return;
    }
    tj_text_printf(t, "    if (shape < %d) {\n", mid);
    emit_tree(t, lo, mid, blocks, words, pack);
    tj_text_printf(t, "    } else {\n");
    emit_tree(t, mid, hi, blocks, words, pack);
    tj_text_printf(t, "    }\n");
}

/* Whether @p words[s] is a word of blocks[s], for each of the @p n blocks. */
static bool valid_fused(const tj_block_t *blocks, const int *words, int n)
{
    for (int s = 0; s < n; s++)
        if (!tj_gen_valid_block(&blocks[s]) || !tj_gen_valid_word(words[s]) ||
            blocks[s].word % words[s] != 0 || blocks[s].counts[0] % words[s] != 0)
            return false;
    return true;
}

tj_status_t tj_gen_fused_source(const tj_block_t *blocks, const int *words, int n, tj_dir_t dir,
                                const char *name, char **source)
{
    text_t cases = {0}, comment = {0};
    char shapes[16], max[16], block_text[1024];
    bool pack = dir == TJ_DIR_PACK;
    tj_status_t status;

    if (blocks == NULL || words == NULL || n < 1 || n > TJ_FUSED_MAX || !tj_gen_valid_name(name) ||
        (dir != TJ_DIR_PACK && dir != TJ_DIR_UNPACK)) {
        tj_log_error("cannot generate fused kernel %s: invalid block count %d or name",
                     tj_gen_valid_name(name) ? name : "(bad name)", n);
        return TJ_ERR_INVALID;
    }
    if (!valid_fused(blocks, words, n)) {
        tj_log_error("cannot generate fused kernel %s: a block is invalid for its word", name);
        return TJ_ERR_INVALID;
    }
    for (int s = 0; s < n; s++) {
        tj_block_format(&blocks[s], block_text, sizeof(block_text));
        tj_text_printf(&comment, " *   block %d: W=%d %s%s", s, words[s], block_text,
                       s + 1 < n ? "\n" : "");
    }
    emit_tree(&cases, 0, n, blocks, words, pack);
    if (cases.failed || comment.failed) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    snprintf(shapes, sizeof(shapes), "%d", n);
    snprintf(max, sizeof(max), "%d", TJ_FUSED_MAX);

    const tj_gen_subst_t subst[] = {
        {"NAME", name},
        {"DIRECTION", pack ? "pack" : "unpack"},
        {"SHAPES", shapes},
        {"BLOCKS", comment.buf},
        {"MAX", max},
        {"POINTERS", pack ? "    const char *typed = (const char *)src + e->typed;\n"
                            "    char *packed_bytes = (char *)dst + e->packed;"
                          : "    char *typed = (char *)dst + e->typed;\n"
                            "    const char *packed_bytes = (const char *)src + e->packed;"},
        {"CASES", cases.buf},
    };
    status = tj_gen_fill("fused.cu", subst, TJ_ARRAY_SIZE(subst), source);

out:
    free(comment.buf);
    free(cases.buf);
    if (status == TJ_ERR_NOMEM)
        tj_log_error("out of memory generating fused kernel %s", name);
    return status;
}

tj_status_t tj_gen_fused_launch(const tj_block_t *blocks, const int *words, int nblocks,
                                const tj_fused_member_t *members, int nmembers,
                                tj_fused_args_t *args, tj_launch_t *launch)
{
    tj_fused_args_t a;
    unsigned threads = 32;
    int64_t first = 0;

    if (blocks == NULL || words == NULL || members == NULL || nblocks < 1 ||
        nblocks > TJ_FUSED_MAX || nmembers < 1 || nmembers > TJ_FUSED_MAX ||
        !valid_fused(blocks, words, nblocks))
        return TJ_ERR_INVALID;
    for (int s = 0; s < nblocks; s++) {
        shape_t shape;
        tj_gen_shape_of(blocks[s].size / words[s], words[s], &shape);
        threads = TJ_MAX(threads, shape.threads);
    }
    memset(&a, 0, sizeof(a));
    for (int i = 0; i < nmembers; i++) {
        const tj_fused_member_t *mb = &members[i];
        shape_t shape;
        int64_t gx, gy;
        if (mb->shape < 0 || mb->shape >= nblocks || mb->count < 0)
            return TJ_ERR_INVALID;
        tj_gen_shape_of(blocks[mb->shape].size / words[mb->shape], words[mb->shape], &shape);
        gx = fused_gx(&shape);
        gy = TJ_MIN(tj_gen_ceil_div(TJ_MAX(mb->count, 1), shape.objects), TJ_GEN_GRID_YZ_MAX);
        gy = TJ_MAX(1, TJ_MIN(gy, FUSED_MEMBER_BLOCKS / gx));
        a.m[i].typed = mb->typed;
        a.m[i].packed = mb->packed;
        a.m[i].count = mb->count;
        a.m[i].first = (unsigned)first;
        a.m[i].gx = (unsigned)gx;
        a.m[i].gy = (unsigned)gy;
        a.m[i].shape = mb->shape;
        first += gx * gy;
    }
    /* The kernel's binary search reads every entry: those past the last member start after
     * every thread block. */
    for (int i = nmembers; i < TJ_FUSED_MAX; i++)
        a.m[i].first = 0xffffffffu;
    a.n = nmembers;
    launch->grid[0] = (unsigned)first;
    launch->grid[1] = launch->grid[2] = 1;
    launch->block[0] = threads;
    launch->block[1] = launch->block[2] = 1;
    *args = a;
    return TJ_OK;
}
