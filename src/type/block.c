/* SPDX-License-Identifier: BSD-3-Clause */
/* Strided blocks: conversion from the IR (TEMPI, algorithm 5), word size, footprint, text. */
#include "type/block.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/common.h"

tj_status_t tj_block_make(int64_t start, int64_t extent, int ndims, const int64_t *counts,
                          const int64_t *strides, tj_block_t *block)
{
    tj_block_t b;
    int64_t vals[TJ_BLOCK_MAX_DIMS];
    uint64_t pitch;
    int nv = 0;

    if (ndims < 1 || ndims > TJ_BLOCK_MAX_DIMS || strides[0] != 1)
        return TJ_ERR_INVALID;
    memset(&b, 0, sizeof(b));
    b.start = start;
    b.extent = extent;
    b.ndims = ndims;
    b.size = 1;
    b.lo = start;
    b.hi = start;
    for (int d = 0; d < ndims; d++) {
        int64_t reach;
        if (counts[d] < 1)
            return TJ_ERR_INVALID;
        b.counts[d] = counts[d];
        b.strides[d] = strides[d];
        if (!tj_mul64(b.size, counts[d], &b.size))
            return TJ_ERR_OVERFLOW;
        /* The footprint grows by (count - 1) * stride on the side the stride points to. */
        if (!tj_mul64(counts[d] - 1, strides[d], &reach))
            return TJ_ERR_OVERFLOW;
        if (!tj_add64(reach < 0 ? b.lo : b.hi, reach, reach < 0 ? &b.lo : &b.hi))
            return TJ_ERR_OVERFLOW;
    }
    if (!tj_add64(b.hi, 1, &b.hi)) /* the last byte itself */
        return TJ_ERR_OVERFLOW;

    /* A dimension of one element never steps: its stride moves no byte. */
    vals[nv++] = counts[0];
    for (int d = 1; d < ndims; d++)
        if (counts[d] > 1)
            vals[nv++] = strides[d];
    b.word = tj_block_word_for(vals, nv, 16);
    /* Run (i_1, ..., i_{n-1}) is at typed byte sum_d i_d * strides[d] and at packed byte
     * sum_d i_d * pitch_d, pitch_d the product of the counts below d: the two agree modulo a
     * word dividing every strides[d] - pitch_d. Modulo 2^64: only the low bits matter. */
    nv = 0;
    pitch = (uint64_t)counts[0];
    for (int d = 1; d < ndims; d++) {
        if (counts[d] > 1)
            vals[nv++] = (int64_t)((uint64_t)strides[d] - pitch);
        pitch *= (uint64_t)counts[d];
    }
    b.edges_word = tj_block_word_for(vals, nv, 16);
    b.disjoint = tj_block_disjoint(&b, 1);
    *block = b;
    return TJ_OK;
}

tj_status_t tj_block_from_ir(const tj_ir_t *ir, int64_t extent, tj_block_t *block)
{
    int64_t counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS], start = 0;
    int ndims = ir->n;

    if (ndims < 1 || ndims > TJ_BLOCK_MAX_DIMS || ir->node[ndims - 1].kind != TJ_IR_DENSE)
        return TJ_ERR_NOT_STRIDED;
    for (int i = 0; i < ndims; i++)
        if (!tj_add64(start, ir->node[i].offset, &start))
            return TJ_ERR_OVERFLOW;
    counts[0] = ir->node[ndims - 1].extent;
    strides[0] = 1;
    /* node[n - 2] is the innermost stream: dimension 1. */
    for (int d = 1; d < ndims; d++) {
        const tj_ir_node_t *nd = &ir->node[ndims - 1 - d];
        if (nd->kind != TJ_IR_STREAM)
            return TJ_ERR_NOT_STRIDED;
        counts[d] = nd->count;
        strides[d] = nd->stride;
    }
    return tj_block_make(start, extent, ndims, counts, strides, block);
}

bool tj_block_dims_disjoint(int n, int64_t *counts, int64_t *strides, int64_t span)
{
    int m = 0;

    /* Sorted by |stride| (insertion: a few dimensions), dimensions of one element left out. */
    for (int d = 0; d < n; d++) {
        int64_t cnt = counts[d], str = tj_abs64(strides[d]);
        int j;
        if (cnt <= 1)
            continue;
        for (j = m++; j > 0 && strides[j - 1] > str; j--) {
            strides[j] = strides[j - 1];
            counts[j] = counts[j - 1];
        }
        strides[j] = str;
        counts[j] = cnt;
    }
    for (int i = 0; i < m; i++) {
        if (strides[i] < span)
            return false;
        if (!tj_mul64(counts[i] - 1, strides[i], &strides[i]) || !tj_add64(strides[i], span, &span))
            return false;
    }
    return true;
}

bool tj_block_disjoint(const tj_block_t *block, int64_t count)
{
    int64_t c[TJ_BLOCK_MAX_DIMS], s[TJ_BLOCK_MAX_DIMS];

    for (int d = 1; d <= block->ndims; d++) {
        c[d - 1] = d < block->ndims ? block->counts[d] : count;
        s[d - 1] = d < block->ndims ? block->strides[d] : block->extent;
    }
    return tj_block_dims_disjoint(block->ndims, c, s, block->counts[0]);
}

