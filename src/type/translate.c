/* SPDX-License-Identifier: BSD-3-Clause */
/* Translation of MPI datatypes into IR chains (TEMPI, section 3.1), recursively through
 * MPI_Type_get_envelope / MPI_Type_get_contents. Each level is simplified as soon as it is built,
 * so that members of an indexed or struct type can be compared by shape. */
#include "type/translate.h"

#include <stdlib.h>
#include <string.h>

#include "type/canon.h"
#include "type/contents.h"
#include "type/members.h"
#include "type/named.h"
#include "type/table.h"
#include "util/common.h"

static tj_status_t extent_of(MPI_Datatype type, int64_t *extent)
{
    MPI_Aint lb, ext;
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    *extent = ext;
    return TJ_OK;
}

static tj_status_t translate(MPI_Datatype type, int depth, tj_ir_t *ir, tj_reason_t *why);

/* `count` copies of `child`, `stride` bytes apart, at `offset`. Every chain here is kept
 * simplified as it is built (children's chains are), so the passes run only where the new
 * level meets the old. */
static tj_status_t wrap(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride,
                        tj_reason_t *why)
{
    tj_status_t st = tj_canon_push(ir, offset, count, stride);
    return st == TJ_ERR_NOT_STRIDED ? tj_reason_not_strided(TJ_REASON_CHAIN, why) : st;
}

/* The translation of a child type: its record from its creation when @p records allows it (the
 * constructor wrappers, whose children are the application's own live handles), else afresh.
 * Children that MPI_Type_get_contents returns are new handles that never have records. */
static tj_status_t child_ir(MPI_Datatype type, bool records, int depth, tj_ir_t *ir,
                            tj_reason_t *why)
{
    tj_status_t st;

    if (records && tj_translate_known(type, &st, ir, why))
        return st;
    return translate(type, depth + 1, ir, why);
}

static tj_status_t translate_vector(const tj_type_args_t *a, bool bytes, int depth, bool records,
                                    tj_ir_t *ir, tj_reason_t *why)
{
    int64_t ext, stride;
    tj_status_t st;

    if ((st = extent_of(a->child, &ext)) != TJ_OK ||
        (st = child_ir(a->child, records, depth, ir, why)) != TJ_OK)
        return st;
    if (bytes)
        stride = a->stride;
    else if (!tj_mul64(a->stride, ext, &stride))
        return TJ_ERR_OVERFLOW;
    /* Open MPI (4.1) reads a byte stride of -1 as "the child's extent" (a sentinel in
     * opal_datatype_add), so it packs such a vector as if it were contiguous. typejit leaves
     * these to the system MPI so that both sides of a program agree on the bytes. */
    if (stride == -1 && a->count > 1)
        return tj_reason_not_strided(TJ_REASON_STRIDE_M1, why);
    if ((st = wrap(ir, 0, a->blocklen, ext, why)) != TJ_OK)
        return st;
    return wrap(ir, 0, a->count, stride, why);
}

static tj_status_t translate_subarray(const tj_type_args_t *a, int depth, bool records, tj_ir_t *ir,
                                      tj_reason_t *why)
{
    int ndims = (int)a->count;
    bool fortran = a->order == MPI_ORDER_FORTRAN;
    int64_t stride;
    tj_status_t st;

    if ((st = extent_of(a->child, &stride)) != TJ_OK ||
        (st = child_ir(a->child, records, depth, ir, why)) != TJ_OK)
        return st;
    /* Wrap from the fastest dimension outwards: the last one in C order, the first in
     * Fortran order. */
    for (int k = 0; k < ndims; k++) {
        int d = fortran ? k : ndims - 1 - k;
        int64_t offset;
        if (!tj_mul64(tj_array_at(a->starts, d), stride, &offset))
            return TJ_ERR_OVERFLOW;
        if ((st = wrap(ir, offset, tj_array_at(a->subsizes, d), stride, why)) != TJ_OK)
            return st;
        if (!tj_mul64(stride, tj_array_at(a->sizes, d), &stride))
            return TJ_ERR_OVERFLOW;
    }
    return TJ_OK;
}

/* The shape of `bl` copies of @p child (`ext` bytes apart) at displacement `disp`, simplified,
 * its offsets hoisted into *offset and zeroed: what a member is compared by. */
