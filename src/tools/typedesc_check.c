/* SPDX-License-Identifier: BSD-3-Clause */
/* A constructor's arguments checked before MPI sees them: the preconditions MPI states, and a
 * type's size and byte offsets within 64 bits. */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "typedesc_internal.h"
#include "util/common.h"

/* Size, extent and a bound on every byte offset of a type, in 64 bits. */
typedef struct {
    int64_t size, extent, reach;
} shape_t;

static tj_status_t shape_of(parser_t *ps, const char *at, MPI_Datatype type, shape_t *s)
{
    MPI_Count size, lb, extent, tlb, textent;
    int rc;

    if ((rc = PMPI_Type_size_x(type, &size)) != MPI_SUCCESS)
        return tj_typedesc_fail_mpi(ps, at, rc, "MPI_Type_size_x");
    if ((rc = PMPI_Type_get_extent_x(type, &lb, &extent)) != MPI_SUCCESS)
        return tj_typedesc_fail_mpi(ps, at, rc, "MPI_Type_get_extent_x");
    if ((rc = PMPI_Type_get_true_extent_x(type, &tlb, &textent)) != MPI_SUCCESS)
        return tj_typedesc_fail_mpi(ps, at, rc, "MPI_Type_get_true_extent_x");
    s->size = size;
    s->extent = extent;
    /* Each term is far below 2^63 for any type MPI could describe, so the sums cannot wrap. A
     * type without data has no true extent (Open MPI reports a sentinel), only bounds. */
    s->reach = TJ_MAX(tj_abs64(lb), tj_abs64(lb + extent));
    if (size > 0)
        s->reach = TJ_MAX(s->reach, TJ_MAX(tj_abs64(tlb), tj_abs64(tlb + textent)));
    return TJ_OK;
}

/* acc += |a| * |b|, false on overflow. */
static bool add_product(int64_t *acc, int64_t a, int64_t b)
{
    int64_t p;
    if (a == INT64_MIN || b == INT64_MIN)
        return false; /* its magnitude has no int64_t */
    return tj_mul64(tj_abs64(a), tj_abs64(b), &p) && tj_add64(*acc, p, acc);
}

/* Refuses types whose size or byte offsets would not fit in 64 bits, which MPI libraries do not
 * all detect (they wrap silently). The offset bound over-estimates, which only matters within a
 * factor of a few of 2^63 bytes. */
static tj_status_t check_limits(parser_t *ps, const args_t *args)
{
    shape_t c = {0, 0, 0};
    int64_t size = 0, reach = 0, elems = 1, max_bl = 0, max_displ = 0;
    bool ok = true;
    tj_status_t status = TJ_OK;

    if (args->kind != CT_STRUCT)
        TRY(shape_of(ps, args->at, args->child.type, &c));
    for (int i = 0; i < args->l[0].n; i++)
        max_bl = TJ_MAX(max_bl, args->l[0].v[i]);
    for (int i = 0; i < args->l[1].n; i++) {
        int64_t v = args->l[1].v[i];
        /* INT64_MIN has no int64_t magnitude; INT64_MAX stands in and still overflows below. */
        max_displ = TJ_MAX(max_displ, v == INT64_MIN ? INT64_MAX : tj_abs64(v));
    }

    switch (args->kind) {
    case CT_CONTIGUOUS:
        ok = tj_mul64(args->a, c.size, &size) && add_product(&reach, args->a, c.extent);
        break;
    case CT_VECTOR:
    case CT_HVECTOR: {
        int64_t stride = args->c;
        ok = tj_mul64(args->a, args->b, &elems) && tj_mul64(elems, c.size, &size) &&
             (args->kind == CT_HVECTOR || tj_mul64(stride, c.extent, &stride)) &&
             add_product(&reach, args->a, stride) && add_product(&reach, args->b, c.extent);
        break;
    }
    case CT_SUBARRAY:
        for (int d = 0; d < args->l[0].n && ok; d++)
            ok = tj_mul64(elems, args->l[0].v[d], &elems);
        ok = ok && add_product(&reach, elems, c.extent);
        elems = 1;
        for (int d = 0; d < args->l[1].n && ok; d++)
            ok = tj_mul64(elems, args->l[1].v[d], &elems);
        ok = ok && tj_mul64(elems, c.size, &size);
        break;
    case CT_RESIZED:
        size = c.size;
        ok = add_product(&reach, args->a, 1) && add_product(&reach, args->b, 1);
        break;
    case CT_DARRAY:
        /* At most the whole global array, every byte of it. */
        for (int d = 0; d < args->l[0].n && ok; d++)
            ok = tj_mul64(elems, args->l[0].v[d], &elems);
        ok = ok && tj_mul64(elems, c.size, &size) && add_product(&reach, elems, c.extent);
        break;
    case CT_DUP:
        size = c.size;
        break;
    case CT_INDEXED_BLOCK:
    case CT_HINDEXED_BLOCK:
        ok = tj_mul64(args->l[1].n, args->a, &elems) && tj_mul64(elems, c.size, &size) &&
             add_product(&reach, max_displ, args->kind == CT_INDEXED_BLOCK ? c.extent : 1) &&
             add_product(&reach, args->a, c.extent);
        break;
    case CT_INDEXED:
    case CT_HINDEXED:
        elems = 0;
        for (int i = 0; i < args->l[0].n && ok; i++)
            ok = tj_add64(elems, args->l[0].v[i], &elems);
        ok = ok && tj_mul64(elems, c.size, &size) &&
             add_product(&reach, max_displ, args->kind == CT_INDEXED ? c.extent : 1) &&
             add_product(&reach, max_bl, c.extent);
        break;
    case CT_STRUCT:
        for (int i = 0; i < args->members.n && ok; i++) {
            shape_t m;
            int64_t r = 0;
            TRY(shape_of(ps, args->at, args->members.v[i].type, &m));
            ok = add_product(&size, args->l[0].v[i], m.size) &&
                 add_product(&r, args->l[1].v[i], 1) &&
                 add_product(&r, args->l[0].v[i], m.extent) && tj_add64(r, m.reach, &r);
            reach = TJ_MAX(reach, r);
        }
        break;
    case CT_COUNT:
        break;
    }
    if (ok && args->kind != CT_STRUCT)
        ok = tj_add64(reach, c.reach, &reach);
    if (!ok || reach > AINT_MAX_V)
        status = tj_typedesc_fail(ps, args->at, TJ_ERR_PARSE,
                                  "%s: the type's size or byte offsets do not fit in 64 bits",
                                  tj_typedesc_ctor_names[args->kind]);
cleanup:
    return status;
}

