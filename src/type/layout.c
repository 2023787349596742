/* Layouts (see layout.h): building them part by part, the frame, the word and hash of a finished
 * layout, and the questions the device paths ask of it (overlap, runs, the block it may be). */
#include "type/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "type/canon.h"
#include "util/common.h"

struct tj_layout_store {
    atomic_int refs;
    int64_t n, cap;
    int64_t *disp, *pre; /* pre has cap + 1 entries */
    uint8_t *shape;      /* NULL once a finished layout has one shape */
    bool too_many;
};

/* The hooks of the layer that keeps device state with layouts (tj_layout_set_hooks). */
static _Atomic(void (*)(tj_layout_t *l)) release_hook;

void tj_layout_set_hooks(const tj_layout_hooks_t *hooks)
{
    atomic_store(&release_hook, hooks->release);
}

tj_layout_device_t *tj_layout_device(const tj_layout_t *l)
{
    return atomic_load(&((tj_layout_t *)l)->device);
}

bool tj_layout_device_attach(tj_layout_t *l, tj_layout_device_t *device, tj_layout_device_t **kept)
{
    tj_layout_device_t *none = NULL;
    bool won = atomic_compare_exchange_strong(&l->device, &none, device);

    *kept = won ? device : none;
    return won;
}

tj_layout_device_t *tj_layout_device_detach(tj_layout_t *l)
{
    return atomic_exchange(&l->device, NULL);
}

