/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a layout part by part (see layout_builder.h): merging parts that continue one
 * another, folding evenly spaced ones into strided shapes, and the layouts of a chain and of a
 * block made that way. */
#include "type/layout_builder.h"

#include <stdlib.h>
#include <string.h>

#include "type/canon.h"
#include "type/layout_internal.h"
#include "util/common.h"

void tj_layout_builder_init(tj_layout_builder_t *b)
{
    b->store = NULL;
    b->nshapes = 0;
    b->st = TJ_OK;
    b->fold = true;
    b->streak = 0;
    b->step = 0;
}

static void fail(tj_layout_builder_t *b, tj_status_t st)
{
    if (b->st == TJ_OK)
        b->st = st;
}

/* Room for @p more parts beyond those there are. */
static bool grow(tj_layout_builder_t *b, int64_t more)
{
    tj_layout_store_t *s = b->store;
    int64_t want;

    if (s == NULL) {
        if ((s = calloc(1, sizeof(*s))) == NULL) {
            fail(b, TJ_ERR_NOMEM);
            return false;
        }
        atomic_init(&s->refs, 1);
        b->store = s;
    }
    if (s->n + more <= s->cap)
        return true;
    if (s->n + more > TJ_LAYOUT_MAX_PARTS) {
        s->too_many = true;
        fail(b, TJ_ERR_NOT_STRIDED);
        return false;
    }
    want = s->cap ? s->cap : 16;
    while (want < s->n + more)
        want *= 2;
    if (want > TJ_LAYOUT_MAX_PARTS)
        want = TJ_LAYOUT_MAX_PARTS;
    int64_t *disp = realloc(s->disp, (size_t)want * sizeof(int64_t));
    if (disp != NULL)
        s->disp = disp;
    int64_t *pre = realloc(s->pre, (size_t)(want + 1) * sizeof(int64_t));
    if (pre != NULL)
        s->pre = pre;
    uint8_t *shape = realloc(s->shape, (size_t)want);
    if (shape != NULL)
        s->shape = shape;
    if (disp == NULL || pre == NULL || shape == NULL) {
        fail(b, TJ_ERR_NOMEM);
        return false;
    }
    if (s->cap == 0)
        s->pre[0] = 0;
    s->cap = want;
    return true;
}

void tj_layout_builder_reserve(tj_layout_builder_t *b, int64_t n)
{
    if (b->st == TJ_OK && n > 0)
        grow(b, TJ_MIN(n, TJ_LAYOUT_MAX_PARTS));
}

bool tj_layout_builder_too_many(const tj_layout_builder_t *b)
{
    return b->store != NULL && b->store->too_many;
}

/* The index of @p shape in the builder's table, added if new; -1 when the table is full. */
static int shape_index(tj_layout_builder_t *b, const tj_block_t *shape)
{
    for (int s = 0; s < b->nshapes; s++)
        if (tj_block_equal(&b->shapes[s], shape))
            return s;
    if (b->nshapes == TJ_LAYOUT_MAX_SHAPES)
        return -1;
    b->shapes[b->nshapes] = *shape;
    return b->nshapes++;
}

static int run_index(tj_layout_builder_t *b)
{
    static const int64_t one = 1;
    tj_block_t run;

    /* The run shape is always in the table once a run was added: look for it first. */
    for (int s = 0; s < b->nshapes; s++)
        if (tj_layout_is_run(&b->shapes[s]))
            return s;
    tj_block_make(0, 1, 1, &one, &one, &run);
    return shape_index(b, &run);
}

/* The block that a part of shape @p s and @p len packed bytes is, repeated once (its extent
 * left for the caller): a run of len bytes, one repetition of the shape, or several as one more
 * dimension. False when that would take more dimensions than a block has. */
static bool unit_block(const tj_layout_builder_t *b, int s, int64_t len, tj_block_t *u)
{
    const tj_block_t *sh = &b->shapes[s];
    int64_t reps;

    if (tj_layout_is_run(sh)) {
        memset(u, 0, sizeof(*u));
        u->ndims = 1;
        u->counts[0] = len;
        u->strides[0] = 1;
        return true;
    }
    *u = *sh;
    reps = len / sh->size;
    if (reps == 1)
        return true;
    if (sh->ndims == TJ_BLOCK_MAX_DIMS)
        return false;
    u->counts[u->ndims] = reps;
    u->strides[u->ndims++] = sh->extent;
    return true;
}