static tj_status_t member_shape(const tj_ir_t *child, int64_t disp, int64_t bl, int64_t ext,
                                tj_ir_t *shape, int64_t *offset, tj_reason_t *why)
{
    tj_status_t st;

    /* Only the used nodes: a whole chain is 2 KB, most members use one or two nodes. */
    shape->n = child->n;
    memcpy(shape->node, child->node, (size_t)child->n * sizeof(child->node[0]));
    if ((st = wrap(shape, disp, bl, ext, why)) != TJ_OK)
        return st;
    tj_canon_simplify(shape);
    if (!tj_canon_hoist_offsets(shape, offset))
        return TJ_ERR_OVERFLOW;
    shape->node[0].offset = 0;
    return TJ_OK;
}

/* Heap state of one members level: three IR chains are too large for a deep recursion's stack
 * frames, and one allocation per level keeps memory proportional to the depth. */
#define CHILD_CACHE 4

typedef struct {
    MPI_Datatype type;
    int64_t ext;
    tj_status_t st; /* of the translation; TJ_ERR_INVALID until translated */
    tj_reason_t why;
    tj_ir_t ir;
} child_t;

typedef struct {
    child_t child[CHILD_CACHE]; /* the last member types seen */
    int nchild, next;
    tj_ir_t ref; /* generic scan: the first non-dense shape */
    bool has_ref;
    tj_ir_t cur;   /* generic scan: the member being compared */
    tj_ir_t first; /* the first member's full shape, when it is not dense */
} members_work_t;

static child_t *child_get(members_work_t *w, MPI_Datatype type)
{
    child_t *c;

    for (int i = 0; i < w->nchild; i++)
        if (w->child[i].type == type)
            return &w->child[i];
    if (w->nchild < CHILD_CACHE)
        c = &w->child[w->nchild++];
    else {
        c = &w->child[w->next];
        w->next = (w->next + 1) % CHILD_CACHE;
    }
    c->type = type;
    c->st = extent_of(type, &c->ext);
    if (c->st == TJ_OK)
        c->st = TJ_ERR_INVALID; /* extent known, not translated yet */
    else
        c->type = MPI_DATATYPE_NULL; /* not cached: ask again next time */
    return c;
}

static tj_status_t child_translate(child_t *c, bool records, int depth, tj_reason_t *why)
{
    if (c->st == TJ_ERR_INVALID)
        c->st = child_ir(c->type, records, depth, &c->ir, &c->why);
    /* A cached failure is returned again later: its reason must come with it. */
    if (c->st == TJ_ERR_NOT_STRIDED)
        *why = c->why;
    return c->st;
}

/* Any members: each member's shape is built from its (cached) child translation, and compared
 * in full with the first non-dense shape. */
static tj_status_t scan_generic(const tj_members_t *ms, bool records, int depth, members_work_t *w,
                                tj_member_scan_t *s, tj_reason_t *why)
{
    for (int64_t i = 0; i < ms->n; i++) {
        child_t *c = child_get(w, ms->types[ms->ntypes > 1 ? i : 0]);
        int64_t disp, bl = tj_members_blocklen(ms, i);
        tj_member_t m;
        tj_status_t st;

        if (c->type == MPI_DATATYPE_NULL)
            return TJ_ERR_MPI;
        if ((st = tj_members_displacement(ms, i, c->ext, &disp)) != TJ_OK)
            return st;
        if (bl == 0)
            continue;
        if ((st = child_translate(c, records, depth, why)) != TJ_OK)
            return st;
        if (tj_ir_size(&c->ir) == 0)
            continue; /* packs no bytes: not part of the typemap */
        if ((st = member_shape(&c->ir, disp, bl, c->ext, &w->cur, &m.offset, why)) != TJ_OK)
            return st;
        m.dense = w->cur.n == 1;
        m.size = m.dense ? w->cur.node[0].extent : 0;
        m.key = 0;
        if (!m.dense) {
            if (!w->has_ref) {
                w->ref = w->cur;
                w->has_ref = true;
            }
            m.key = tj_canon_equal(&w->cur, &w->ref) ? 1 : 2;
        }
        if (s->k == 0 && !s->has_pending && !m.dense)
            w->first = w->cur;
        if ((st = tj_members_add(s, &m, why)) != TJ_OK)
            return st;
    }
    return tj_members_end(s, why);
}