static int by_lo(const void *a, const void *b)
{
    const tj_range_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

bool tj_block_ranges_disjoint(tj_range_t *r, int64_t n)
{
    qsort(r, (size_t)n, sizeof(*r), by_lo);
    for (int64_t i = 1; i < n; i++)
        if (r[i - 1].hi > r[i].lo)
            return false;
    return true;
}

bool tj_block_equal(const tj_block_t *a, const tj_block_t *b)
{
    if (a->start != b->start || a->extent != b->extent || a->ndims != b->ndims)
        return false;
    for (int d = 0; d < a->ndims; d++)
        if (a->counts[d] != b->counts[d] || a->strides[d] != b->strides[d])
            return false;
    return true;
}

static int append_list(char *buf, size_t len, int total, const char *label, const int64_t *v, int n)
{
    for (int i = 0; i < n && total >= 0; i++) {
        size_t used = (size_t)total;
        int k = snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "%s%lld",
                         i ? "," : label, (long long)v[i]);
        total = k < 0 ? k : total + k;
    }
    return total;
}

int tj_block_format(const tj_block_t *block, char *buf, size_t len)
{
    int total = snprintf(buf, len, "start=%lld extent=%lld", (long long)block->start,
                         (long long)block->extent);
    if (total < 0)
        return total;
    total = append_list(buf, len, total, " counts=", block->counts, block->ndims);
    return append_list(buf, len, total, " strides=", block->strides, block->ndims);
}

static const char *parse_i64(const char *s, int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || errno != 0)
        return NULL;
    *out = v;
    return end;
}

static const char *parse_list(const char *s, const char *label, int64_t *v, int *n)
{
    size_t ll = strlen(label);
    if (strncmp(s, label, ll) != 0)
        return NULL;
    s += ll;
    *n = 0;
    for (;;) {
        if (*n >= TJ_BLOCK_MAX_DIMS || (s = parse_i64(s, &v[*n])) == NULL)
            return NULL;
        (*n)++;
        if (*s != ',')
            return s;
        s++;
    }
}

tj_status_t tj_block_parse(const char *text, tj_block_t *block)
{
    int64_t start, extent, counts[TJ_BLOCK_MAX_DIMS], strides[TJ_BLOCK_MAX_DIMS];
    int nc, ns;
    const char *s = text;

    if (strncmp(s, "start=", 6) != 0 || (s = parse_i64(s + 6, &start)) == NULL)
        return TJ_ERR_PARSE;
    if (strncmp(s, " extent=", 8) != 0 || (s = parse_i64(s + 8, &extent)) == NULL)
        return TJ_ERR_PARSE;
    if ((s = parse_list(s, " counts=", counts, &nc)) == NULL)
        return TJ_ERR_PARSE;
    if ((s = parse_list(s, " strides=", strides, &ns)) == NULL || ns != nc)
        return TJ_ERR_PARSE;
    if (*s != '\0' && *s != '\n' && *s != ' ')
        return TJ_ERR_PARSE;
    return tj_block_make(start, extent, nc, counts, strides, block) == TJ_OK ? TJ_OK : TJ_ERR_PARSE;
}

tj_block_t tj_block_at_zero(const tj_block_t *block)
{
    tj_block_t b = *block;
    b.lo -= b.start;
    b.hi -= b.start;
    b.start = 0;
    return b;
}

bool tj_block_each_run(const tj_block_t *block, bool (*fn)(int64_t disp, void *arg), void *arg)
{
    int64_t idx[TJ_BLOCK_MAX_DIMS] = {0}, at = 0;

    for (;;) {
        int d = 1;
        if (!fn(at, arg))
            return false;
        /* The next run: an odometer over dimensions 1 and up. */
        for (; d < block->ndims; d++) {
            at += block->strides[d];
            if (++idx[d] < block->counts[d])
                break;
            at -= block->strides[d] * block->counts[d];
            idx[d] = 0;
        }
        if (d == block->ndims)
            return true;
    }
}

int tj_block_words_aligned(const tj_block_t *block, tj_words_t words[2])
{
    words[0] = tj_block_words(block, 1, (uintptr_t)block->start, 0);
    words[1] = tj_block_words(block, 2, (uintptr_t)block->start, 0);
    return words[1].word == words[0].word && words[1].edge == words[0].edge ? 1 : 2;
}

int tj_block_words_aligned_to(const tj_block_t *block, int64_t count, int align,
                              tj_words_offsets_t words[TJ_BLOCK_WORDS_MAX])
{
    int n = 0, low = align < 1 ? 1 : align & -align;
    /* Multiples of the largest power of two dividing align, modulo 16: only the addresses
     * modulo 16 matter. Every (word, edge) pair the loops meet is one of the TJ_BLOCK_WORDS_MAX
     * there are. */
    uintptr_t step = low > 16 ? 16 : (uintptr_t)low;

    for (uintptr_t p = 0; p < 16; p += step)
        for (uintptr_t t = 0; t < 16; t += step) {
            tj_words_t w = tj_block_words(block, count, (uintptr_t)block->start + t, p);
            int i = 0;
            while (i < n && (words[i].words.word != w.word || words[i].words.edge != w.edge))
                i++;
            if (i == n && n < TJ_BLOCK_WORDS_MAX)
                words[n++] = (tj_words_offsets_t){w, (int)t, (int)p};
        }
    return n;
}

int tj_block_words_all(const tj_block_t *block, int align, tj_words_t words[TJ_BLOCK_WORDS_MAX])
{
    int n = 0;

    for (int64_t count = 1; count <= 2; count++) {
        tj_words_offsets_t at[TJ_BLOCK_WORDS_MAX];
        int m = tj_block_words_aligned_to(block, count, align, at);
        for (int j = 0; j < m; j++) {
            int i = 0;
            while (i < n &&
                   (words[i].word != at[j].words.word || words[i].edge != at[j].words.edge))
                i++;
            if (i == n && n < TJ_BLOCK_WORDS_MAX)
                words[n++] = at[j].words;
        }
    }
    return n;
}