/* Whether the blocks are the same but for their extents. */
static bool same_unit(const tj_block_t *a, const tj_block_t *u)
{
    if (a->ndims != u->ndims)
        return false;
    for (int d = 0; d < a->ndims; d++)
        if (a->counts[d] != u->counts[d] || a->strides[d] != u->strides[d])
            return false;
    return true;
}

/* Whether the last part, of a shape other than @p s, takes part (disp, len, s) as its next
 * repetition: the part is one repetition of the last part's shape, at its next step (a part
 * folded before, or repetitions of a child type's block followed by one more). */
static bool extends_last(const tj_layout_builder_t *b, int64_t disp, int64_t len, int s)
{
    const tj_layout_store_t *st = b->store;
    int64_t last = st->n - 1, plen = st->pre[st->n] - st->pre[last], end;
    const tj_block_t *sh = &b->shapes[st->shape[last]];
    tj_block_t u;

    if (tj_layout_is_run(sh) || len != sh->size ||
        __builtin_mul_overflow(plen / sh->size, sh->extent, &end) ||
        __builtin_add_overflow(st->disp[last], end, &end) || end != disp)
        return false;
    if (tj_layout_is_run(&b->shapes[s])) /* a run is a one-row shape's repetition */
        return sh->ndims == 1;
    return unit_block(b, s, len, &u) && same_unit(sh, &u);
}

/* Fold the streak of equal, evenly spaced parts that ends the builder's parts into one part of
 * the shape repeating their unit b->step bytes apart, when the shape table has room. */
static void fold_streak(tj_layout_builder_t *b)
{
    tj_layout_store_t *st = b->store;
    int64_t first = st->n - b->streak, len = st->pre[first + 1] - st->pre[first];
    tj_block_t u, f;
    int s;

    b->streak = 1;
    if (!unit_block(b, st->shape[first], len, &u) ||
        tj_block_make(0, b->step, u.ndims, u.counts, u.strides, &f) != TJ_OK ||
        (s = shape_index(b, &f)) < 0)
        return;
    st->shape[first] = (uint8_t)s;
    st->pre[first + 1] = st->pre[st->n];
    st->n = first + 1;
}

/* The part just appended: does it continue the streak of equal, evenly spaced parts before it,
 * and does that make a streak long enough to fold? */
static void note_streak(tj_layout_builder_t *b)
{
    const tj_layout_store_t *st = b->store;
    int64_t p = st->n - 1, step;

    if (!b->fold || p == 0 || st->shape[p] != st->shape[p - 1] ||
        st->pre[p + 1] - st->pre[p] != st->pre[p] - st->pre[p - 1] ||
        __builtin_sub_overflow(st->disp[p], st->disp[p - 1], &step)) {
        b->streak = 1;
        return;
    }
    if (b->streak >= 2 && step == b->step) {
        b->streak++;
    } else {
        b->streak = 2;
        b->step = step;
    }
    if (b->streak >= TJ_LAYOUT_FOLD_MIN)
        fold_streak(b);
}

/* Append part (disp, len bytes, shape s), or extend the last part when it continues it. */
static void add_part(tj_layout_builder_t *b, int64_t disp, int64_t len, int s)
{
    tj_layout_store_t *st;
    int64_t end;

    if (len <= 0 || b->st != TJ_OK)
        return;
    st = b->store;
    if (st != NULL && st->n > 0 && st->shape[st->n - 1] == s) {
        int64_t last = st->n - 1, plen = st->pre[st->n] - st->pre[last];
        const tj_block_t *sh = &b->shapes[s];
        bool cont;
        if (tj_layout_is_run(sh))
            cont = !__builtin_add_overflow(st->disp[last], plen, &end) && end == disp;
        else
            cont = !__builtin_mul_overflow(plen / sh->size, sh->extent, &end) &&
                   !__builtin_add_overflow(st->disp[last], end, &end) && end == disp;
        if (cont) {
            if (__builtin_add_overflow(st->pre[st->n], len, &st->pre[st->n]))
                fail(b, TJ_ERR_OVERFLOW);
            b->streak = 1; /* the last part grew: it equals none before it */
            return;
        }
    } else if (b->fold && st != NULL && st->n > 0 && extends_last(b, disp, len, s)) {
        if (__builtin_add_overflow(st->pre[st->n], len, &st->pre[st->n]))
            fail(b, TJ_ERR_OVERFLOW);
        b->streak = 1;
        return;
    }
    if (!grow(b, 1))
        return;
    st = b->store;
    st->disp[st->n] = disp;
    st->shape[st->n] = (uint8_t)s;
    if (__builtin_add_overflow(st->pre[st->n], len, &st->pre[st->n + 1]))
        fail(b, TJ_ERR_OVERFLOW);
    st->n++;
    note_streak(b);
}