tj_status_t tj_typedesc_check_args(parser_t *ps, const args_t *args)
{
    const list_t *l = args->l;

    switch (args->kind) {
    case CT_SUBARRAY:
        if (l[0].n == 0)
            return tj_typedesc_fail(ps, l[0].at, TJ_ERR_PARSE,
                                    "subarray needs at least one dimension");
        if (l[1].n != l[0].n)
            return tj_typedesc_fail(ps, l[1].at, TJ_ERR_PARSE,
                                    "subarray has %d sizes but %d subsizes", l[0].n, l[1].n);
        if (l[2].n != l[0].n)
            return tj_typedesc_fail(ps, l[2].at, TJ_ERR_PARSE,
                                    "subarray has %d sizes but %d starts", l[0].n, l[2].n);
        for (int d = 0; d < l[0].n; d++) {
            if (l[1].v[d] > l[0].v[d])
                return tj_typedesc_fail(ps, l[1].at, TJ_ERR_PARSE,
                                        "subsizes[%d] = %lld exceeds sizes[%d] = %lld", d,
                                        (long long)l[1].v[d], d, (long long)l[0].v[d]);
            if (l[2].v[d] > l[0].v[d] - l[1].v[d])
                return tj_typedesc_fail(ps, l[2].at, TJ_ERR_PARSE,
                                        "starts[%d] = %lld puts the subarray past sizes[%d] = %lld",
                                        d, (long long)l[2].v[d], d, (long long)l[0].v[d]);
        }
        break;
    case CT_INDEXED:
    case CT_HINDEXED:
        if (l[1].n != l[0].n)
            return tj_typedesc_fail(ps, l[1].at, TJ_ERR_PARSE,
                                    "%s has %d block lengths but %d displacements",
                                    tj_typedesc_ctor_names[args->kind], l[0].n, l[1].n);
        break;
    case CT_DARRAY: {
        int64_t procs = 1;
        if (l[0].n == 0)
            return tj_typedesc_fail(ps, l[0].at, TJ_ERR_PARSE,
                                    "darray needs at least one dimension");
        for (int i = 1; i < 4; i++)
            if (l[i].n != l[0].n)
                return tj_typedesc_fail(ps, l[i].at, TJ_ERR_PARSE,
                                        "darray has %d global sizes but %d %s", l[0].n, l[i].n,
                                        i == 1   ? "distributions"
                                        : i == 2 ? "distribution arguments"
                                                 : "process grid sizes");
        if (args->b >= args->a)
            return tj_typedesc_fail(ps, args->at, TJ_ERR_PARSE,
                                    "darray rank %lld is not below size %lld", (long long)args->b,
                                    (long long)args->a);
        for (int d = 0; d < l[0].n; d++) {
            int64_t g = l[0].v[d], darg = l[2].v[d], p = l[3].v[d];
            if (!tj_mul64(procs, p, &procs))
                procs = INT64_MAX;
            if (l[1].v[d] == MPI_DISTRIBUTE_NONE && p != 1)
                return tj_typedesc_fail(ps, l[3].at, TJ_ERR_PARSE,
                                        "dimension %d is not distributed but has %lld processes", d,
                                        (long long)p);
            if (l[1].v[d] == MPI_DISTRIBUTE_BLOCK && darg > 0 && darg * p < g)
                return tj_typedesc_fail(
                    ps, l[2].at, TJ_ERR_PARSE,
                    "blocks of %lld on %lld processes do not cover dimension %d of %lld",
                    (long long)darg, (long long)p, d, (long long)g);
        }
        if (procs != args->a)
            return tj_typedesc_fail(ps, l[3].at, TJ_ERR_PARSE,
                                    "the process grid has %lld processes, not size %lld",
                                    (long long)procs, (long long)args->a);
        break;
    }
    case CT_STRUCT:
        if (l[1].n != l[0].n)
            return tj_typedesc_fail(ps, l[1].at, TJ_ERR_PARSE,
                                    "struct has %d block lengths but %d displacements", l[0].n,
                                    l[1].n);
        if (args->members.n != l[0].n)
            return tj_typedesc_fail(ps, args->members.at, TJ_ERR_PARSE,
                                    "struct has %d block lengths but %d member types", l[0].n,
                                    args->members.n);
        break;
    default:
        break;
    }
    return check_limits(ps, args);
}
