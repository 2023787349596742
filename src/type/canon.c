/* SPDX-License-Identifier: BSD-3-Clause */
/* Canonical passes: dense folding, stream elision, stream flattening (TEMPI, section 3.2), run to
 * a fixed point. The paper's fourth pass, sorting streams by stride, is deliberately absent: it
 * reorders dimensions and so changes the packed byte order of transposed nestings. */
#include "type/canon.h"

#include <string.h>

#include "util/common.h"

static void remove_node(tj_ir_t *ir, int i)
{
    memmove(&ir->node[i], &ir->node[i + 1], (size_t)(ir->n - i - 1) * sizeof(ir->node[0]));
    ir->n--;
}

/* The passes' merges of a stream @p p into its child @p c: true where one applies, with @p c
 * then standing for both but for the offset, which merge_into adds. */
typedef bool (*merge_fn)(const tj_ir_node_t *p, tj_ir_node_t *c);

static bool dense_fold(const tj_ir_node_t *p, tj_ir_node_t *c)
{
    int64_t extent;

    if (p->kind != TJ_IR_STREAM || c->kind != TJ_IR_DENSE || p->stride != c->extent ||
        !tj_mul64(p->count, c->extent, &extent))
        return false;
    c->extent = extent;
    return true;
}

static bool stream_elide(const tj_ir_node_t *p, tj_ir_node_t *c)
{
    (void)c;
    return p->kind == TJ_IR_STREAM && p->count == 1;
}

static bool stream_flatten(const tj_ir_node_t *p, tj_ir_node_t *c)
{
    int64_t span, count;

    if (p->kind != TJ_IR_STREAM || c->kind != TJ_IR_STREAM ||
        !tj_mul64(c->count, c->stride, &span) || span != p->stride ||
        !tj_mul64(p->count, c->count, &count))
        return false;
    c->count = count;
    return true;
}

/* Whether @p p merged into @p c by @p merge; an overflow of the offsets' sum leaves both as they
 * are. */
static bool merge_into(const tj_ir_node_t *p, tj_ir_node_t *c, merge_fn merge)
{
    int64_t offset;

    if (!tj_add64(p->offset, c->offset, &offset) || !merge(p, c))
        return false;
    c->offset = offset;
    return true;
}

/* One pass. Each pass walks the chain from the leaf upwards, so that a change at one level can
 * enable the same change one level up within the same sweep, as in the paper's bottom-up
 * recursion. */
static bool sweep(tj_ir_t *ir, merge_fn merge)
{
    bool changed = false;

    for (int i = ir->n - 2; i >= 0; i--)
        if (merge_into(&ir->node[i], &ir->node[i + 1], merge)) {
            remove_node(ir, i);
            changed = true;
        }
    return changed;
}

bool tj_canon_dense_fold(tj_ir_t *ir)
{
    return sweep(ir, dense_fold);
}

bool tj_canon_stream_elide(tj_ir_t *ir)
{
    return sweep(ir, stream_elide);
}

bool tj_canon_stream_flatten(tj_ir_t *ir)
{
    return sweep(ir, stream_flatten);
}

bool tj_canon_simplify(tj_ir_t *ir)
{
    bool any = false, changed = true;
    while (changed) {
        changed = tj_canon_dense_fold(ir);
        changed |= tj_canon_stream_elide(ir);
        changed |= tj_canon_stream_flatten(ir);
        any |= changed;
    }
    return any;
}

tj_status_t tj_canon_push(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride)
{
    const tj_ir_node_t p = {
        .kind = TJ_IR_STREAM, .offset = offset, .count = count, .stride = stride};
    tj_ir_node_t *c = &ir->node[0];

    /* The three passes, applied where the new stream meets the old outermost node: in a chain
     * that is a fixed point of them, no other pair can change, nor can the merged node and its
     * child (a merge keeps the stride that failed the test against that child). A count of one
     * merges by any of the three alike; an overflow leaves the stream unmerged, as the passes
     * do. */
    if (merge_into(&p, c, stream_elide) || merge_into(&p, c, dense_fold) ||
        merge_into(&p, c, stream_flatten))
        return TJ_OK;
    return tj_ir_push_stream(ir, offset, count, stride);
}

bool tj_canon_hoist_offsets(tj_ir_t *ir, int64_t *offset)
{
    int64_t sum = 0;
    for (int i = 0; i < ir->n; i++) {
        if (!tj_add64(sum, ir->node[i].offset, &sum))
            return false;
        ir->node[i].offset = 0;
    }
    if (ir->n > 0)
        ir->node[0].offset = sum;
    *offset = sum;
    return true;
}

bool tj_canon_equal(const tj_ir_t *a, const tj_ir_t *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++) {
        const tj_ir_node_t *x = &a->node[i], *y = &b->node[i];
        if (x->kind != y->kind || x->offset != y->offset)
            return false;
        if (x->kind == TJ_IR_STREAM && (x->count != y->count || x->stride != y->stride))
            return false;
        if (x->kind == TJ_IR_DENSE && x->extent != y->extent)
            return false;
    }
    return true;
}