void tj_layout_builder_add_run(tj_layout_builder_t *b, int64_t disp, int64_t len)
{
    int s;

    if (len <= 0 || b->st != TJ_OK)
        return;
    if ((s = run_index(b)) < 0) {
        fail(b, TJ_ERR_NOT_STRIDED); /* cannot happen: runs are the first shape to be kept */
        return;
    }
    add_part(b, disp, len, s);
}

/* One row of add_rows: a run of `len` bytes at `base` + the row's offset. */
typedef struct {
    tj_layout_builder_t *b;
    int64_t base, len;
} row_t;

static bool add_row(int64_t off, void *arg)
{
    row_t *r = arg;
    tj_layout_builder_add_run(r->b, r->base + off, r->len);
    return r->b->st == TJ_OK;
}

/* Every row (a run of counts[0] bytes) of @p n repetitions of @p shape at @p disp, as runs. */
static void add_rows(tj_layout_builder_t *b, int64_t disp, int64_t n, const tj_block_t *shape)
{
    row_t row = {b, 0, shape->counts[0]};

    for (int64_t r = 0; r < n && b->st == TJ_OK; r++) {
        row.base = disp + r * shape->extent;
        tj_block_each_run(shape, add_row, &row);
    }
}

/* @p n repetitions of @p shape at @p disp: a run when it is one, a part of its shape when the
 * table has room, else its rows. */
static void add_shaped(tj_layout_builder_t *b, int64_t disp, int64_t n, const tj_block_t *shape)
{
    int64_t len;
    int s;

    if (n <= 0 || b->st != TJ_OK)
        return;
    if (shape->ndims == 1 && (n == 1 || shape->extent == shape->counts[0])) {
        if (!tj_mul64(n, shape->counts[0], &len))
            fail(b, TJ_ERR_OVERFLOW);
        else
            tj_layout_builder_add_run(b, disp, len);
        return;
    }
    if (tj_layout_is_run(shape)) {
        tj_layout_builder_add_run(b, disp, n);
        return;
    }
    if ((s = shape_index(b, shape)) < 0) {
        add_rows(b, disp, n, shape);
        return;
    }
    if (!tj_mul64(n, shape->size, &len))
        fail(b, TJ_ERR_OVERFLOW);
    else
        add_part(b, disp, len, s);
}

void tj_layout_builder_add_chain(tj_layout_builder_t *b, int64_t disp, int64_t bl,
                                 const tj_ir_t *ir, int64_t ext)
{
    tj_ir_t *c;
    int64_t off, size;
    tj_block_t shape;

    if (bl <= 0 || b->st != TJ_OK)
        return;
    if ((c = malloc(sizeof(*c))) == NULL) {
        fail(b, TJ_ERR_NOMEM);
        return;
    }
    c->n = ir->n;
    memcpy(c->node, ir->node, (size_t)ir->n * sizeof(ir->node[0]));
    size = tj_ir_size(c);
    if (!tj_canon_hoist_offsets(c, &off) || size < 0 || !tj_add64(disp, off, &disp)) {
        fail(b, TJ_ERR_OVERFLOW);
        goto out;
    }
    if (size == 0)
        goto out;
    c->node[0].offset = 0;
    if (c->n <= TJ_BLOCK_MAX_DIMS) {
        tj_status_t st = tj_block_from_ir(c, ext, &shape);
        if (st != TJ_OK)
            fail(b, st == TJ_ERR_OVERFLOW ? st : TJ_ERR_NOT_STRIDED);
        else
            add_shaped(b, disp, bl, &shape);
        goto out;
    }
    /* Longer than a block: the outermost stream taken apart, one copy at a time. */
    {
        const tj_ir_node_t outer = c->node[0];
        memmove(&c->node[0], &c->node[1], (size_t)(c->n - 1) * sizeof(c->node[0]));
        c->n--;
        for (int64_t r = 0; r < bl && b->st == TJ_OK; r++)
            for (int64_t i = 0; i < outer.count && b->st == TJ_OK; i++)
                tj_layout_builder_add_chain(b, disp + r * ext + i * outer.stride, 1, c, 0);
    }
out:
    free(c);
}

