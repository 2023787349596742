/* SPDX-License-Identifier: BSD-3-Clause */
/* The words of a layout's parts (see layout_words.h). */
#include "type/layout_words.h"

#include <string.h>

#include "type/layout_internal.h"

static int lowest_word(uint64_t bits)
{
    bits |= 16;
    return (int)(bits & (~bits + 1));
}

static int log2_word(int word)
{
    int c = 0;
    while (c < 4 && (1 << c) < word)
        c++;
    return c;
}

/* The bits every part's words must divide: the steps from one frame element, and with @p many
 * from one object, to the next, on the typed side and on the packed side. */
static uint64_t steps(const tj_layout_t *l, bool many)
{
    uint64_t bits = 0;
    int64_t elems = 1;

    for (int d = 0; d < l->nframe; d++) {
        if (l->fcounts[d] > 1)
            bits |= (uint64_t)l->fstrides[d];
        elems *= l->fcounts[d]; /* cannot overflow: a finished layout's size is its product */
    }
    if (elems > 1)
        bits |= (uint64_t)l->pre[l->nparts];
    if (many)
        bits |= (uint64_t)l->extent | (uint64_t)l->size;
    return bits;
}

static int add(tj_layout_segment_t *seg, int n, int64_t p, int64_t at, int64_t len, int word)
{
    seg[n] = (tj_layout_segment_t){p, at, len, word};
    return n + 1;
}

/* The segments of part @p p at @p cap, given the frame and object steps @p g. */
static int part_segments(const tj_layout_t *l, int64_t p, uint64_t g, int cap,
                         tj_layout_segment_t seg[TJ_LAYOUT_PART_SEGMENTS])
{
    const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
    int64_t pre = l->pre[p], len = l->pre[p + 1] - pre, x, end;
    uint64_t bits = g | (uint64_t)l->disp[p] | (uint64_t)pre | (uint64_t)len | (uint64_t)cap;
    int w, agree, s, n = 0;

    if (!tj_layout_is_run(sh)) {
        bits |= (uint64_t)sh->word | (len > sh->size ? (uint64_t)sh->extent : 0);
        return add(seg, 0, p, 0, len, lowest_word(bits));
    }
    w = lowest_word(bits);
    /* The run's typed bytes agree with their packed position modulo `agree` in every frame
     * element and object; its edges are cut where the kernel is built, so that positions must
     * be the same in all of them (g). The length a run needs is counted in words of the
     * agreement itself, whatever the buffers allow, so that a narrower alignment never cuts a
     * run its wider one leaves whole. */
    agree = lowest_word(g | ((uint64_t)l->disp[p] - (uint64_t)pre));
    s = agree < cap ? agree : cap;
    if (s <= w || len < (int64_t)TJ_BLOCK_EDGE_RUN_WORDS * agree)
        return add(seg, 0, p, 0, len, w);
    x = pre;
    end = pre + len;
    for (int v = w; v < s; v *= 2)
        if ((x & v) != 0) {
            n = add(seg, n, p, x - pre, v, v);
            x += v;
        }
    n = add(seg, n, p, x - pre, (end - x) / s * s, s);
    x += (end - x) / s * s;
    for (int v = s / 2; v >= w; v /= 2)
        if (end - x >= v) {
            n = add(seg, n, p, x - pre, v, v);
            x += v;
        }
    return n;
}

/* How the parts of @p l are moved at @p cap given the steps @p g: in words of their own when
 * that saves enough units (TJ_LAYOUT_WORDS_GAIN), else all in @p *common, the word they share. */
static bool own_words(const tj_layout_t *l, uint64_t g, int cap, int *common)
{
    int64_t own = 0, shared = 0;
    int w = cap;

    for (int64_t p = 0; p < l->nparts; p++) {
        tj_layout_segment_t seg[TJ_LAYOUT_PART_SEGMENTS];
        int k = part_segments(l, p, g, cap, seg);
        for (int i = 0; i < k; i++) {
            own += seg[i].len / seg[i].word;
            if (seg[i].word < w)
                w = seg[i].word;
        }
    }
    for (int64_t p = 0; p < l->nparts; p++)
        shared += (l->pre[p + 1] - l->pre[p]) / w;
    *common = w;
    return own * TJ_LAYOUT_WORDS_GAIN <= shared * (TJ_LAYOUT_WORDS_GAIN - 1);
}