static void store_release(tj_layout_store_t *s)
{
    if (s == NULL || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    free(s->disp);
    free(s->pre);
    free(s->shape);
    free(s);
}

tj_layout_t *tj_layout_hold(const tj_layout_t *l)
{
    tj_layout_t *m = (tj_layout_t *)l;
    if (m != NULL)
        atomic_fetch_add(&m->refs, 1);
    return m;
}

static void layout_free(tj_layout_t *l)
{
    free(l->fcounts);
    free(l->fstrides);
    free(l->shapes);
    store_release(l->store);
    free(l);
}

void tj_layout_release(tj_layout_t *l)
{
    void (*hook)(tj_layout_t * l);

    if (l == NULL || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    hook = atomic_load(&release_hook);
    if (atomic_load(&l->device) != NULL && hook != NULL)
        hook(l);
    layout_free(l);
}

/* A copy of @p l's header sharing its store; NULL when out of memory. */
static tj_layout_t *clone(const tj_layout_t *l)
{
    tj_layout_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    atomic_init(&c->refs, 1);
    c->start = l->start;
    c->extent = l->extent;
    c->size = l->size;
    c->nframe = l->nframe;
    c->nshapes = l->nshapes;
    c->nparts = l->nparts;
    c->disp = l->disp;
    c->pre = l->pre;
    c->shape = l->shape;
    c->store = l->store;
    c->finished = l->finished;
    c->word = l->word;
    c->disp_bytes = l->disp_bytes;
    c->pre_bytes = l->pre_bytes;
    c->baked = l->baked;
    c->probed = l->probed;
    c->hash[0] = l->hash[0];
    c->hash[1] = l->hash[1];
    atomic_init(&c->disjoint_parts, -1);
    atomic_init(&c->device, NULL);
    if (l->nframe > 0) {
        c->fcounts = malloc((size_t)l->nframe * sizeof(int64_t));
        c->fstrides = malloc((size_t)l->nframe * sizeof(int64_t));
    }
    if (l->nshapes > 0)
        c->shapes = malloc((size_t)l->nshapes * sizeof(tj_block_t));
    if ((l->nframe > 0 && (c->fcounts == NULL || c->fstrides == NULL)) ||
        (l->nshapes > 0 && c->shapes == NULL)) {
        free(c->fcounts);
        free(c->fstrides);
        free(c->shapes);
        free(c);
        return NULL;
    }
    if (l->nframe > 0) {
        memcpy(c->fcounts, l->fcounts, (size_t)l->nframe * sizeof(int64_t));
        memcpy(c->fstrides, l->fstrides, (size_t)l->nframe * sizeof(int64_t));
    }
    if (l->nshapes > 0)
        memcpy(c->shapes, l->shapes, (size_t)l->nshapes * sizeof(tj_block_t));
    if (c->store != NULL)
        atomic_fetch_add(&c->store->refs, 1);
    return c;
}

/* @p *l, made the caller's own: a clone when it is shared. */
static tj_status_t own(tj_layout_t **l)
{
    tj_layout_t *c;

    if (atomic_load(&(*l)->refs) == 1)
        return TJ_OK;
    if ((c = clone(*l)) == NULL)
        return TJ_ERR_NOMEM;
    tj_layout_release(*l);
    *l = c;
    return TJ_OK;
}

/* ---- building ------------------------------------------------------------------------------ */

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

/* ---- folding evenly spaced parts ----------------------------------------------------------- */

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

void tj_layout_add_run(tj_layout_builder_t *b, int64_t disp, int64_t len)
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

/* Every row (a run of counts[0] bytes) of @p n repetitions of @p shape at @p disp, as runs. */
static void add_rows(tj_layout_builder_t *b, int64_t disp, int64_t n, const tj_block_t *shape)
{
    int64_t idx[TJ_BLOCK_MAX_DIMS] = {0};

    for (int64_t r = 0; r < n && b->st == TJ_OK; r++) {
        int64_t base = disp + r * shape->extent, off = 0;
        memset(idx, 0, sizeof(idx));
        for (;;) {
            int d;
            tj_layout_add_run(b, base + off, shape->counts[0]);
            for (d = 1; d < shape->ndims; d++) {
                if (++idx[d] < shape->counts[d]) {
                    off += shape->strides[d];
                    break;
                }
                off -= (shape->counts[d] - 1) * shape->strides[d];
                idx[d] = 0;
            }
            if (d >= shape->ndims || b->st != TJ_OK)
                break;
        }
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
            tj_layout_add_run(b, disp, len);
        return;
    }
    if (tj_layout_is_run(shape)) {
        tj_layout_add_run(b, disp, n);
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

void tj_layout_add_chain(tj_layout_builder_t *b, int64_t disp, int64_t bl, const tj_ir_t *ir,
                         int64_t ext)
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
                tj_layout_add_chain(b, disp + r * ext + i * outer.stride, 1, c, 0);
    }
out:
    free(c);
}

int64_t tj_layout_elements(const tj_layout_t *l)
{
    int64_t e = 1;
    for (int d = 0; d < l->nframe; d++)
        if (!tj_mul64(e, l->fcounts[d], &e))
            return -1;
    return e;
}

int64_t tj_layout_frame_offset(const tj_layout_t *l, int64_t e)
{
    int64_t off = 0;
    for (int d = 0; d < l->nframe; d++) {
        off += (e % l->fcounts[d]) * l->fstrides[d];
        e /= l->fcounts[d];
    }
    return off;
}

void tj_layout_add_layout(tj_layout_builder_t *b, int64_t disp, int64_t bl,
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
    store_release(b->store);
    tj_layout_builder_init(b);
    return st;
}

tj_status_t tj_layout_from_chain(const tj_ir_t *ir, tj_layout_t **out)
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
        tj_layout_add_chain(&b, 0, 1, shape, 0);
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

tj_status_t tj_layout_stream(tj_layout_t **l, int64_t offset, int64_t count, int64_t stride)
{
    tj_layout_t *m;
    tj_status_t st;
    int n;

    if ((st = own(l)) != TJ_OK)
        return st;
    m = *l;
    if (!tj_add64(m->start, offset, &m->start))
        return TJ_ERR_OVERFLOW;
    m->finished = false;
    if (count == 1)
        return TJ_OK;
    n = m->nframe;
    /* A stream that continues the outermost frame dimension extends it. */
    if (n > 0 && count > 0 && m->fcounts[n - 1] > 0) {
        int64_t span, merged;
        if (tj_mul64(m->fcounts[n - 1], m->fstrides[n - 1], &span) && span == stride &&
            tj_mul64(m->fcounts[n - 1], count, &merged)) {
            m->fcounts[n - 1] = merged;
            return TJ_OK;
        }
    }
    if (n == TJ_LAYOUT_MAX_FRAME)
        return TJ_ERR_NOT_STRIDED;
    int64_t *c = realloc(m->fcounts, (size_t)(n + 1) * sizeof(int64_t));
    if (c == NULL)
        return TJ_ERR_NOMEM;
    m->fcounts = c;
    int64_t *s = realloc(m->fstrides, (size_t)(n + 1) * sizeof(int64_t));
    if (s == NULL)
        return TJ_ERR_NOMEM;
    m->fstrides = s;
    m->fcounts[n] = count;
    m->fstrides[n] = stride;
    m->nframe = n + 1;
    return TJ_OK;
}

tj_status_t tj_layout_from_block(const tj_block_t *block, int64_t size, tj_layout_t **out)
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

/* ---- finishing ----------------------------------------------------------------------------- */

static void kernel_hash(tj_layout_t *l)
{
    XXH3_state_t h;
    XXH128_hash_t digest;
    int32_t head[5] = {l->nframe, l->nshapes, l->disp_bytes, l->pre_bytes, l->baked};

    XXH3_128bits_reset(&h);
    XXH3_128bits_update(&h, head, sizeof(head));
    if (l->nframe > 0) {
        XXH3_128bits_update(&h, l->fcounts, (size_t)l->nframe * sizeof(int64_t));
        XXH3_128bits_update(&h, l->fstrides, (size_t)l->nframe * sizeof(int64_t));
    }
    for (int s = 0; s < l->nshapes; s++) {
        const tj_block_t *b = &l->shapes[s];
        int64_t rec[2 + 2 * TJ_BLOCK_MAX_DIMS] = {b->ndims, b->extent};
        for (int d = 0; d < b->ndims; d++) {
            rec[2 + d] = b->counts[d];
            rec[2 + TJ_BLOCK_MAX_DIMS + d] = b->strides[d];
        }
        XXH3_128bits_update(&h, rec, sizeof(rec));
    }
    /* A table kernel takes the extent and the table at run time; a baked one has them in its
     * source. */
    if (l->baked) {
        int64_t rec[2] = {l->extent, l->nparts};
        XXH3_128bits_update(&h, rec, sizeof(rec));
        XXH3_128bits_update(&h, l->disp, (size_t)l->nparts * sizeof(int64_t));
        XXH3_128bits_update(&h, l->pre, (size_t)(l->nparts + 1) * sizeof(int64_t));
        if (l->shape != NULL)
            XXH3_128bits_update(&h, l->shape, (size_t)l->nparts);
    }
    digest = XXH3_128bits_digest(&h);
    l->hash[0] = digest.low64;
    l->hash[1] = digest.high64;
}

tj_status_t tj_layout_finish(tj_layout_t **lp, int64_t extent, int64_t size)
{
    tj_layout_t *l;
    int64_t elems, total, fbytes;
    uint64_t bits = 16;
    bool small_disp = true;
    tj_status_t st;

    if ((st = own(lp)) != TJ_OK)
        return st;
    l = *lp;
    elems = tj_layout_elements(l);
    fbytes = l->pre[l->nparts];
    if (elems < 0 || !tj_mul64(elems, fbytes, &total))
        return TJ_ERR_OVERFLOW;
    if (total != size || size <= 0)
        return TJ_ERR_NOT_STRIDED;
    l->extent = extent;
    l->size = size;
    bits |= (uint64_t)l->start | (uint64_t)extent;
    for (int d = 0; d < l->nframe; d++)
        if (l->fcounts[d] > 1)
            bits |= (uint64_t)l->fstrides[d];
    /* A shape's word is its object's: the step between its repetitions counts too. */
    for (int s = 0; s < l->nshapes; s++)
        if (!tj_layout_is_run(&l->shapes[s]))
            bits |= (uint64_t)l->shapes[s].word | (uint64_t)l->shapes[s].extent;
    for (int64_t p = 0; p < l->nparts; p++) {
        bits |= (uint64_t)l->disp[p] | (uint64_t)l->pre[p + 1];
        small_disp = small_disp && l->disp[p] >= INT32_MIN && l->disp[p] <= INT32_MAX;
    }
    l->word = (int)(bits & (~bits + 1));
    l->disp_bytes = small_disp ? 4 : 8;
    l->pre_bytes = fbytes <= (int64_t)UINT32_MAX ? 4 : 8;
    l->baked = l->nparts <= TJ_LAYOUT_BAKED_MAX;
    /* One shape: every part is of it, and the table needs no shape column. */
    if (l->nshapes <= 1 && l->store->shape != NULL && atomic_load(&l->store->refs) == 1) {
        free(l->store->shape);
        l->store->shape = NULL;
    }
    if (l->nshapes <= 1)
        l->shape = NULL;
    kernel_hash(l);
    l->finished = true;
    atomic_store(&l->disjoint_parts, -1);
    return TJ_OK;
}

bool tj_layout_as_chain(const tj_layout_t *l, tj_ir_t *ir)
{
    const tj_block_t *sh;
    int64_t reps, off;
    int n = 0;

    if (l->nparts != 1)
        return false;
    sh = &l->shapes[l->shape != NULL ? l->shape[0] : 0];
    reps = (l->pre[1] - l->pre[0]) / sh->size;
    if (l->nframe + 1 + sh->ndims > TJ_IR_MAX_NODES || !tj_add64(l->start, l->disp[0], &off))
        return false;
    memset(ir, 0, sizeof(*ir));
    for (int d = l->nframe - 1; d >= 0; d--) {
        ir->node[n].kind = TJ_IR_STREAM;
        ir->node[n].count = l->fcounts[d];
        ir->node[n++].stride = l->fstrides[d];
    }
    ir->node[n].kind = TJ_IR_STREAM;
    ir->node[n].count = reps;
    ir->node[n++].stride = sh->extent;
    for (int d = sh->ndims - 1; d >= 1; d--) {
        ir->node[n].kind = TJ_IR_STREAM;
        ir->node[n].count = sh->counts[d];
        ir->node[n++].stride = sh->strides[d];
    }
    ir->node[n].kind = TJ_IR_DENSE;
    ir->node[n++].extent = sh->counts[0];
    ir->n = n;
    ir->node[0].offset = off;
    tj_canon_simplify(ir);
    return true;
}

bool tj_layout_as_block(const tj_layout_t *l, tj_block_t *block)
{
    tj_ir_t *ir;
    bool ok;

    if (!l->finished || (ir = malloc(sizeof(*ir))) == NULL)
        return false;
    ok = tj_layout_as_chain(l, ir) && ir->n <= TJ_BLOCK_MAX_DIMS &&
         tj_block_from_ir(ir, l->extent, block) == TJ_OK && block->size == l->size;
    free(ir);
    return ok;
}

tj_status_t tj_layout_signature(const tj_layout_t *l, tj_layout_t **out)
{
    tj_layout_t *c;

    if (l->baked) {
        *out = tj_layout_hold(l);
        return TJ_OK;
    }
    if ((c = clone(l)) == NULL)
        return TJ_ERR_NOMEM;
    store_release(c->store);
    c->store = NULL;
    c->nparts = 0;
    c->disp = c->pre = NULL;
    c->shape = NULL;
    c->start = 0;
    c->extent = 0;
    c->size = 0;
    *out = c;
    return TJ_OK;
}

/* ---- questions of the device paths --------------------------------------------------------- */

typedef struct {
    int64_t lo, hi;
} span_t;

static int by_lo(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The bytes part @p p touches, and whether its repetitions are disjoint. */
static bool part_span(const tj_layout_t *l, int64_t p, span_t *sp)
{
    const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
    int64_t len = l->pre[p + 1] - l->pre[p], n, reach;

    if (tj_layout_is_run(sh)) {
        sp->lo = l->disp[p];
        sp->hi = l->disp[p] + len;
        return true;
    }
    n = len / sh->size;
    reach = (n - 1) * sh->extent;
    sp->lo = l->disp[p] + sh->lo + (reach < 0 ? reach : 0);
    sp->hi = l->disp[p] + sh->hi + (reach > 0 ? reach : 0);
    return tj_block_disjoint(sh, n);
}

/* Whether the parts of one frame element are disjoint, with the span they cover. */
static bool parts_disjoint(const tj_layout_t *l, int64_t *elo, int64_t *ehi)
{
    span_t prev, cur, *all = NULL;
    bool up = true, down = true, ok = true;
    int64_t n = l->nparts;

    *elo = INT64_MAX;
    *ehi = INT64_MIN;
    for (int64_t p = 0; p < n; p++) {
        if (!part_span(l, p, &cur))
            return false;
        if (p > 0) {
            up = up && prev.hi <= cur.lo;
            down = down && cur.hi <= prev.lo;
        }
        *elo = TJ_MIN(*elo, cur.lo);
        *ehi = TJ_MAX(*ehi, cur.hi);
        prev = cur;
    }
    if (up || down)
        return true;
    /* In no order: sort a copy of the spans. */
    if ((all = malloc((size_t)n * sizeof(*all))) == NULL)
        return false;
    for (int64_t p = 0; p < n; p++)
        part_span(l, p, &all[p]);
    qsort(all, (size_t)n, sizeof(*all), by_lo);
    for (int64_t p = 1; p < n && ok; p++)
        ok = all[p - 1].hi <= all[p].lo;
    free(all);
    return ok;
}

bool tj_layout_disjoint(tj_layout_t *l, int64_t count)
{
    int state = atomic_load_explicit(&l->disjoint_parts, memory_order_acquire);
    int64_t s[TJ_LAYOUT_MAX_FRAME + 1], c[TJ_LAYOUT_MAX_FRAME + 1], span;
    int n = 0;

    if (state < 0) {
        int64_t lo, hi;
        bool ok = parts_disjoint(l, &lo, &hi);
        if (ok) {
            l->elo = lo;
            l->ehi = hi;
        }
        state = ok ? 1 : 0;
        atomic_store_explicit(&l->disjoint_parts, state, memory_order_release);
    }
    if (state == 0)
        return false;
    /* The frame and the objects, as tj_block_disjoint treats a block's dimensions: sorted by
     * stride, each must step past everything smaller. */
    span = l->ehi - l->elo;
    for (int d = 0; d <= l->nframe; d++) {
        int64_t cnt = d < l->nframe ? l->fcounts[d] : count;
        int64_t str = tj_abs64(d < l->nframe ? l->fstrides[d] : l->extent);
        int j;
        if (cnt <= 1)
            continue;
        for (j = n++; j > 0 && s[j - 1] > str; j--) {
            s[j] = s[j - 1];
            c[j] = c[j - 1];
        }
        s[j] = str;
        c[j] = cnt;
    }
    for (int i = 0; i < n; i++) {
        if (s[i] < span)
            return false;
        if (!tj_mul64(c[i] - 1, s[i], &s[i]) || !tj_add64(s[i], span, &span))
            return false;
    }
    return true;
}

/* Runs in packed order, adjacent ones merged before they are passed on. */
typedef struct {
    int64_t d, len, count, max;
    void (*fn)(int64_t, int64_t, void *);
    void *arg;
} runs_t;

/* Pass on the pending run, if any. */
static bool flush(runs_t *r)
{
    if (r->len > 0) {
        if (r->count >= r->max)
            return false;
        if (r->fn != NULL)
            r->fn(r->d, r->len, r->arg);
        r->count++;
    }
    r->len = 0;
    return true;
}

static bool emit(runs_t *r, int64_t d, int64_t len)
{
    if (r->len > 0 && r->d + r->len == d) {
        r->len += len;
        return true;
    }
    if (!flush(r))
        return false;
    r->d = d;
    r->len = len;
    return true;
}

static bool each_run(const tj_layout_t *l, runs_t *r)
{
    int64_t elems = tj_layout_elements(l), idx[TJ_BLOCK_MAX_DIMS];

    for (int64_t e = 0; e < elems; e++) {
        int64_t fo = tj_layout_frame_offset(l, e);
        for (int64_t p = 0; p < l->nparts; p++) {
            const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
            int64_t len = l->pre[p + 1] - l->pre[p], d = fo + l->disp[p];
            if (tj_layout_is_run(sh)) {
                if (!emit(r, d, len))
                    return false;
                continue;
            }
            for (int64_t k = 0; k < len / sh->size; k++) {
                int64_t off = d + k * sh->extent;
                memset(idx, 0, sizeof(idx));
                for (;;) {
                    int dd;
                    if (!emit(r, off, sh->counts[0]))
                        return false;
                    for (dd = 1; dd < sh->ndims; dd++) {
                        if (++idx[dd] < sh->counts[dd]) {
                            off += sh->strides[dd];
                            break;
                        }
                        off -= (sh->counts[dd] - 1) * sh->strides[dd];
                        idx[dd] = 0;
                    }
                    if (dd >= sh->ndims)
                        break;
                }
            }
        }
    }
    return flush(r);
}

bool tj_layout_each_run(const tj_layout_t *l, int64_t max,
                        void (*fn)(int64_t disp, int64_t len, void *arg), void *arg)
{
    runs_t r = {0, 0, 0, max, fn, arg};
    return each_run(l, &r);
}

int64_t tj_layout_count_runs(const tj_layout_t *l, int64_t max)
{
    runs_t r = {0, 0, 0, max, NULL, NULL};
    return each_run(l, &r) ? r.count : -1;
}

int tj_layout_format(const tj_layout_t *l, char *buf, size_t len)
{
    char frame[256] = "";
    size_t used = 0;

    for (int d = 0; d < l->nframe && used < sizeof(frame); d++) {
        int k = snprintf(frame + used, sizeof(frame) - used, "%s%lld", d ? "x" : "",
                         (long long)l->fcounts[d]);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    return snprintf(buf, len,
                    "parts=%lld shapes=%d%s%s table=%s W=%d size=%lld start=%lld extent=%lld%s",
                    (long long)l->nparts, l->nshapes, l->nframe ? " frame=" : "", frame,
                    l->baked ? "baked" : "device", l->word, (long long)l->size, (long long)l->start,
                    (long long)l->extent, l->probed ? " probed" : "");
}

/* ---- a layout from its parts --------------------------------------------------------------- */

tj_status_t tj_layout_assemble(const tj_layout_parts_t *p, tj_layout_t **out)
{
    tj_layout_t *l = calloc(1, sizeof(*l));
    tj_layout_store_t *st = calloc(1, sizeof(*st));
    tj_status_t status = TJ_ERR_INVALID;

    if (l == NULL || st == NULL) {
        free(l);
        free(st);
        return TJ_ERR_NOMEM;
    }
    atomic_init(&l->refs, 1);
    atomic_init(&l->disjoint_parts, -1);
    atomic_init(&l->device, NULL);
    atomic_init(&st->refs, 1);
    l->store = st;
    if (p->nframe < 0 || p->nframe > TJ_LAYOUT_MAX_FRAME || p->nshapes < 1 ||
        p->nshapes > TJ_LAYOUT_MAX_SHAPES ||
        (p->baked && (p->nparts < 1 || p->nparts > TJ_LAYOUT_BAKED_MAX)) ||
        (!p->baked && p->nparts != 0))
        goto out;
    if (p->nframe > 0 && ((l->fcounts = malloc((size_t)p->nframe * sizeof(int64_t))) == NULL ||
                          (l->fstrides = malloc((size_t)p->nframe * sizeof(int64_t))) == NULL)) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    for (int d = 0; d < p->nframe; d++) {
        if (p->fcounts[d] < 1)
            goto out;
        l->fcounts[d] = p->fcounts[d];
        l->fstrides[d] = p->fstrides[d];
    }
    l->nframe = p->nframe;
    if ((l->shapes = malloc((size_t)p->nshapes * sizeof(tj_block_t))) == NULL) {
        status = TJ_ERR_NOMEM;
        goto out;
    }
    for (int s = 0; s < p->nshapes; s++) {
        if (p->shapes[s].start != 0)
            goto out;
        l->shapes[s] = p->shapes[s];
    }
    l->nshapes = p->nshapes;
    if (p->baked) {
        st->disp = malloc((size_t)p->nparts * sizeof(int64_t));
        st->pre = malloc((size_t)(p->nparts + 1) * sizeof(int64_t));
        st->shape = malloc((size_t)p->nparts);
        if (st->disp == NULL || st->pre == NULL || st->shape == NULL) {
            status = TJ_ERR_NOMEM;
            goto out;
        }
        st->cap = p->nparts;
        st->pre[0] = 0;
        for (int64_t i = 0; i < p->nparts; i++) {
            int s = p->shape[i];
            if (s >= l->nshapes || p->len[i] < 1 ||
                (!tj_layout_is_run(&l->shapes[s]) && p->len[i] % l->shapes[s].size != 0) ||
                !tj_add64(st->pre[i], p->len[i], &st->pre[i + 1]))
                goto out;
            st->disp[i] = p->disp[i];
            st->shape[i] = (uint8_t)s;
        }
        st->n = p->nparts;
    }
    l->nparts = st->n;
    l->disp = st->disp;
    l->pre = st->pre;
    l->shape = st->shape;
    if (p->baked) {
        int64_t elems = tj_layout_elements(l), size;
        if (elems < 1 || !tj_mul64(elems, st->pre[st->n], &size) ||
            tj_layout_finish(&l, p->extent, size) != TJ_OK || !l->baked)
            goto out;
    } else {
        if ((p->word != 1 && p->word != 2 && p->word != 4 && p->word != 8 && p->word != 16) ||
            (p->pre_bytes != 4 && p->pre_bytes != 8) || (p->disp_bytes != 4 && p->disp_bytes != 8))
            goto out;
        l->word = p->word;
        l->pre_bytes = p->pre_bytes;
        l->disp_bytes = p->disp_bytes;
        l->baked = false;
        l->finished = true;
        kernel_hash(l);
    }
    status = TJ_OK;
out:
    if (status != TJ_OK) {
        tj_layout_release(l);
        return status;
    }
    *out = l;
    return TJ_OK;
}

static void add_one_run(int64_t disp, int64_t len, void *arg)
{
    tj_layout_add_run(arg, disp, len);
}

tj_status_t tj_layout_runs(const tj_layout_t *l, tj_layout_t **out)
{
    tj_layout_builder_t b;
    tj_layout_t *r = NULL;
    tj_status_t st;

    tj_layout_builder_init(&b);
    b.fold = false; /* runs only: one kernel per word serves every such layout */
    if (!tj_layout_each_run(l, TJ_LAYOUT_MAX_PARTS, add_one_run, &b)) {
        if (tj_layout_builder_end(&b, &r) == TJ_OK)
            tj_layout_release(r);
        return TJ_ERR_NOT_STRIDED;
    }
    if ((st = tj_layout_builder_end(&b, &r)) != TJ_OK)
        return st;
    r->start += l->start;
    if ((st = tj_layout_finish(&r, l->extent, l->size)) != TJ_OK) {
        tj_layout_release(r);
        return st;
    }
    /* Always a table: its kernel is the same for every layout of runs. */
    r->baked = false;
    kernel_hash(r);
    *out = r;
    return TJ_OK;
}
