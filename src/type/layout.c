/* SPDX-License-Identifier: BSD-3-Clause */
/* Layouts (see layout.h): the object (references, the parts shared between layouts, the device
 * slot), its frame, finishing (word, element sizes, the hash kernels are keyed by), what it may
 * equal (a chain, a block), whether its objects overlap, and a layout assembled from its parts
 * as a kernel's manifest names them. Building one part by part is layout_builder.c's; its
 * contiguous runs are layout_runs.c's. */
#include "type/layout.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "type/canon.h"
#include "type/layout_internal.h"
#include "type/state.h"
#include "util/common.h"

void tj_layout_set_hooks(const tj_layout_hooks_t *hooks)
{
    atomic_store(&tj_type_state.layout.release_hook, hooks->release);
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

void tj_layout_store_release(tj_layout_store_t *s)
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
    tj_layout_store_release(l->store);
    free(l);
}

void tj_layout_release(tj_layout_t *l)
{
    void (*hook)(tj_layout_t * l);

    if (l == NULL || atomic_fetch_sub(&l->refs, 1) != 1)
        return;
    hook = atomic_load(&tj_type_state.layout.release_hook);
    if (atomic_load(&l->device) != NULL && hook != NULL)
        hook(l);
    layout_free(l);
}

/* A copy of @p n values of @p size bytes at @p v; NULL when out of memory or @p n is 0. */
static void *copy_of(const void *v, int64_t n, size_t size)
{
    void *c = n > 0 ? malloc((size_t)n * size) : NULL;

    if (c != NULL)
        memcpy(c, v, (size_t)n * size);
    return c;
}

/* A copy of @p l's header sharing its store; NULL when out of memory. */
static tj_layout_t *layout_clone(const tj_layout_t *l)
{
    tj_layout_t *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    /* The fields from start to hash are values, copied at once (layout.h keeps them together);
     * the frame's arrays and the shapes are the clone's own, the atomics after them start anew. */
    memcpy(&c->start, &l->start,
           offsetof(tj_layout_t, disjoint_parts) - offsetof(tj_layout_t, start));
    atomic_init(&c->refs, 1);
    atomic_init(&c->disjoint_parts, -1);
    atomic_init(&c->device, NULL);
    c->fcounts = copy_of(l->fcounts, l->nframe, sizeof(int64_t));
    c->fstrides = copy_of(l->fstrides, l->nframe, sizeof(int64_t));
    c->shapes = copy_of(l->shapes, l->nshapes, sizeof(tj_block_t));
    if ((l->nframe > 0 && (c->fcounts == NULL || c->fstrides == NULL)) ||
        (l->nshapes > 0 && c->shapes == NULL)) {
        free(c->fcounts);
        free(c->fstrides);
        free(c->shapes);
        free(c);
        return NULL;
    }
    if (c->store != NULL)
        atomic_fetch_add(&c->store->refs, 1);
    return c;
}

/* @p *l, made the caller's own: a clone when it is shared. */
tj_status_t tj_layout_own(tj_layout_t **l)
{
    tj_layout_t *c;

    if (atomic_load(&(*l)->refs) == 1)
        return TJ_OK;
    if ((c = layout_clone(*l)) == NULL)
        return TJ_ERR_NOMEM;
    tj_layout_release(*l);
    *l = c;
    return TJ_OK;
}

/* ---- the frame ----------------------------------------------------------------------------- */

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

tj_status_t tj_layout_stream(tj_layout_t **l, int64_t offset, int64_t count, int64_t stride)
{
    tj_layout_t *m;
    tj_status_t st;
    int n;

    if ((st = tj_layout_own(l)) != TJ_OK)
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

void tj_layout_unbake(tj_layout_t *l)
{
    l->baked = false;
    tj_layout_words_finish(l);
    kernel_hash(l);
}

tj_status_t tj_layout_finish(tj_layout_t **lp, int64_t extent, int64_t size)
{
    tj_layout_t *l;
    int64_t elems, total, fbytes;
    uint64_t bits = 16;
    bool small_disp = true;
    tj_status_t st;

    if ((st = tj_layout_own(lp)) != TJ_OK)
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
    tj_layout_words_finish(l);
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
    if ((c = layout_clone(l)) == NULL)
        return TJ_ERR_NOMEM;
    tj_layout_store_release(c->store);
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

/* The bytes part @p p touches, and whether its repetitions are disjoint. */
static bool part_span(const tj_layout_t *l, int64_t p, tj_range_t *sp)
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
    tj_range_t prev, cur, *all = NULL;
    bool up = true, down = true, ok;
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
    ok = tj_block_ranges_disjoint(all, n);
    free(all);
    return ok;
}

bool tj_layout_disjoint(tj_layout_t *l, int64_t count)
{
    int state = atomic_load_explicit(&l->disjoint_parts, memory_order_acquire);
    int64_t s[TJ_LAYOUT_MAX_FRAME + 1], c[TJ_LAYOUT_MAX_FRAME + 1];

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
    /* The frame and the objects over the parts' span, as a block's dimensions are. */
    for (int d = 0; d <= l->nframe; d++) {
        c[d] = d < l->nframe ? l->fcounts[d] : count;
        s[d] = d < l->nframe ? l->fstrides[d] : l->extent;
    }
    return tj_block_dims_disjoint(l->nframe + 1, c, s, l->ehi - l->elo);
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