/* Sum of the absolute offsets of a chain; false when it does not fit. */
static bool offsets_bound(const tj_ir_t *ir, int64_t *bound)
{
    int64_t sum = 0;
    for (int i = 0; i < ir->n; i++) {
        int64_t o = ir->node[i].offset;
        if (o == INT64_MIN || !tj_add64(sum, o < 0 ? -o : o, &sum))
            return false;
    }
    *bound = sum;
    return true;
}

/* Members that all have one type, the case of millions of members: the child is translated
 * once, and a member's shape depends only on its blocklen (the canonical passes look at counts,
 * strides and extents; offsets matter only through overflow, which is excluded up front), so
 * the scan compares blocklens and displacements without building any IR. Returns
 * TJ_ERR_INVALID when a value is outside what this shortcut covers; the caller then runs the
 * generic scan from the start. */
static tj_status_t scan_one_type(const tj_members_t *ms, bool records, int depth, members_work_t *w,
                                 tj_member_scan_t *s, tj_reason_t *why)
{
    child_t *c = child_get(w, ms->types[0]);
    int64_t ext, csize = 0, csum = 0, cbound = 0, limit = 0, dense_ext = -1;
    bool translated = false;
    tj_status_t st;

    if (c->type == MPI_DATATYPE_NULL)
        return TJ_ERR_MPI;
    ext = c->ext;
    for (int64_t i = 0; i < ms->n; i++) {
        int64_t disp, bl = tj_members_blocklen(ms, i), d;
        tj_member_t m;

        if ((st = tj_members_displacement(ms, i, ext, &disp)) != TJ_OK)
            return st;
        if (bl == 0)
            continue;
        if (!translated) {
            if ((st = child_translate(c, records, depth, why)) != TJ_OK)
                return st;
            csize = tj_ir_size(&c->ir);
            if (csize == 0)
                return TJ_ERR_INVALID; /* no member packs a byte: rare, left to the generic scan */
            if (csize < 0 || !offsets_bound(&c->ir, &cbound))
                return TJ_ERR_INVALID;
            csum = 0;
            for (int j = 0; j < c->ir.n; j++)
                csum += c->ir.node[j].offset; /* bounded by cbound */
            limit = INT64_MAX - cbound;
            dense_ext = c->ir.n == 1 ? c->ir.node[0].extent : -1;
            translated = true;
        }
        /* Bounded displacements keep every partial sum of offsets inside 64 bits, so that the
         * canonical passes take the same decisions for every member of a blocklen. */
        if (disp > limit || disp < -limit || !tj_mul64(bl, csize, &m.size))
            return TJ_ERR_INVALID;
        m.offset = disp + csum;
        m.dense = dense_ext >= 0 && (bl == 1 || ext == dense_ext);
        m.key = bl;
        if ((st = tj_members_add(s, &m, why)) != TJ_OK)
            return st;
        /* The steady state of a strided type: once the member just added is known to be equal
         * to the first and one step after the previous, members of its blocklen one step
         * further each can only pass, unless they merge with it. */
        if (s->k >= 2 && s->pending.offset == m.offset && s->pending.size == m.size &&
            tj_member_same_shape(&m, &s->first) && !__builtin_sub_overflow(m.offset, s->prev, &d) &&
            d == s->step && (!m.dense || s->step != m.size))
            i = tj_members_steady_run(ms, i + 1, bl, ext, csum, limit, s) - 1;
    }
    if ((st = tj_members_end(s, why)) != TJ_OK)
        return st;
    if (s->k > 0 && !s->first.dense) {
        int64_t off;
        /* Any displacement gives the same shape; 0 keeps the offsets small. */
        if ((st = member_shape(&c->ir, 0, s->first.key, ext, &w->first, &off, why)) != TJ_OK)
            return st;
    }
    return TJ_OK;
}

/* The members of an indexed or struct type (type/members.h): their chain when they are one shape
 * at evenly spaced displacements. */