void tj_layout_builder_add_layout(tj_layout_builder_t *b, int64_t disp, int64_t bl,
                                  const tj_layout_t *child, int64_t ext)
{
    int map[TJ_LAYOUT_MAX_SHAPES];
    int64_t elems = tj_layout_elements(child), total, n = child->nparts;

    if (bl <= 0 || b->st != TJ_OK || n == 0 || elems == 0)
        return;
    if (elems < 0 || !tj_mul64(elems, bl, &total) || !tj_mul64(total, n, &total)) {
        fail(b, TJ_ERR_OVERFLOW);
        return;
    }
    /* Far more parts than allowed cannot merge back under the limit often enough to be worth
     * building: the type stays with the system MPI. */
    if (total / 64 > TJ_LAYOUT_MAX_PARTS) {
        grow(b, TJ_LAYOUT_MAX_PARTS + 1);
        return;
    }
    for (int s = 0; s < child->nshapes; s++)
        map[s] =
            tj_layout_is_run(&child->shapes[s]) ? run_index(b) : shape_index(b, &child->shapes[s]);
    tj_layout_builder_reserve(b, TJ_MIN(total, TJ_LAYOUT_MAX_PARTS));
    for (int64_t r = 0; r < bl && b->st == TJ_OK; r++) {
        int64_t base;
        if (!tj_add64(disp, r * ext, &base) || !tj_add64(base, child->start, &base)) {
            fail(b, TJ_ERR_OVERFLOW);
            return;
        }
        for (int64_t e = 0; e < elems && b->st == TJ_OK; e++) {
            int64_t fo = base + tj_layout_frame_offset(child, e);
            for (int64_t p = 0; p < n && b->st == TJ_OK; p++) {
                int s = child->shape != NULL ? child->shape[p] : 0;
                const tj_block_t *sh = &child->shapes[s];
                int64_t len = child->pre[p + 1] - child->pre[p], d = fo + child->disp[p];
                if (map[s] >= 0)
                    add_part(b, d, len, map[s]);
                else
                    add_rows(b, d, len / sh->size, sh);
            }
        }
    }
}

/* Drop the builder's shapes no part has (a fold leaves the shape of the parts it folded, or the
 * run shape, without any), renumbering the parts': each shape is a case in the kernel, and a
 * layout of one shape needs no shape column. */
static void drop_unused_shapes(tj_layout_builder_t *b)
{
    tj_layout_store_t *st = b->store;
    bool used[TJ_LAYOUT_MAX_SHAPES] = {false};
    uint8_t map[TJ_LAYOUT_MAX_SHAPES];
    int n = 0;

    for (int64_t p = 0; p < st->n; p++)
        used[st->shape[p]] = true;
    for (int s = 0; s < b->nshapes; s++)
        if (used[s]) {
            map[s] = (uint8_t)n;
            b->shapes[n++] = b->shapes[s];
        }
    if (n == b->nshapes)
        return;
    for (int64_t p = 0; p < st->n; p++)
        st->shape[p] = map[st->shape[p]];
    b->nshapes = n;
}

/* The store's arrays cut to its parts, when far fewer than reserved (the member count a
 * builder reserves for, which folds and merges reduce). */
static void shrink(tj_layout_store_t *s)
{
    int64_t want = s->n > 0 ? s->n : 1;
    int64_t *disp, *pre;
    uint8_t *shape;

    if (s->cap <= 2 * want + 16)
        return;
    if ((disp = realloc(s->disp, (size_t)want * sizeof(int64_t))) != NULL)
        s->disp = disp;
    if ((pre = realloc(s->pre, (size_t)(want + 1) * sizeof(int64_t))) != NULL)
        s->pre = pre;
    if ((shape = realloc(s->shape, (size_t)want)) != NULL)
        s->shape = shape;
    s->cap = want; /* an array realloc could not cut is larger still */
}