/* Part @p p's segments as the kernel moves them: its own (@p own), or one in @p common. */
static int chosen_segments(const tj_layout_t *l, int64_t p, uint64_t g, int cap, bool own,
                           int common, tj_layout_segment_t seg[TJ_LAYOUT_PART_SEGMENTS])
{
    if (own)
        return part_segments(l, p, g, cap, seg);
    return add(seg, 0, p, 0, l->pre[p + 1] - l->pre[p], common);
}

int64_t tj_layout_segments(const tj_layout_t *l, int cap, bool one, tj_layout_segment_t *out,
                           int64_t max)
{
    uint64_t g = steps(l, !one);
    int64_t n = 0;
    int common;
    bool own = own_words(l, g, cap, &common);

    for (int64_t p = 0; p < l->nparts; p++) {
        tj_layout_segment_t seg[TJ_LAYOUT_PART_SEGMENTS];
        int k = chosen_segments(l, p, g, cap, own, common, seg);
        for (int i = 0; i < k; i++, n++)
            if (n < max)
                out[n] = seg[i];
    }
    return n;
}

void tj_layout_words_finish(tj_layout_t *l)
{
    uint64_t g[2] = {steps(l, true), steps(l, false)};
    int64_t elems = 1;

    memset(l->kword, 0, sizeof(l->kword));
    memset(l->kunits, 0, sizeof(l->kunits));
    memset(l->kone, 0, sizeof(l->kone));
    if (!l->baked)
        return;
    for (int d = 0; d < l->nframe; d++)
        elems *= l->fcounts[d];
    for (int c = 0; c < 5; c++) {
        int widest[2] = {1, 1}, common[2];
        bool own[2] = {own_words(l, g[0], 1 << c, &common[0]),
                       own_words(l, g[1], 1 << c, &common[1])};
        for (int64_t p = 0; p < l->nparts; p++) {
            tj_layout_segment_t seg[2][TJ_LAYOUT_PART_SEGMENTS];
            int n[2];
            for (int one = 0; one < 2; one++) {
                n[one] = chosen_segments(l, p, g[one], 1 << c, own[one], common[one], seg[one]);
                for (int i = 0; i < n[one]; i++) {
                    l->kunits[one][c] += seg[one][i].len / seg[one][i].word;
                    if (seg[one][i].word > widest[one])
                        widest[one] = seg[one][i].word;
                }
            }
            for (int i = 0; i < n[0] || i < n[1]; i++)
                if (i >= n[0] || i >= n[1] || seg[0][i].at != seg[1][i].at ||
                    seg[0][i].len != seg[1][i].len || seg[0][i].word != seg[1][i].word)
                    l->kone[c] = true;
        }
        l->kword[0][c] = (int8_t)widest[0];
        l->kword[1][c] = (int8_t)widest[1];
        l->kunits[0][c] *= elems; /* cannot overflow: at most the object's size */
        l->kunits[1][c] *= elems;
    }
}

int tj_layout_launch_word(const tj_layout_t *l, int64_t count, uintptr_t typed_at,
                          uintptr_t packed_at, bool *one)
{
    int cap = tj_block_word_at(tj_block_word_at(16, typed_at), packed_at), c;

    *one = false;
    if (!l->baked)
        return tj_block_word_at(tj_block_word_at(l->word, typed_at), packed_at);
    c = log2_word(cap);
    *one = count == 1 && l->kone[c];
    return l->kword[*one][c];
}

int tj_layout_launch_words_aligned(const tj_layout_t *l, int words[2], bool one[2])
{
    words[0] = tj_layout_launch_word(l, 2, 0, 0, &one[0]);
    words[1] = tj_layout_launch_word(l, 1, 0, 0, &one[1]);
    return one[1] ? 2 : 1;
}

bool tj_layout_kernel_word(const tj_layout_t *l, int word, bool one)
{
    int c = log2_word(word);

    if (word != 1 && word != 2 && word != 4 && word != 8 && word != 16)
        return false;
    if (!l->baked)
        return !one && l->word % word == 0;
    return l->kword[one][c] == word && (!one || l->kone[c]);
}

int64_t tj_layout_kernel_units(const tj_layout_t *l, int word, bool one)
{
    if (!l->baked)
        return l->size / word;
    return l->kunits[one][log2_word(word)];
}
