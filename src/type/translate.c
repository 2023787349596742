/* Translation of MPI datatypes into IR chains (TEMPI, section 3.1), recursively through
 * MPI_Type_get_envelope / MPI_Type_get_contents. Each level is simplified as soon as it is built,
 * so that members of an indexed or struct type can be compared by shape. */
#include "type/translate.h"

#include <stdlib.h>
#include <string.h>

#include "type/canon.h"
#include "util/common.h"

/* Arguments of one constructor level. Small argument lists (the common case) live on the stack;
 * larger ones are allocated. */
#define SMALL_ARGS 32

typedef struct {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    int ints_small[SMALL_ARGS];
    MPI_Aint addrs_small[SMALL_ARGS];
    MPI_Datatype types_small[SMALL_ARGS];
} contents_t;

static bool is_named(int combiner)
{
    /* Open MPI declares the combiners as enum values, not macros: no #ifdef can test them. */
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

static void contents_free(contents_t *c)
{
    /* get_contents returns new handles for derived children; named ones must not be freed. */
    for (int i = 0; i < c->nd; i++) {
        int ni, na, nd, combiner;
        if (PMPI_Type_get_envelope(c->types[i], &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
            !is_named(combiner))
            PMPI_Type_free(&c->types[i]);
    }
    if (c->ints != c->ints_small)
        free(c->ints);
    if (c->addrs != c->addrs_small)
        free(c->addrs);
    if (c->types != c->types_small)
        free(c->types);
}

static tj_status_t contents_get(MPI_Datatype type, contents_t *c)
{
    if (PMPI_Type_get_envelope(type, &c->ni, &c->na, &c->nd, &c->combiner) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    c->ints = c->ni <= SMALL_ARGS ? c->ints_small : malloc((size_t)c->ni * sizeof(int));
    c->addrs = c->na <= SMALL_ARGS ? c->addrs_small : malloc((size_t)c->na * sizeof(MPI_Aint));
    c->types = c->nd <= SMALL_ARGS ? c->types_small : malloc((size_t)c->nd * sizeof(MPI_Datatype));
    if (c->ints == NULL || c->addrs == NULL || c->types == NULL) {
        int nd = c->nd;
        c->nd = 0; /* nothing to free yet */
        contents_free(c);
        return nd >= 0 ? TJ_ERR_NOMEM : TJ_ERR_MPI;
    }
    if (is_named(c->combiner)) {
        c->nd = 0;
        return TJ_OK;
    }
    if (PMPI_Type_get_contents(type, c->ni, c->na, c->nd, c->ints, c->addrs, c->types) !=
        MPI_SUCCESS) {
        c->nd = 0;
        contents_free(c);
        return TJ_ERR_MPI;
    }
    return TJ_OK;
}

static tj_status_t extent_of(MPI_Datatype type, int64_t *extent)
{
    MPI_Aint lb, ext;
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    *extent = ext;
    return TJ_OK;
}

static tj_status_t translate(MPI_Datatype type, int depth, tj_ir_t *ir);

/* A named type is one dense run when its size equals its true extent. MPI_SHORT_INT (a short, a
 * hole, an int: 6 bytes in 8) is not; MPI_DOUBLE_INT is 12 dense bytes in a 16-byte extent, so
 * it is a run whose objects step by 16. */
static tj_status_t translate_named(MPI_Datatype type, tj_ir_t *ir)
{
    MPI_Aint lb, extent;
    int size;

    if (PMPI_Type_get_true_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if (size != extent)
        return TJ_ERR_NOT_STRIDED;
    tj_ir_init_dense(ir, lb, size);
    return TJ_OK;
}

/* `count` copies of `child`, `stride` bytes apart, at `offset`. */
static tj_status_t wrap(tj_ir_t *ir, int64_t offset, int64_t count, int64_t stride)
{
    return tj_ir_push_stream(ir, offset, count, stride);
}

static tj_status_t translate_vector(const contents_t *c, bool bytes, int depth, tj_ir_t *ir)
{
    int64_t ext, stride;
    tj_status_t st;

    if ((st = extent_of(c->types[0], &ext)) != TJ_OK ||
        (st = translate(c->types[0], depth + 1, ir)) != TJ_OK)
        return st;
    if (bytes)
        stride = c->addrs[0];
    else if (!tj_mul64(c->ints[2], ext, &stride))
        return TJ_ERR_OVERFLOW;
    /* Open MPI (4.1) reads a byte stride of -1 as "the child's extent" (a sentinel in
     * opal_datatype_add), so it packs such a vector as if it were contiguous. typejit leaves
     * these to the system MPI so that both sides of a program agree on the bytes. */
    if (stride == -1 && c->ints[0] > 1)
        return TJ_ERR_NOT_STRIDED;
    if ((st = wrap(ir, 0, c->ints[1], ext)) != TJ_OK)
        return st;
    return wrap(ir, 0, c->ints[0], stride);
}

static tj_status_t translate_subarray(const contents_t *c, int depth, tj_ir_t *ir)
{
    int ndims = c->ints[0];
    const int *sizes = &c->ints[1], *subsizes = &c->ints[1 + ndims],
              *starts = &c->ints[1 + 2 * ndims];
    bool fortran = c->ints[1 + 3 * ndims] == MPI_ORDER_FORTRAN;
    int64_t stride;
    tj_status_t st;

    if ((st = extent_of(c->types[0], &stride)) != TJ_OK ||
        (st = translate(c->types[0], depth + 1, ir)) != TJ_OK)
        return st;
    /* Wrap from the fastest dimension outwards: the last one in C order, the first in
     * Fortran order. */
    for (int k = 0; k < ndims; k++) {
        int d = fortran ? k : ndims - 1 - k;
        int64_t offset;
        if (!tj_mul64(starts[d], stride, &offset))
            return TJ_ERR_OVERFLOW;
        if ((st = wrap(ir, offset, subsizes[d], stride)) != TJ_OK)
            return st;
        if (!tj_mul64(stride, sizes[d], &stride))
            return TJ_ERR_OVERFLOW;
    }
    return TJ_OK;
}

/* Members of indexed and struct types: each is `blocklen` consecutive copies of its type at a
 * byte displacement. The typemap is strided when, after dropping empty members and merging
 * members that continue one another, all members have the same shape at evenly spaced
 * displacements. */
typedef struct {
    int64_t offset; /* hoisted offset of the member */
    tj_ir_t shape;  /* the member with its offset zeroed */
} member_t;

static tj_status_t translate_members(int n, const int *blocklens, int bl_stride,
                                     const MPI_Aint *byte_displs, const int *displs,
                                     const MPI_Datatype *types, int ntypes, int depth, tj_ir_t *ir)
{
    member_t *m = NULL, cur;
    int k = 0;
    tj_status_t st = TJ_OK;

    m = malloc((size_t)(n > 0 ? n : 1) * sizeof(*m));
    if (m == NULL)
        return TJ_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = types[ntypes > 1 ? i : 0];
        int64_t ext, disp, bl = blocklens[i * bl_stride], off;

        if ((st = extent_of(t, &ext)) != TJ_OK)
            goto out_free;
        if (byte_displs != NULL)
            disp = byte_displs[i];
        else if (!tj_mul64(displs[i], ext, &disp)) {
            st = TJ_ERR_OVERFLOW;
            goto out_free;
        }
        if (bl == 0)
            continue;
        if ((st = translate(t, depth + 1, &cur.shape)) != TJ_OK ||
            (st = wrap(&cur.shape, disp, bl, ext)) != TJ_OK)
            goto out_free;
        if (tj_ir_size(&cur.shape) == 0)
            continue; /* packs no bytes: not part of the typemap */
        tj_canon_simplify(&cur.shape);
        if (!tj_canon_hoist_offsets(&cur.shape, &off)) {
            st = TJ_ERR_OVERFLOW;
            goto out_free;
        }
        cur.shape.node[0].offset = 0;
        cur.offset = off;
        /* A dense member that starts where the previous dense member ends extends it. */
        if (k > 0 && cur.shape.n == 1 && m[k - 1].shape.n == 1 &&
            m[k - 1].offset + m[k - 1].shape.node[0].extent == cur.offset) {
            m[k - 1].shape.node[0].extent += cur.shape.node[0].extent;
            continue;
        }
        m[k++] = cur;
    }
    if (k == 0) {
        tj_ir_init_dense(ir, 0, 0); /* an empty typemap */
        goto out_free;
    }
    *ir = m[0].shape;
    if (k > 1) {
        int64_t step = m[1].offset - m[0].offset;
        for (int i = 1; i < k; i++) {
            if (!tj_canon_equal(&m[i].shape, &m[0].shape) ||
                m[i].offset - m[i - 1].offset != step) {
                st = TJ_ERR_NOT_STRIDED;
                goto out_free;
            }
        }
        if ((st = wrap(ir, 0, k, step)) != TJ_OK)
            goto out_free;
    }
    ir->node[0].offset += m[0].offset;
out_free:
    free(m);
    return st;
}

static tj_status_t translate_derived(const contents_t *c, int depth, tj_ir_t *ir)
{
    tj_status_t st;

    switch (c->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        /* A resized type has its child's typemap; only its extent differs, and parents read
         * extents from the handle. */
        return translate(c->types[0], depth + 1, ir);
    case MPI_COMBINER_CONTIGUOUS: {
        int64_t ext;
        if ((st = extent_of(c->types[0], &ext)) != TJ_OK ||
            (st = translate(c->types[0], depth + 1, ir)) != TJ_OK)
            return st;
        return wrap(ir, 0, c->ints[0], ext);
    }
    case MPI_COMBINER_VECTOR:
        return translate_vector(c, false, depth, ir);
    case MPI_COMBINER_HVECTOR:
        return translate_vector(c, true, depth, ir);
    case MPI_COMBINER_SUBARRAY:
        return translate_subarray(c, depth, ir);
    case MPI_COMBINER_INDEXED_BLOCK: {
        int n = c->ints[0];
        return translate_members(n, &c->ints[1], 0, NULL, &c->ints[2], c->types, 1, depth, ir);
    }
    case MPI_COMBINER_HINDEXED_BLOCK: {
        int n = c->ints[0];
        return translate_members(n, &c->ints[1], 0, c->addrs, NULL, c->types, 1, depth, ir);
    }
    case MPI_COMBINER_INDEXED: {
        int n = c->ints[0];
        return translate_members(n, &c->ints[1], 1, NULL, &c->ints[1 + n], c->types, 1, depth, ir);
    }
    case MPI_COMBINER_HINDEXED:
        return translate_members(c->ints[0], &c->ints[1], 1, c->addrs, NULL, c->types, 1, depth,
                                 ir);
    case MPI_COMBINER_STRUCT:
        return translate_members(c->ints[0], &c->ints[1], 1, c->addrs, NULL, c->types, c->ints[0],
                                 depth, ir);
    default:
        /* darray and anything newer: the system MPI handles them. */
        return TJ_ERR_NOT_STRIDED;
    }
}

static tj_status_t translate(MPI_Datatype type, int depth, tj_ir_t *ir)
{
    contents_t c;
    tj_status_t st;

    if (depth > TJ_IR_MAX_NODES)
        return TJ_ERR_NOT_STRIDED;
    if ((st = contents_get(type, &c)) != TJ_OK)
        return st;
    if (is_named(c.combiner))
        st = translate_named(type, ir);
    else
        st = translate_derived(&c, depth, ir);
    contents_free(&c);
    if (st == TJ_OK)
        tj_canon_simplify(ir);
    return st;
}

tj_status_t tj_translate_ir(MPI_Datatype type, tj_ir_t *ir)
{
    return translate(type, 0, ir);
}

tj_status_t tj_translate_block(MPI_Datatype type, tj_block_t *block, tj_ir_t *canonical)
{
    MPI_Aint lb, extent;
    MPI_Count size;
    tj_ir_t ir;
    int64_t offset;
    tj_block_t b;
    tj_status_t st;

    if ((st = translate(type, 0, &ir)) != TJ_OK)
        return st;
    tj_canon_simplify(&ir);
    if (!tj_canon_hoist_offsets(&ir, &offset))
        return TJ_ERR_OVERFLOW;
    if (PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if (size <= 0 || tj_ir_size(&ir) <= 0)
        return TJ_ERR_NOT_STRIDED;
    if ((st = tj_block_from_ir(&ir, extent, &b)) != TJ_OK)
        return st == TJ_ERR_INVALID ? TJ_ERR_NOT_STRIDED : st;
    /* The system MPI is the authority on the size; a disagreement means a translation bug, and
     * the safe answer is to leave the type to the system MPI. */
    if (b.size != size)
        return TJ_ERR_NOT_STRIDED;
    *block = b;
    if (canonical != NULL)
        *canonical = ir;
    return TJ_OK;
}