/* A new layout of no frame over the builder's parts. */
static tj_status_t layout_new(tj_layout_builder_t *b, tj_layout_t **out)
{
    tj_layout_t *l = calloc(1, sizeof(*l));
    int64_t first;

    if (l == NULL)
        return TJ_ERR_NOMEM;
    if (b->store == NULL && !grow(b, 1)) {
        free(l);
        return b->st;
    }
    drop_unused_shapes(b);
    shrink(b->store);
    if (b->nshapes > 0 && (l->shapes = malloc((size_t)b->nshapes * sizeof(tj_block_t))) == NULL) {
        free(l);
        return TJ_ERR_NOMEM;
    }
    atomic_init(&l->refs, 1);
    atomic_init(&l->disjoint_parts, -1);
    atomic_init(&l->device, NULL);
    l->nshapes = b->nshapes;
    if (b->nshapes > 0)
        memcpy(l->shapes, b->shapes, (size_t)b->nshapes * sizeof(tj_block_t));
    /* Displacements from the first part's: the start is then a byte the layout touches (the
     * first of its first shape), where a kernel is launched, and layouts that differ only in
     * where they begin share their kernels. */
    first = b->store->n > 0 ? b->store->disp[0] : 0;
    for (int64_t p = 0; p < b->store->n; p++)
        b->store->disp[p] -= first;
    l->start = first;
    l->store = b->store;
    l->nparts = b->store->n;
    l->disp = b->store->disp;
    l->pre = b->store->pre;
    l->shape = b->store->shape;
    b->store = NULL;
    *out = l;
    return TJ_OK;
}

tj_status_t tj_layout_builder_end(tj_layout_builder_t *b, tj_layout_t **out)
{
    tj_status_t st = b->st;

    if (st == TJ_OK)
        st = layout_new(b, out);
    tj_layout_store_release(b->store);
    tj_layout_builder_init(b);
    return st;
}

tj_status_t tj_layout_builder_from_chain(const tj_ir_t *ir, tj_layout_t **out)
{
    tj_layout_builder_t b;
    tj_ir_t *inner;
    tj_layout_t *l = NULL;
    int64_t off;
    int outer;
    tj_status_t st;

    if ((inner = malloc(sizeof(*inner))) == NULL)
        return TJ_ERR_NOMEM;
    inner->n = ir->n;
    memcpy(inner->node, ir->node, (size_t)ir->n * sizeof(ir->node[0]));
    if (!tj_canon_hoist_offsets(inner, &off)) {
        free(inner);
        return TJ_ERR_OVERFLOW;
    }
    /* Dimensions past a block's sixteen are the frame, outermost last. */
    outer = inner->n > TJ_BLOCK_MAX_DIMS ? inner->n - TJ_BLOCK_MAX_DIMS : 0;
    if (outer > TJ_LAYOUT_MAX_FRAME) {
        free(inner);
        return TJ_ERR_NOT_STRIDED;
    }
    tj_layout_builder_init(&b);
    {
        tj_ir_t *shape = malloc(sizeof(*shape));
        if (shape == NULL) {
            free(inner);
            return TJ_ERR_NOMEM;
        }
        shape->n = inner->n - outer;
        memcpy(shape->node, &inner->node[outer], (size_t)shape->n * sizeof(shape->node[0]));
        shape->node[0].offset = 0;
        tj_layout_builder_add_chain(&b, 0, 1, shape, 0);
        free(shape);
    }
    if ((st = tj_layout_builder_end(&b, &l)) != TJ_OK) {
        free(inner);
        return st;
    }
    for (int i = outer - 1; i >= 0 && st == TJ_OK; i--)
        st = tj_layout_stream(&l, 0, inner->node[i].count, inner->node[i].stride);
    free(inner);
    if (st != TJ_OK) {
        tj_layout_release(l);
        return st;
    }
    l->start += off;
    *out = l;
    return TJ_OK;
}

tj_status_t tj_layout_builder_from_block(const tj_block_t *block, int64_t size, tj_layout_t **out)
{
    tj_layout_builder_t b;
    tj_block_t shape = tj_block_at_zero(block);
    tj_layout_t *l;
    tj_status_t st;

    tj_layout_builder_init(&b);
    /* One copy: the shape's extent does not matter; zero keeps the word the block's. */
    shape.extent = 0;
    add_shaped(&b, 0, 1, &shape);
    if ((st = tj_layout_builder_end(&b, &l)) != TJ_OK)
        return st;
    l->start += block->start;
    if ((st = tj_layout_finish(&l, block->extent, size)) != TJ_OK) {
        tj_layout_release(l);
        return st;
    }
    *out = l;
    return TJ_OK;
}