static tj_status_t translate_members(const tj_members_t *ms, bool records, int depth, tj_ir_t *ir,
                                     tj_reason_t *why)
{
    members_work_t *w;
    tj_member_scan_t s;
    tj_status_t st;
    tj_reason_t unequal;
    bool one_type = true;

    if (ms->n <= 0) {
        tj_ir_init_dense(ir, 0, 0); /* an empty typemap; a struct of none has no types[0] */
        return TJ_OK;
    }
    w = malloc(sizeof(*w));
    if (w == NULL)
        return TJ_ERR_NOMEM;
    w->nchild = w->next = 0;
    w->has_ref = false;
    for (int64_t i = 1; i < ms->ntypes && one_type; i++)
        one_type = ms->types[i] == ms->types[0];
    /* By the combiner, not by the handles: MPI_Type_get_contents returns a new handle for each
     * derived member of a struct, so handle equality differs between the two paths. */
    unequal = ms->ntypes > 1 ? TJ_REASON_MIXED_MEMBERS : TJ_REASON_IRREGULAR_BLOCKS;
    memset(&s, 0, sizeof(s));
    s.unequal = unequal;
    st = one_type ? scan_one_type(ms, records, depth, w, &s, why) : TJ_ERR_INVALID;
    if (st == TJ_ERR_INVALID) {
        memset(&s, 0, sizeof(s));
        s.unequal = unequal;
        st = scan_generic(ms, records, depth, w, &s, why);
    }
    if (st != TJ_OK)
        goto out_free;
    if (s.k == 0) {
        tj_ir_init_dense(ir, 0, 0); /* an empty typemap */
        goto out_free;
    }
    if (s.first.dense)
        tj_ir_init_dense(ir, 0, s.first.size);
    else
        *ir = w->first;
    if (s.k > 1 && (st = wrap(ir, 0, s.k, s.step, why)) != TJ_OK)
        goto out_free;
    ir->node[0].offset += s.first.offset;
    tj_canon_simplify(ir); /* the members' shape was built by other means than wrap */
out_free:
    free(w);
    return st;
}

static tj_status_t translate_args(const tj_type_args_t *a, int depth, bool records, tj_ir_t *ir,
                                  tj_reason_t *why)
{
    tj_status_t st;

    switch (a->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        /* A resized type has its child's typemap; only its extent differs, and parents read
         * extents from the handle. */
        return child_ir(a->child, records, depth, ir, why);
    case MPI_COMBINER_CONTIGUOUS: {
        int64_t ext;
        if ((st = extent_of(a->child, &ext)) != TJ_OK ||
            (st = child_ir(a->child, records, depth, ir, why)) != TJ_OK)
            return st;
        return wrap(ir, 0, a->count, ext, why);
    }
    case MPI_COMBINER_VECTOR:
        return translate_vector(a, false, depth, records, ir, why);
    case MPI_COMBINER_HVECTOR:
        return translate_vector(a, true, depth, records, ir, why);
    case MPI_COMBINER_SUBARRAY:
        return translate_subarray(a, depth, records, ir, why);
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
        /* One block length for every member (the _BLOCK forms), or one each. */
        bool one =
            a->combiner == MPI_COMBINER_INDEXED_BLOCK || a->combiner == MPI_COMBINER_HINDEXED_BLOCK;
        bool bytes =
            a->combiner == MPI_COMBINER_HINDEXED_BLOCK || a->combiner == MPI_COMBINER_HINDEXED;
        tj_members_t ms = {.blocklens = one ? TJ_ARRAY_OF_INT64(&a->blocklen) : a->blocklens,
                           .bl_stride = one ? 0 : 1,
                           .byte_displs = bytes ? a->bdispls : (tj_array_t){0},
                           .displs = a->displs,
                           .types = &a->child,
                           .ntypes = 1,
                           .n = a->count};
        return translate_members(&ms, records, depth, ir, why);
    }
    case MPI_COMBINER_STRUCT: {
        tj_members_t ms = {.blocklens = a->blocklens,
                           .bl_stride = 1,
                           .byte_displs = a->bdispls,
                           .types = a->types,
                           .ntypes = a->count,
                           .n = a->count};
        return translate_members(&ms, records, depth, ir, why);
    }
    case MPI_COMBINER_DARRAY:
        return tj_reason_not_strided(TJ_REASON_DARRAY, why);
    default:
        /* Anything newer: the system MPI handles it. */
        return tj_reason_not_strided(TJ_REASON_COMBINER, why);
    }
}

