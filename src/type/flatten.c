/* SPDX-License-Identifier: BSD-3-Clause */
/* Layouts of datatypes, one constructor level at a time (see flatten.h). A level's result is a
 * node: a strided chain while it is one (the canonical passes keep it small), else a layout.
 * Streams wrap a chain as the strided translation does and a layout as a new frame dimension;
 * members (indexed, struct, a darray's partial blocks) are added to a builder part by part. */
#include "type/flatten.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "type/canon.h"
#include "type/contents.h"
#include "type/cpu.h"
#include "type/layout_builder.h"
#include "type/probe.h"
#include "type/state.h"
#include "type/table.h"
#include "util/common.h"

typedef struct {
    tj_ir_t *ir;      /* a chain, simplified, offsets not hoisted; or NULL */
    tj_layout_t *lay; /* a layout, when ir is NULL */
} node_t;

typedef struct {
    tj_reason_t why;
    bool checking; /* flattening darray_check's reference types */
} ctx_t;

static tj_status_t refuse(ctx_t *cx, tj_reason_t why)
{
    cx->why = why;
    return TJ_ERR_NOT_STRIDED;
}

static void node_free(node_t *n)
{
    free(n->ir);
    tj_layout_release(n->lay);
    n->ir = NULL;
    n->lay = NULL;
}

static tj_status_t node_chain(node_t *n, const tj_ir_t *ir)
{
    n->lay = NULL;
    if ((n->ir = malloc(sizeof(*n->ir))) == NULL)
        return TJ_ERR_NOMEM;
    n->ir->n = ir->n;
    memcpy(n->ir->node, ir->node, (size_t)ir->n * sizeof(ir->node[0]));
    return TJ_OK;
}

static tj_status_t node_to_layout(node_t *n)
{
    tj_status_t st;

    if (n->ir == NULL)
        return TJ_OK;
    if ((st = tj_layout_builder_from_chain(n->ir, &n->lay)) != TJ_OK)
        return st;
    free(n->ir);
    n->ir = NULL;
    return TJ_OK;
}

/* `count` copies of the node, `stride` bytes apart, at `offset`. */
static tj_status_t node_stream(ctx_t *cx, node_t *n, int64_t offset, int64_t count, int64_t stride)
{
    tj_status_t st;

    if (n->ir != NULL) {
        if ((st = tj_canon_push(n->ir, offset, count, stride)) != TJ_ERR_NOT_STRIDED)
            return st;
        if ((st = node_to_layout(n)) != TJ_OK) /* a chain longer than the IR holds */
            return st;
    }
    st = tj_layout_stream(&n->lay, offset, count, stride);
    return st == TJ_ERR_NOT_STRIDED ? refuse(cx, TJ_REASON_CHAIN) : st;
}

/* `bl` copies of the node, `ext` bytes apart, at `disp`, into the builder. */
static void node_add(tj_layout_builder_t *b, const node_t *n, int64_t disp, int64_t bl, int64_t ext)
{
    if (n->ir != NULL)
        tj_layout_builder_add_chain(b, disp, bl, n->ir, ext);
    else
        tj_layout_builder_add_layout(b, disp, bl, n->lay, ext);
}

static tj_status_t builder_end(ctx_t *cx, tj_layout_builder_t *b, node_t *out)
{
    bool too_many = tj_layout_builder_too_many(b);
    tj_status_t st = tj_layout_builder_end(b, &out->lay);

    out->ir = NULL;
    if (st == TJ_ERR_NOT_STRIDED)
        return refuse(cx, too_many ? TJ_REASON_PARTS : TJ_REASON_BLOCK);
    return st;
}

static tj_status_t extent_of(MPI_Datatype type, int64_t *extent)
{
    MPI_Aint lb, ext;
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    *extent = ext;
    return TJ_OK;
}

static tj_status_t flatten_args(ctx_t *cx, const tj_type_args_t *a, int depth, node_t *out);

