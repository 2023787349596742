/* SPDX-License-Identifier: BSD-3-Clause */
/* Random datatype generator. Most draws are built to be strided (uniform displacements, one
 * member shape) so that the engine is exercised; a share are deliberately irregular (members at
 * uneven places, of several block lengths or several types, darrays) so that layouts are
 * exercised too. */
#include "randtype.h"
#include "sysmpi.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_seed(rt_rng_t *rng, uint64_t seed)
{
    /* A multiplier unrelated to the generator's increment, so that neighbouring seeds do not give
     * shifted copies of one sequence. */
    rng->state = (seed + 1) * 0xD1B54A32D192ED03ull;
}

uint64_t rt_next(rt_rng_t *rng)
{
    /* splitmix64: small, fast, good enough for test inputs. */
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int64_t rt_range(rt_rng_t *rng, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rt_next(rng) % (uint64_t)(hi - lo + 1));
}

typedef struct {
    MPI_Datatype type;
    const char *name;
} named_t;

static const named_t *pick_named(rt_rng_t *rng)
{
    static named_t named[16];
    static int n;
    if (n == 0) {
        named_t all[] = {
            {MPI_BYTE, "MPI_BYTE"},
            {MPI_CHAR, "MPI_CHAR"},
            {MPI_SHORT, "MPI_SHORT"},
            {MPI_INT, "MPI_INT"},
            {MPI_FLOAT, "MPI_FLOAT"},
            {MPI_DOUBLE, "MPI_DOUBLE"},
            {MPI_INT64_T, "MPI_INT64_T"},
            {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
            {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
            {MPI_2INT, "MPI_2INT"},
            {MPI_SHORT_INT, "MPI_SHORT_INT"},
            {MPI_FLOAT_INT, "MPI_FLOAT_INT"},
            {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
            {MPI_DOUBLE, "MPI_DOUBLE"},
            {MPI_FLOAT, "MPI_FLOAT"},
            {MPI_BYTE, "MPI_BYTE"},
        };
        memcpy(named, all, sizeof(all));
        n = (int)(sizeof(all) / sizeof(all[0]));
        /* The MPICH family and Open MPI 5 pack an x87 long double by value in some types: 10 of
         * its 16 bytes, leaving the padding unwritten where the oracle's poison shows it
         * (typejit copies all 16; Open MPI 4.1 does too). */
        if (!sysmpi_version_has("Open MPI v4."))
            for (int i = 0; i < n; i++)
                if (named[i].type == MPI_LONG_DOUBLE)
                    named[i] = (named_t){MPI_INT64_T, "MPI_INT64_T"};
        /* Open MPI 5.0.11 packs a resized MPI_C_DOUBLE_COMPLEX inside a subarray at other
         * places than Open MPI 4.1 and MPICH do (docs/mpis.md). */
        if (sysmpi_version_has("Open MPI v5."))
            for (int i = 0; i < n; i++)
                if (named[i].type == MPI_C_DOUBLE_COMPLEX)
                    named[i] = (named_t){MPI_DOUBLE, "MPI_DOUBLE"};
    }
    return &named[rt_range(rng, 0, n - 1)];
}

/* Appends formatted text to a bounded buffer. */
typedef struct {
    char *buf;
    size_t len, used;
} text_t;

static void put(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text_t *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (t->used >= t->len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->used += (size_t)n;
}

static void put_list(text_t *t, const int64_t *v, int n)
{
    put(t, "{");
    for (int i = 0; i < n; i++)
        put(t, "%s%lld", i ? "," : "", (long long)v[i]);
    put(t, "}");
}

/* A list of the (at most 3) dimensions of a subarray or a darray. */
static void put_dims(text_t *t, const int *v, int nd)
{
    int64_t w[3];
    for (int d = 0; d < nd; d++)
        w[d] = v[d];
    put_list(t, w, nd);
}

/* Whether this level is made by its MPI-4 large-count constructor (opt->large_percent; no
 * draw at all when it is 0, so that the types of a seed stay the same). */
static bool large(rt_rng_t *rng, const rt_options_t *opt)
{
    return opt->large_percent > 0 && rt_range(rng, 0, 99) < opt->large_percent;
}

/* A `_c` constructor call, where the MPI has them (large_percent is 0 elsewhere). */
#if MPI_VERSION >= 4
#define LARGE(...)                                                                                 \
    do {                                                                                           \
        __VA_ARGS__;                                                                               \
    } while (0)
#else
#define LARGE(...) abort()
#endif

static int64_t extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static int64_t signed_stride(rt_rng_t *rng, int64_t min_abs, const rt_options_t *opt)
{
    int64_t s = min_abs + rt_range(rng, 0, 3);
    if (rt_range(rng, 1, 100) <= opt->huge_percent)
        s += (int64_t)1 << 31; /* beyond 32 bits */
    else if (rt_range(rng, 0, 3) == 0)
        s = rt_range(rng, 0, min_abs + 2); /* overlapping or touching */
    /* Intel MPI 2021.19 packs a vector whose blocks overlap as if it were contiguous, and unpacks
     * it past the type's true extent (docs/mpis.md): its strides do not overlap here. */
    if (s < min_abs && sysmpi_version_has("Intel(R) MPI"))
        s = min_abs;
    if (rt_range(rng, 0, 4) == 0)
        s = -s;
    return s;
}

static MPI_Datatype build(rt_rng_t *rng, const rt_options_t *opt, int depth, text_t *t);

/* The child of a constructor at @p depth, its description into @p text, not onto @p t: the
 * constructor's description puts arguments drawn after the child before it. */
static MPI_Datatype build_apart(rt_rng_t *rng, const rt_options_t *opt, int depth, text_t *t,
                                char *text, size_t len)
{
    size_t at = t->used;
    MPI_Datatype child = build(rng, opt, depth + 1, t);
    snprintf(text, len, "%s", t->buf + at);
    t->used = at;
    return child;
}

/* Members with the same block length and evenly spaced displacements (strided), or, one time in
 * five, irregular ones. */
static void member_displs(rt_rng_t *rng, int n, int64_t unit, bool bytes, const rt_options_t *opt,
                          int64_t *displs)
{
    int64_t step = rt_range(rng, 0, 3) * unit + (rt_range(rng, 0, 3) == 0 ? unit : 0);
    if (bytes && rt_range(rng, 1, 100) <= opt->huge_percent)
        step += (int64_t)1 << 31; /* displacements beyond 32 bits */
    int64_t first = rt_range(rng, -2, 3) * unit;
    bool irregular = rt_range(rng, 0, 4) == 0;
    for (int i = 0; i < n; i++)
        displs[i] = first + i * step + (irregular && i == n - 1 ? unit : 0);
}

static MPI_Datatype build_derived(rt_rng_t *rng, const rt_options_t *opt, int depth, text_t *t)
{
    MPI_Datatype child, out = MPI_DATATYPE_NULL;
    int kind = (int)rt_range(rng, 0, 13);
    int count = (int)rt_range(rng, 1, 4), bl = (int)rt_range(rng, 1, 4);
    int64_t ext;

    switch (kind) {
    case 0:
        put(t, "contiguous(%d,", count);
        child = build(rng, opt, depth + 1, t);
        if (large(rng, opt))
            LARGE(MPI_Type_contiguous_c(count, child, &out));
        else
            MPI_Type_contiguous(count, child, &out);
        break;
    case 1: {
        int stride = (int)signed_stride(rng, bl, opt) % 64;
        put(t, "vector(%d,%d,%d,", count, bl, stride);
        child = build(rng, opt, depth + 1, t);
        if (large(rng, opt))
            LARGE(MPI_Type_vector_c(count, bl, stride, child, &out));
        else
            MPI_Type_vector(count, bl, stride, child, &out);
        break;
    }
    case 2: {
        put(t, "hvector(%d,%d,", count, bl);
        /* The stride is drawn after the child; splice it into the text before the child. */
        char tail[4096];
        child = build_apart(rng, opt, depth, t, tail, sizeof(tail));
        ext = extent_of(child);
        int64_t stride = signed_stride(rng, bl * (ext > 0 ? ext : 1), opt);
        put(t, "%lld,%s", (long long)stride, tail);
        if (large(rng, opt))
            LARGE(MPI_Type_create_hvector_c(count, bl, stride, child, &out));
        else
            MPI_Type_create_hvector(count, bl, stride, child, &out);
        break;
    }
    case 3:
    case 4: {
        int nd = (int)rt_range(rng, 1, 3), sizes[3], subs[3], starts[3];
        bool fortran = rt_range(rng, 0, 1);
        for (int d = 0; d < nd; d++) {
            sizes[d] = (int)rt_range(rng, 1, 6);
            subs[d] = (int)rt_range(rng, 1, sizes[d]);
            starts[d] = (int)rt_range(rng, 0, sizes[d] - subs[d]);
        }
        put(t, "subarray(");
        put_dims(t, sizes, nd);
        put(t, ",");
        put_dims(t, subs, nd);
        put(t, ",");
        put_dims(t, starts, nd);
        put(t, ",%s,", fortran ? "F" : "C");
        child = build(rng, opt, depth + 1, t);
        if (large(rng, opt)) {
            LARGE(MPI_Count csizes[3]; MPI_Count csubs[3]; MPI_Count cstarts[3];
                  for (int d = 0; d < nd; d++) csizes[d] = sizes[d], csubs[d] = subs[d],
                  cstarts[d] = starts[d];
                  MPI_Type_create_subarray_c(nd, csizes, csubs, cstarts,
                                             fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, child,
                                             &out));
        } else
            MPI_Type_create_subarray(nd, sizes, subs, starts,
                                     fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, child, &out);
        break;
    }
    case 5: {
        size_t at = t->used;
        put(t, "resized(");
        size_t mid = t->used;
        child = build(rng, opt, depth + 1, t);
        ext = extent_of(child);
        int64_t lb = rt_range(rng, -16, 16), nex = ext + rt_range(rng, 0, 3) * 8 - 4;
        if (nex < 1)
            nex = ext > 0 ? ext : 1;
        char tail[4096];
        snprintf(tail, sizeof(tail), "%s", t->buf + mid);
        t->used = at;
        put(t, "resized(%lld,%lld,%s", (long long)lb, (long long)nex, tail);
        if (large(rng, opt))
            LARGE(MPI_Type_create_resized_c(child, lb, nex, &out));
        else
            MPI_Type_create_resized(child, lb, nex, &out);
        break;
    }
    case 6:
        put(t, "dup(");
        child = build(rng, opt, depth + 1, t);
        MPI_Type_dup(child, &out);
        break;
    case 7:
    case 8:
    case 9: {
        /* indexed_block, hindexed_block, indexed, hindexed over one child. */
        int n = count, bls[4];
        int64_t displs[4], bls64[4];
        char inner[4096];
        child = build_apart(rng, opt, depth, t, inner, sizeof(inner));
        ext = extent_of(child);
        bool bytes = rt_range(rng, 0, 1);
        bool block = kind != 9;
        member_displs(rng, n, bytes ? bl * (ext > 0 ? ext : 1) : bl, bytes, opt, displs);
        for (int i = 0; i < n; i++)
            bls64[i] = bls[i] = block ? bl : (int)(rt_range(rng, 0, 5) == 0 ? 0 : bl);
        int idispl[4];
        MPI_Aint adispl[4];
        for (int i = 0; i < n; i++) {
            idispl[i] = (int)displs[i];
            adispl[i] = displs[i];
        }
        if (block) {
            put(t, "%s(%d,", bytes ? "hindexed_block" : "indexed_block", bl);
            put_list(t, displs, n);
            put(t, ",%s", inner);
            if (large(rng, opt))
                LARGE(MPI_Count cd[4]; for (int i = 0; i < n; i++) cd[i] = displs[i];
                      if (bytes) MPI_Type_create_hindexed_block_c(n, bl, cd, child, &out);
                      else MPI_Type_create_indexed_block_c(n, bl, cd, child, &out));
            else if (bytes)
                MPI_Type_create_hindexed_block(n, bl, adispl, child, &out);
            else
                MPI_Type_create_indexed_block(n, bl, idispl, child, &out);
        } else {
            put(t, "%s(", bytes ? "hindexed" : "indexed");
            put_list(t, bls64, n);
            put(t, ",");
            put_list(t, displs, n);
            put(t, ",%s", inner);
            if (large(rng, opt))
                LARGE(MPI_Count cb[4]; MPI_Count cd[4];
                      for (int i = 0; i < n; i++) cb[i] = bls[i], cd[i] = displs[i];
                      if (bytes) MPI_Type_create_hindexed_c(n, cb, cd, child, &out);
                      else MPI_Type_indexed_c(n, cb, cd, child, &out));
            else if (bytes)
                MPI_Type_create_hindexed(n, bls, adispl, child, &out);
            else
                MPI_Type_indexed(n, bls, idispl, child, &out);
        }
        break;
    }
    case 12: {
        /* Many irregular members: blocks of 0 to 5 children at uneven places, now and then out
         * of order or overlapping; or, one time in three, stretches of 6 to 20 blocks of one
         * length evenly spaced (the step may be smaller than the block, or negative), now and
         * then one block out of place, which the layouts fold into strided parts. */
        int n = (int)rt_range(rng, 8, 60), bls[60], left = 0, sbl = 0;
        int64_t displs[60], bls64[60], at = rt_range(rng, -4, 4), step = 0;
        bool bytes = rt_range(rng, 0, 1), shuffle = rt_range(rng, 0, 7) == 0;
        bool stretches = rt_range(rng, 0, 2) == 0;
        char inner[4096];
        child = build_apart(rng, opt, depth, t, inner, sizeof(inner));
        ext = extent_of(child);
        for (int i = 0; i < n; i++) {
            if (stretches) {
                if (left-- == 0) {
                    left = (int)rt_range(rng, 6, 20);
                    sbl = (int)rt_range(rng, 1, 4);
                    step = sbl + rt_range(rng, rt_range(rng, 0, 5) == 0 ? -6 : 0, 4);
                    at += sbl + rt_range(rng, 1, 9);
                }
                bls64[i] = bls[i] = sbl;
                displs[i] =
                    (at + (rt_range(rng, 0, 24) == 0 ? 1 : 0)) * (bytes ? (ext > 0 ? ext : 1) : 1);
                at += step;
                continue;
            }
            bls64[i] = bls[i] = (int)rt_range(rng, 0, 5);
            displs[i] = at * (bytes ? (ext > 0 ? ext : 1) : 1);
            at += bls[i] + rt_range(rng, rt_range(rng, 0, 9) == 0 ? -2 : 0, 3);
        }
        if (shuffle)
            for (int i = n - 1; i > 0; i--) {
                int j = (int)rt_range(rng, 0, i);
                int64_t d = displs[i];
                displs[i] = displs[j];
                displs[j] = d;
            }
        put(t, "%s(", bytes ? "hindexed" : "indexed");
        put_list(t, bls64, n);
        put(t, ",");
        put_list(t, displs, n);
        put(t, ",%s", inner);
        if (bytes) {
            MPI_Aint adispl[60];
            for (int i = 0; i < n; i++)
                adispl[i] = displs[i];
            MPI_Type_create_hindexed(n, bls, adispl, child, &out);
        } else {
            int idispl[60];
            for (int i = 0; i < n; i++)
                idispl[i] = (int)displs[i];
            MPI_Type_indexed(n, bls, idispl, child, &out);
        }
        break;
    }
    case 13: {
        /* A darray: 1 to 3 dimensions, each block, cyclic or not distributed. */
        int nd = (int)rt_range(rng, 1, 3), size = 1, gs[3], ds[3], da[3], ps[3];
        bool fortran = rt_range(rng, 0, 1);
        static const char *const dn[] = {"block", "cyclic", "none"};
        int dist_code[3];
        for (int d = 0; d < nd; d++) {
            gs[d] = (int)rt_range(rng, 1, 9);
            dist_code[d] = (int)rt_range(rng, 0, 2);
            ps[d] = dist_code[d] == 2 ? 1 : (int)rt_range(rng, 1, 3);
            size *= ps[d];
            if (dist_code[d] == 0) {
                ds[d] = MPI_DISTRIBUTE_BLOCK;
                /* A block length that covers the dimension, or the default. */
                da[d] = rt_range(rng, 0, 1)
                            ? 0
                            : (gs[d] + ps[d] - 1) / ps[d] + (int)rt_range(rng, 0, 2);
            } else if (dist_code[d] == 1) {
                ds[d] = MPI_DISTRIBUTE_CYCLIC;
                da[d] = (int)rt_range(rng, 0, 3);
            } else {
                ds[d] = MPI_DISTRIBUTE_NONE;
                da[d] = 0;
            }
        }
        int rank = (int)rt_range(rng, 0, size - 1);
        char inner[4096];
        child = build_apart(rng, opt, depth, t, inner, sizeof(inner));
        ext = extent_of(child);
        int csize = 0;
        MPI_Type_size(child, &csize);
        if (ext <= 0 || csize == 0) {
            /* Open MPI refuses a darray of a type without extent or data. */
            put(t, "contiguous(1,%s", inner);
            MPI_Type_contiguous(1, child, &out);
            break;
        }
        put(t, "darray(%d,%d,", size, rank);
        put_dims(t, gs, nd);
        put(t, ",{");
        for (int d = 0; d < nd; d++)
            put(t, "%s%s", d ? "," : "", dn[dist_code[d]]);
        put(t, "},");
        put_dims(t, da, nd);
        put(t, ",");
        put_dims(t, ps, nd);
        put(t, ",%s,%s", fortran ? "F" : "C", inner);
        for (int d = 0; d < nd; d++)
            if (da[d] == 0)
                da[d] = MPI_DISTRIBUTE_DFLT_DARG;
        MPI_Type_create_darray(size, rank, nd, gs, ds, da, ps,
                               fortran ? MPI_ORDER_FORTRAN : MPI_ORDER_C, child, &out);
        break;
    }
    default: {
        /* struct: one member, several of the same type, or (rarely) mixed types. */
        int n = count, bls[4];
        int64_t displs[4], bls64[4];
        MPI_Aint adispl[4];
        MPI_Datatype types[4];
        char inner[4][4096];
        size_t at = t->used;
        bool mixed = n > 1 && rt_range(rng, 0, 5) == 0;
        int built = mixed ? n : 1;
        for (int i = 0; i < built; i++) {
            t->used = at;
            types[i] = build(rng, opt, depth + 1, t);
            snprintf(inner[i], sizeof(inner[i]), "%s", t->buf + at);
        }
        for (int i = built; i < n; i++) {
            types[i] = types[0];
            snprintf(inner[i], sizeof(inner[i]), "%s", inner[0]);
        }
        t->used = at;
        ext = extent_of(types[0]);
        member_displs(rng, n, bl * (ext > 0 ? ext : 1), true, opt, displs);
        for (int i = 0; i < n; i++) {
            bls64[i] = bls[i] = bl;
            adispl[i] = displs[i];
        }
        put(t, "struct(");
        put_list(t, bls64, n);
        put(t, ",");
        put_list(t, displs, n);
        put(t, ",{");
        for (int i = 0; i < n; i++)
            put(t, "%s%s", i ? "," : "", inner[i]);
        put(t, "}");
        if (large(rng, opt))
            LARGE(MPI_Count cb[4]; MPI_Count cd[4];
                  for (int i = 0; i < n; i++) cb[i] = bls[i], cd[i] = displs[i];
                  MPI_Type_create_struct_c(n, cb, cd, types, &out));
        else
            MPI_Type_create_struct(n, bls, adispl, types, &out);
        for (int i = 1; i < built; i++)
            MPI_Type_free(&types[i]);
        child = types[0];
        break;
    }
    }
    put(t, ")");
    MPI_Type_free(&child);
    return out;
}

static MPI_Datatype build(rt_rng_t *rng, const rt_options_t *opt, int depth, text_t *t)
{
    if (depth >= opt->max_depth || rt_range(rng, 0, 4) == 0) {
        const named_t *nm = pick_named(rng);
        MPI_Datatype dup;
        put(t, "%s", nm->name);
        /* A dup of the named type, so that every level can be freed alike. */
        MPI_Type_dup(nm->type, &dup);
        /* The text says the named type, not dup: dup changes nothing. */
        return dup;
    }
    return build_derived(rng, opt, depth, t);
}

MPI_Datatype rt_random_type(rt_rng_t *rng, const rt_options_t *opt, char *desc, size_t len)
{
    text_t t = {desc, len, 0};
    MPI_Datatype type;
    MPI_Aint lb, extent;
    MPI_Count size;

    desc[0] = '\0';
    type = build(rng, opt, 0, &t);
    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent(type, &lb, &extent);
    if (size > opt->max_size || extent > opt->max_span || t.used >= len) {
        MPI_Type_free(&type);
        return MPI_DATATYPE_NULL;
    }
    MPI_Type_commit(&type);
    return type;
}

MPI_Datatype rt_draw_type(rt_rng_t *rng, const rt_options_t *opt, char *desc, size_t len)
{
    MPI_Datatype t;
    while ((t = rt_random_type(rng, opt, desc, len)) == MPI_DATATYPE_NULL)
        ;
    return t;
}

bool rt_large_unavailable(const rt_options_t *opt)
{
#if MPI_VERSION < 4
    if (opt->large_percent > 0) {
        printf("SKIP: this MPI has no large-count constructors\n");
        return true;
    }
#else
    (void)opt;
#endif
    return false;
}

MPI_Datatype rt_family_type(rt_rng_t *rng, const rt_options_t *opt, int families, uint64_t seed,
                            char *desc, size_t len)
{
    int64_t f = rt_range(rng, 0, families - 1);
    int wraps = (int)rt_range(rng, 0, 3);
    rt_rng_t frng;
    MPI_Datatype type;
    char *inner = malloc(len);

    if (inner == NULL)
        return MPI_DATATYPE_NULL;
    rt_seed(&frng, seed * 1000003 + (uint64_t)f);
    type = rt_draw_type(&frng, opt, desc, len);
    for (int w = 0; w < wraps; w++) {
        MPI_Datatype out = MPI_DATATYPE_NULL;
        MPI_Aint lb, ext, zero = 0, stride = (MPI_Aint)rt_range(rng, -64, 64);
        int one = 1, izero = 0, istride = (int)stride;
        snprintf(inner, len, "%s", desc);
        MPI_Type_get_extent(type, &lb, &ext);
        switch (rt_range(rng, 0, 7)) {
        case 0:
            MPI_Type_dup(type, &out);
            snprintf(desc, len, "dup(%s)", inner);
            break;
        case 1:
            MPI_Type_contiguous(1, type, &out);
            snprintf(desc, len, "contiguous(1,%s)", inner);
            break;
        case 2:
            MPI_Type_create_struct(1, &one, &zero, &type, &out);
            snprintf(desc, len, "struct({1},{0},{%s})", inner);
            break;
        case 3:
            MPI_Type_vector(1, 1, istride, type, &out);
            snprintf(desc, len, "vector(1,1,%d,%s)", istride, inner);
            break;
        case 4:
            MPI_Type_create_hvector(1, 1, stride, type, &out);
            snprintf(desc, len, "hvector(1,1,%lld,%s)", (long long)stride, inner);
            break;
        case 5:
            MPI_Type_create_indexed_block(1, 1, &izero, type, &out);
            snprintf(desc, len, "indexed_block(1,{0},%s)", inner);
            break;
        case 6:
            MPI_Type_create_hindexed(1, &one, &zero, type, &out);
            snprintf(desc, len, "hindexed({1},{0},%s)", inner);
            break;
        default:
            MPI_Type_create_resized(type, lb, ext, &out);
            snprintf(desc, len, "resized(%lld,%lld,%s)", (long long)lb, (long long)ext, inner);
            break;
        }
        MPI_Type_free(&type);
        type = out;
    }
    free(inner);
    if (wraps > 0)
        MPI_Type_commit(&type);
    return type;
}