static tj_status_t translate(MPI_Datatype type, int depth, tj_ir_t *ir, tj_reason_t *why)
{
    tj_contents_t *c;
    tj_status_t st;

    if (depth > TJ_IR_MAX_NODES)
        return tj_reason_not_strided(TJ_REASON_DEPTH, why);
    if (tj_named_cached(type, &st, ir, why))
        return st;
    if ((st = tj_contents_new(type, &c)) != TJ_OK)
        return st;
    if (tj_combiner_named(c->env.combiner))
        st = tj_named_translate(type, ir, why);
    else
        st = translate_args(&c->args, depth, false, ir, why);
    tj_contents_delete(c);
    return st;
}

tj_status_t tj_translate_ir(MPI_Datatype type, tj_ir_t *ir, tj_reason_t *why)
{
    return translate(type, 0, ir, why);
}

tj_status_t tj_translate_args(const tj_type_args_t *args, tj_ir_t *ir, tj_reason_t *why)
{
    return translate_args(args, 0, true, ir, why);
}

bool tj_translate_known(MPI_Datatype type, tj_status_t *st, tj_ir_t *ir, tj_reason_t *why)
{
    tj_type_known_t k;
    tj_envelope_t e;

    if (!tj_table_get_known(type, &k, ir))
        return false;
    /* A handle freed behind typejit's back (a PMPI_Type_free it did not see) may have been
     * reused by MPI for a type typejit did not see created: its envelope tells them apart. An
     * MPI without the large-count calls reports no large counts. */
    if (!tj_envelope_get(type, &e) || e.combiner != k.env.combiner || e.ni != k.env.ni ||
        e.na != k.env.na || e.nd != k.env.nd || (tj_contents_large() && e.nc != k.env.nc))
        return false;
    *st = k.st;
    if (k.st == TJ_ERR_NOT_STRIDED)
        *why = (tj_reason_t)k.reason;
    return true;
}

tj_status_t tj_translate_finish(const tj_ir_t *raw, int64_t extent, int64_t size, tj_block_t *block,
                                tj_ir_t *canonical, tj_reason_t *why)
{
    tj_ir_t ir;
    int64_t offset;
    tj_block_t b;
    tj_status_t st;

    ir.n = raw->n;
    memcpy(ir.node, raw->node, (size_t)raw->n * sizeof(raw->node[0]));
    if (!tj_canon_hoist_offsets(&ir, &offset))
        return TJ_ERR_OVERFLOW;
    if (size <= 0 || tj_ir_size(&ir) <= 0)
        return tj_reason_not_strided(TJ_REASON_EMPTY, why);
    if ((st = tj_block_from_ir(&ir, extent, &b)) != TJ_OK) {
        /* A block has at most TJ_BLOCK_MAX_DIMS dimensions: a longer canonical chain is a
         * strided layout too long for the kernels, not an irregular one. */
        if (st == TJ_ERR_NOT_STRIDED && ir.n > TJ_BLOCK_MAX_DIMS)
            return tj_reason_not_strided(TJ_REASON_DIMS, why);
        return st == TJ_ERR_INVALID || st == TJ_ERR_NOT_STRIDED
                   ? tj_reason_not_strided(TJ_REASON_BLOCK, why)
                   : st;
    }
    /* The system MPI is the authority on the size; a disagreement means a translation bug, and
     * the safe answer is to leave the type to the system MPI. */
    if (b.size != size)
        return tj_reason_not_strided(TJ_REASON_SIZE, why);
    *block = b;
    if (canonical != NULL)
        *canonical = ir;
    return TJ_OK;
}

tj_status_t tj_translate_block_why(MPI_Datatype type, tj_block_t *block, tj_ir_t *canonical,
                                   tj_reason_t *why)
{
    MPI_Aint lb, extent;
    MPI_Count size;
    tj_ir_t ir;
    tj_status_t st;

    if ((st = translate(type, 0, &ir, why)) != TJ_OK)
        return st;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    return tj_translate_finish(&ir, extent, size, block, canonical, why);
}