/* The pair types of MPI: a value and an int, as the C struct { T value; int index; } lays them
 * out. Those with padding between the two have a hole; they are two runs. */
static tj_status_t named_node(ctx_t *cx, MPI_Datatype type, node_t *out)
{
    const MPI_Datatype pairs[] = {MPI_SHORT_INT, MPI_LONG_INT,        MPI_DOUBLE_INT,
                                  MPI_FLOAT_INT, MPI_LONG_DOUBLE_INT, MPI_2INT};
    MPI_Aint lb, text;
    int size;
    bool pair = false;
    tj_layout_builder_t b;

    if (PMPI_Type_get_true_extent(type, &lb, &text) != MPI_SUCCESS ||
        PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if (size == text) {
        tj_ir_t ir;
        tj_ir_init_dense(&ir, lb, size);
        return node_chain(out, &ir);
    }
    for (size_t i = 0; i < TJ_ARRAY_SIZE(pairs); i++)
        pair = pair || type == pairs[i];
    if (!pair || size <= 4 || text < size)
        return refuse(cx, TJ_REASON_NAMED_HOLES);
    tj_layout_builder_init(&b);
    tj_layout_builder_add_run(&b, lb, size - 4);
    tj_layout_builder_add_run(&b, lb + text - 4, 4);
    return builder_end(cx, &b, out);
}

static tj_status_t flatten_type(ctx_t *cx, MPI_Datatype type, int depth, node_t *out)
{
    tj_contents_t *c;
    tj_status_t st;

    if (depth > TJ_IR_MAX_NODES)
        return refuse(cx, TJ_REASON_DEPTH);
    if ((st = tj_contents_new(type, &c)) != TJ_OK)
        return st;
    if (tj_combiner_named(c->env.combiner))
        st = named_node(cx, type, out);
    else
        st = flatten_args(cx, &c->args, depth, out);
    tj_contents_delete(c);
    return st;
}

/* The node of a child type: its strided chain, else its layout through its contents. */
static tj_status_t child_node(ctx_t *cx, MPI_Datatype type, int depth, node_t *out)
{
    tj_reason_t why;
    tj_ir_t *ir;
    tj_status_t st;

    out->ir = NULL;
    out->lay = NULL;
    if ((ir = malloc(sizeof(*ir))) == NULL)
        return TJ_ERR_NOMEM;
    st = tj_translate_ir(type, ir, &why);
    if (st == TJ_OK) {
        out->ir = ir;
        return TJ_OK;
    }
    free(ir);
    if (st != TJ_ERR_NOT_STRIDED)
        return st;
    if (!tj_reason_layout(why))
        return refuse(cx, why);
    if ((st = flatten_type(cx, type, depth + 1, out)) != TJ_OK || out->lay == NULL)
        return st;
    /* A layout of one part is a chain after all (a darray of blocks, a chain of more than 16
     * dimensions): as a chain, parents keep it one shape rather than taking it apart. */
    if ((ir = malloc(sizeof(*ir))) == NULL) {
        node_free(out);
        return TJ_ERR_NOMEM;
    }
    if (!tj_layout_as_chain(out->lay, ir)) {
        free(ir);
        return TJ_OK;
    }
    tj_layout_release(out->lay);
    out->lay = NULL;
    out->ir = ir;
    return TJ_OK;
}

/* ---- members: indexed, hindexed, their _block forms, struct ---------------------------------- */

#define CHILD_CACHE 4

typedef struct {
    MPI_Datatype type;
    int64_t ext;
    node_t node;
    bool run;         /* the node is one dense run of `len` bytes at `off`, stepped by ext */
    int64_t off, len; /* of a run node */
} child_t;

/* A member type's one non-empty member, @p i: when its child is a layout, its `bl` copies
 * streamed at the member's displacement, the child's frame kept as a vector's stream keeps it,
 * rather than taken apart part by part. So a type wrapped in a struct of one member (a type at
 * an absolute address over MPI_BOTTOM) has the layout, and the kernel, of the type it wraps.
 * TJ_ERR_NOT_FOUND, with nothing made, when the child is a chain. */
static tj_status_t one_member(ctx_t *cx, const tj_type_args_t *a, int64_t i, bool h, bool one_bl,
                              int depth, node_t *out)
{
    MPI_Datatype t = a->combiner == MPI_COMBINER_STRUCT ? a->types[i] : a->child;
    int64_t bl = one_bl ? a->blocklen : tj_array_at(a->blocklens, i), ext, disp;
    node_t n = {NULL, NULL};
    tj_status_t st;

    if ((st = extent_of(t, &ext)) != TJ_OK || (st = child_node(cx, t, depth, &n)) != TJ_OK)
        return st;
    if (n.lay == NULL) {
        node_free(&n);
        return TJ_ERR_NOT_FOUND;
    }
    if (h)
        disp = tj_array_at(a->bdispls, i);
    else if (!tj_mul64(tj_array_at(a->displs, i), ext, &disp)) {
        node_free(&n);
        return TJ_ERR_OVERFLOW;
    }
    if ((st = node_stream(cx, &n, disp, bl, ext)) != TJ_OK) {
        node_free(&n);
        return st;
    }
    *out = n;
    return TJ_OK;
}

static tj_status_t members(ctx_t *cx, const tj_type_args_t *a, int depth, node_t *out)
{
    bool h = a->combiner == MPI_COMBINER_HINDEXED || a->combiner == MPI_COMBINER_HINDEXED_BLOCK ||
             a->combiner == MPI_COMBINER_STRUCT;
    bool one_bl =
        a->combiner == MPI_COMBINER_INDEXED_BLOCK || a->combiner == MPI_COMBINER_HINDEXED_BLOCK;
    child_t cache[CHILD_CACHE];
    int ncache = 0, next = 0;
    int64_t live = -1;
    tj_layout_builder_t b;
    tj_status_t st = TJ_OK;

    /* One non-empty member (the scan stops at the second). */
    for (int64_t i = 0; i < a->count; i++)
        if ((one_bl ? a->blocklen : tj_array_at(a->blocklens, i)) != 0) {
            if (live >= 0) {
                live = -1;
                break;
            }
            live = i;
        }
    if (live >= 0 && (st = one_member(cx, a, live, h, one_bl, depth, out)) != TJ_ERR_NOT_FOUND)
        return st;
    st = TJ_OK;
    tj_layout_builder_init(&b);
    tj_layout_builder_reserve(&b, a->count);
    for (int64_t i = 0; i < a->count && st == TJ_OK; i++) {
        MPI_Datatype t = a->combiner == MPI_COMBINER_STRUCT ? a->types[i] : a->child;
        int64_t bl = one_bl ? a->blocklen : tj_array_at(a->blocklens, i), disp, len;
        child_t *c = NULL;

        if (bl == 0)
            continue;
        for (int k = 0; k < ncache && c == NULL; k++)
            if (cache[k].type == t)
                c = &cache[k];
        if (c == NULL) {
            if (ncache < CHILD_CACHE)
                c = &cache[ncache++];
            else {
                c = &cache[next];
                next = (next + 1) % CHILD_CACHE;
                node_free(&c->node);
            }
            c->type = MPI_DATATYPE_NULL;
            c->node.ir = NULL;
            c->node.lay = NULL;
            if ((st = extent_of(t, &c->ext)) != TJ_OK ||
                (st = child_node(cx, t, depth, &c->node)) != TJ_OK)
                break;
            c->type = t;
            c->run = c->node.ir != NULL && c->node.ir->n == 1;
            if (c->run) {
                c->off = c->node.ir->node[0].offset;
                c->len = c->node.ir->node[0].extent;
            }
        }
        if (h)
            disp = tj_array_at(a->bdispls, i);
        else if (!tj_mul64(tj_array_at(a->displs, i), c->ext, &disp)) {
            st = TJ_ERR_OVERFLOW;
            break;
        }
        /* The common case of millions of members: a block of elements that is one run. */
        if (c->run && (bl == 1 || c->ext == c->len)) {
            if (!tj_add64(disp, c->off, &disp) || !tj_mul64(bl, c->len, &len))
                st = TJ_ERR_OVERFLOW;
            else
                tj_layout_builder_add_run(&b, disp, len);
            continue;
        }
        node_add(&b, &c->node, disp, bl, c->ext);
    }
    for (int k = 0; k < ncache; k++)
        node_free(&cache[k].node);
    if (st != TJ_OK) {
        tj_layout_builder_end(&b, &out->lay);
        tj_layout_release(out->lay);
        out->lay = NULL;
        return st;
    }
    return builder_end(cx, &b, out);
}

/* ---- darray -------------------------------------------------------------------------------- */

static tj_status_t flatten_type(ctx_t *cx, MPI_Datatype type, int depth, node_t *out);
static tj_status_t result(node_t *n, tj_layout_t **out);

/* Whether one reference darray packs the same bytes by its decoding here and by the system MPI
 * (its layout probed through PMPI_Pack). */
static bool darray_case_agrees(int nprocs, int rank, int ndims, const int *gsizes,
                               const int *distribs, const int *dargs, const int *psizes, int order,
                               MPI_Datatype old)
{
    MPI_Datatype t;
    MPI_Count size, lb, ext, tlb, text;
    ctx_t cx = {TJ_REASON_NONE, true};
    node_t n;
    tj_layout_t *mine = NULL, *theirs = NULL;
    unsigned char *typed = NULL, *a = NULL, *b = NULL;
    bool same = false;

    if (PMPI_Type_create_darray(nprocs, rank, ndims, gsizes, distribs, dargs, psizes, order, old,
                                &t) != MPI_SUCCESS)
        return false;
    if (PMPI_Type_commit(&t) == MPI_SUCCESS && PMPI_Type_size_x(t, &size) == MPI_SUCCESS &&
        PMPI_Type_get_extent_x(t, &lb, &ext) == MPI_SUCCESS &&
        PMPI_Type_get_true_extent_x(t, &tlb, &text) == MPI_SUCCESS && size > 0 && tlb >= 0 &&
        flatten_type(&cx, t, 0, &n) == TJ_OK && result(&n, &mine) == TJ_OK &&
        tj_layout_finish(&mine, (int64_t)ext, (int64_t)size) == TJ_OK &&
        tj_probe_layout(t, (int64_t)tlb, (int64_t)text, (int64_t)ext, (int64_t)size, &theirs) ==
            TJ_OK &&
        (typed = malloc((size_t)(tlb + text))) != NULL && (a = malloc((size_t)size)) != NULL &&
        (b = malloc((size_t)size)) != NULL) {
        /* Bytes that differ within each element and between elements. */
        for (MPI_Count i = 0; i < tlb + text; i++)
            typed[i] = (unsigned char)(i * 7 + (i >> 8) * 13 + (i >> 16));
        tj_cpu_pack_layout(mine, typed, 1, a);
        tj_cpu_pack_layout(theirs, typed, 1, b);
        same = memcmp(a, b, (size_t)size) == 0;
    }
    free(typed);
    free(a);
    free(b);
    tj_layout_release(mine);
    tj_layout_release(theirs);
    PMPI_Type_free(&t);
    return same;
}

/* Whether the system MPI builds distributed arrays as MPI defines them, decided once: Intel MPI
 * 2021.19 places a cyclic(k) dimension's blocks otherwise (elements 30-35 of the Fortran case
 * below, where the definition and Open MPI and MPICH give 30, 31, 38, 39, 46, 47). Where it does
 * not, darrays are left to the probe, which packs as the system MPI does. */
static void darray_check(void)
{
    static const int f_sizes[3] = {8, 8, 8}, f_psizes[3] = {3, 2, 2}, c_sizes[3] = {9, 6, 3},
                     c_psizes[3] = {3, 2, 3};
    const int f_distribs[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
              f_dargs[3] = {MPI_DISTRIBUTE_DFLT_DARG, 3, MPI_DISTRIBUTE_DFLT_DARG},
              c_distribs[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
              c_dargs[3] = {2, MPI_DISTRIBUTE_DFLT_DARG, 2};

    tj_type_state.flatten.darray_standard =
        darray_case_agrees(12, 10, 3, f_sizes, f_distribs, f_dargs, f_psizes, MPI_ORDER_FORTRAN,
                           MPI_DOUBLE) &&
        darray_case_agrees(18, 4, 3, c_sizes, c_distribs, c_dargs, c_psizes, MPI_ORDER_C, MPI_BYTE);
}

/* The typemap of a distributed array, from its definition (MPI 4.1, section 5.1.4): the
 * elements this rank owns in each dimension (a block, or blocks dealt round-robin with a shorter
 * last one), in the order of the local array (the fastest dimension first), each at its place in
 * the global array. The MPIs build it from contiguous, hvector, struct and resized types; the
 * oracle compares the two on Open MPI and MPICH. */
static tj_status_t darray(ctx_t *cx, const tj_type_args_t *a, int depth, node_t *out)
{
    int ndims = a->count >= 1 && a->count <= 64 ? (int)a->count : 0, coords[64];
    int64_t es, oext;
    node_t n = {NULL, NULL};
    tj_status_t st;

    if (ndims < 1 || ndims > 64)
        return refuse(cx, TJ_REASON_DARRAY);
    if (!cx->checking && (pthread_once(&tj_type_state.flatten.darray_once, darray_check) != 0 ||
                          !tj_type_state.flatten.darray_standard))
        return TJ_ERR_UNSUPPORTED; /* for the probe (tj_flatten_commit), the reason kept */
    {
        int64_t procs = a->nprocs, r = a->rank;
        for (int i = 0; i < ndims; i++) {
            int64_t p = tj_array_at(a->psizes, i);
            if (p < 1 || procs % p != 0)
                return refuse(cx, TJ_REASON_DARRAY);
            procs /= p;
            coords[i] = (int)(r / procs);
            r %= procs;
        }
    }
    if ((st = extent_of(a->child, &oext)) != TJ_OK ||
        (st = child_node(cx, a->child, depth, &n)) != TJ_OK)
        return st;
    es = oext;
    for (int k = 0; k < ndims && st == TJ_OK; k++) {
        int i = a->order == MPI_ORDER_C ? ndims - 1 - k : k;
        int64_t g = tj_array_at(a->sizes, i), P = tj_array_at(a->psizes, i), c = coords[i],
                darg = tj_array_at(a->dargs, i);
        int dist = (int)tj_array_at(a->distribs, i);

        if (dist == MPI_DISTRIBUTE_NONE) {
            if (P != 1) {
                st = refuse(cx, TJ_REASON_DARRAY);
                break;
            }
            dist = MPI_DISTRIBUTE_BLOCK;
            P = 1, c = 0, darg = MPI_DISTRIBUTE_DFLT_DARG;
        }
        if (dist == MPI_DISTRIBUTE_BLOCK) {
            int64_t bsz = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + P - 1) / P : darg;
            int64_t mine = TJ_MAX(TJ_MIN(bsz, g - bsz * c), 0);
            if (mine == 0)
                goto empty;
            st = node_stream(cx, &n, bsz * c * es, mine, es);
        } else if (dist == MPI_DISTRIBUTE_CYCLIC) {
            int64_t bsz = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg, first = c * bsz, local = 0;
            int64_t count, rem, step;
            if (bsz < 1) {
                st = refuse(cx, TJ_REASON_DARRAY);
                break;
            }
            if (g - 1 >= first) {
                local = (g - first) / (P * bsz) * bsz;
                local += TJ_MIN((g - first) % (P * bsz), bsz);
            }
            if (local == 0)
                goto empty;
            count = local / bsz;
            rem = local % bsz;
            step = P * bsz * es;
            if (rem == 0) {
                if ((st = node_stream(cx, &n, first * es, bsz, es)) == TJ_OK)
                    st = node_stream(cx, &n, 0, count, step);
            } else {
                /* The whole blocks, then the shorter last one: two members. */
                node_t whole = {NULL, NULL};
                tj_layout_builder_t b;
                if (n.ir != NULL)
                    st = node_chain(&whole, n.ir);
                else
                    whole.lay = tj_layout_hold(n.lay);
                if (st == TJ_OK && count > 0 && (st = node_stream(cx, &whole, 0, bsz, es)) == TJ_OK)
                    st = node_stream(cx, &whole, 0, count, step);
                if (st == TJ_OK) {
                    tj_layout_builder_init(&b);
                    if (count > 0)
                        node_add(&b, &whole, first * es, 1, 0);
                    node_add(&b, &n, first * es + count * step, rem, es);
                    node_free(&n);
                    st = builder_end(cx, &b, &n);
                }
                node_free(&whole);
            }
        } else {
            st = refuse(cx, TJ_REASON_DARRAY);
        }
        es *= g;
    }
    if (st != TJ_OK) {
        node_free(&n);
        return st;
    }
    *out = n;
    return TJ_OK;
empty:
    /* This rank owns nothing of some dimension: the typemap is empty, a type parents may still
     * hold among members that are not. */
    node_free(&n);
    {
        tj_ir_t ir;
        tj_ir_init_dense(&ir, 0, 0);
        return node_chain(out, &ir);
    }
}

/* ---- one constructor level ----------------------------------------------------------------- */

static tj_status_t flatten_args(ctx_t *cx, const tj_type_args_t *a, int depth, node_t *out)
{
    int64_t ext, stride;
    tj_status_t st;

    out->ir = NULL;
    out->lay = NULL;
    if (depth > TJ_IR_MAX_NODES)
        return refuse(cx, TJ_REASON_DEPTH);
    switch (a->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        return child_node(cx, a->child, depth, out);
    case MPI_COMBINER_CONTIGUOUS:
        if ((st = extent_of(a->child, &ext)) != TJ_OK ||
            (st = child_node(cx, a->child, depth, out)) != TJ_OK)
            return st;
        st = node_stream(cx, out, 0, a->count, ext);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        if ((st = extent_of(a->child, &ext)) != TJ_OK)
            return st;
        if (a->combiner == MPI_COMBINER_HVECTOR)
            stride = a->stride;
        else if (!tj_mul64(a->stride, ext, &stride))
            return TJ_ERR_OVERFLOW;
        /* As the strided translation: Open MPI reads this stride as contiguous. */
        if (stride == -1 && a->count > 1)
            return refuse(cx, TJ_REASON_STRIDE_M1);
        if ((st = child_node(cx, a->child, depth, out)) != TJ_OK)
            return st;
        if ((st = node_stream(cx, out, 0, a->blocklen, ext)) == TJ_OK)
            st = node_stream(cx, out, 0, a->count, stride);
        break;
    case MPI_COMBINER_SUBARRAY: {
        bool fortran = a->order == MPI_ORDER_FORTRAN;
        if ((st = extent_of(a->child, &stride)) != TJ_OK ||
            (st = child_node(cx, a->child, depth, out)) != TJ_OK)
            return st;
        for (int k = 0; k < a->count && st == TJ_OK; k++) {
            int d = fortran ? k : (int)a->count - 1 - k;
            int64_t offset;
            if (!tj_mul64(tj_array_at(a->starts, d), stride, &offset))
                st = TJ_ERR_OVERFLOW;
            else if ((st = node_stream(cx, out, offset, tj_array_at(a->subsizes, d), stride)) ==
                         TJ_OK &&
                     !tj_mul64(stride, tj_array_at(a->sizes, d), &stride))
                st = TJ_ERR_OVERFLOW;
        }
        break;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
        if (a->count <= 0)
            return refuse(cx, TJ_REASON_EMPTY);
        return members(cx, a, depth, out);
    case MPI_COMBINER_DARRAY:
        return darray(cx, a, depth, out);
    default:
        return refuse(cx, TJ_REASON_COMBINER);
    }
    if (st != TJ_OK)
        node_free(out);
    return st;
}

/* The node as a layout, for the caller. */
static tj_status_t result(node_t *n, tj_layout_t **out)
{
    tj_status_t st = node_to_layout(n);
    if (st != TJ_OK) {
        node_free(n);
        return st;
    }
    *out = n->lay;
    return TJ_OK;
}

tj_status_t tj_flatten_type(MPI_Datatype type, tj_layout_t **out, tj_reason_t *why)
{
    ctx_t cx = {TJ_REASON_NONE};
    node_t n;
    tj_status_t st = flatten_type(&cx, type, 0, &n);

    *why = cx.why;
    return st == TJ_OK ? result(&n, out) : st;
}

tj_status_t tj_flatten_commit(MPI_Datatype type, int64_t extent, int64_t size, tj_reason_t reason,
                              tj_layout_t **out, tj_reason_t *why)
{
    tj_layout_t *l = NULL;
    tj_status_t st = TJ_ERR_NOT_STRIDED;
    MPI_Count tlb, text;

    *why = reason;
    if (size <= 0) {
        *why = TJ_REASON_EMPTY;
        return TJ_ERR_NOT_STRIDED;
    }
    if (tj_reason_layout(reason)) {
        st = tj_flatten_type(type, &l, why);
        if (st == TJ_OK && (st = tj_layout_finish(&l, extent, size)) != TJ_OK) {
            tj_layout_release(l);
            if (st == TJ_ERR_NOT_STRIDED)
                *why = TJ_REASON_SIZE;
        }
        if (st == TJ_OK) {
            *out = l;
            return TJ_OK;
        }
        if (st != TJ_ERR_NOT_STRIDED && st != TJ_ERR_UNSUPPORTED)
            return st;
    }
    /* What typejit cannot take apart, or took apart wrongly, or builds otherwise than the system
     * MPI: the system MPI's own packing says where each byte comes from. */
    if (PMPI_Type_get_true_extent_x(type, &tlb, &text) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if (tj_probe_layout(type, (int64_t)tlb, (int64_t)text, extent, size, &l) != TJ_OK)
        return TJ_ERR_NOT_STRIDED; /* *why says why the translation did not */
    *out = l;
    return TJ_OK;
}

tj_status_t tj_flatten_form(MPI_Datatype type, tj_block_t *block, tj_layout_t **layout,
                            tj_reason_t *why)
{
    MPI_Aint lb, ext;
    MPI_Count size;
    tj_status_t st = tj_translate_block_why(type, block, NULL, why);

    *layout = NULL;
    if (st != TJ_ERR_NOT_STRIDED) {
        *why = TJ_REASON_NONE;
        return st;
    }
    if (PMPI_Type_get_extent(type, &lb, &ext) != MPI_SUCCESS ||
        PMPI_Type_size_x(type, &size) != MPI_SUCCESS)
        return TJ_ERR_MPI;
    if ((st = tj_flatten_commit(type, ext, size, *why, layout, why)) != TJ_OK)
        return st;
    if (tj_layout_as_block(*layout, block)) {
        tj_layout_release(*layout);
        *layout = NULL;
        *why = TJ_REASON_NONE;
    }
    return TJ_OK;
}
