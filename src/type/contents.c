/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's constructor call from the system MPI's introspection (see contents.h): the
 * large-count calls where the MPI has them, and both layouts of the contents decoded into one
 * set of 64-bit arguments. */
#include "type/contents.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "type/state.h"

/* ---- the calls ------------------------------------------------------------------------------
 * An MPI of version 4 or later has MPI_Type_get_envelope_c and MPI_Type_get_contents_c; an
 * earlier header may still be in front of a library that has them (a build against Open MPI
 * 5.0 run in front of a later Open MPI): they are looked up once. Every type that can have
 * large counts is made by a library that has them. */
#if MPI_VERSION >= 4
#define envelope_c PMPI_Type_get_envelope_c
#define contents_c PMPI_Type_get_contents_c
static bool have_large(void)
{
    return true;
}
#else
#define envelope_c tj_type_state.contents.envelope_c
#define contents_c tj_type_state.contents.contents_c

static void large_load(void)
{
    tj_envelope_c_fn e = (tj_envelope_c_fn)dlsym(RTLD_DEFAULT, "PMPI_Type_get_envelope_c");
    tj_contents_c_fn c = (tj_contents_c_fn)dlsym(RTLD_DEFAULT, "PMPI_Type_get_contents_c");
    if (e != NULL && c != NULL)
        envelope_c = e, contents_c = c;
}

static bool have_large(void)
{
    pthread_once(&tj_type_state.contents.large_once, large_load);
    return envelope_c != NULL;
}
#endif

bool tj_contents_large(void)
{
    return have_large();
}

bool tj_combiner_named(int combiner)
{
    /* Open MPI declares the combiners as enum values, not macros: no #ifdef can test them. */
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

bool tj_envelope_get(MPI_Datatype type, tj_envelope_t *env)
{
    int ni, na, nd;

    if (type == MPI_DATATYPE_NULL)
        return false;
    if (have_large())
        return envelope_c(type, &env->ni, &env->na, &env->nc, &env->nd, &env->combiner) ==
               MPI_SUCCESS;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &env->combiner) != MPI_SUCCESS)
        return false;
    env->ni = ni, env->na = na, env->nc = 0, env->nd = nd;
    return true;
}

void tj_envelope_of(const tj_type_args_t *a, tj_envelope_t *e)
{
    MPI_Count n = a->count, kept = 0;

    e->combiner = a->combiner;
    e->ni = e->na = e->nc = 0;
    e->nd = 1;
    /* The MPI-3 form: integers and addresses. */
    switch (a->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        e->ni = 1;
        break;
    case MPI_COMBINER_VECTOR:
        e->ni = 3;
        break;
    case MPI_COMBINER_HVECTOR:
        e->ni = 2, e->na = 1;
        break;
    case MPI_COMBINER_INDEXED:
        e->ni = 2 * n + 1;
        break;
    case MPI_COMBINER_HINDEXED:
        e->ni = n + 1, e->na = n;
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        e->ni = n + 2;
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        e->ni = 2, e->na = n;
        break;
    case MPI_COMBINER_STRUCT:
        e->ni = n + 1, e->na = n, e->nd = n;
        break;
    case MPI_COMBINER_SUBARRAY:
        e->ni = 3 * n + 2;
        kept = 2; /* ndims, order */
        break;
    case MPI_COMBINER_DARRAY:
        e->ni = 4 * n + 4;
        kept = 3 * n + 4; /* size, rank, ndims, distribs, dargs, psizes, order */
        break;
    case MPI_COMBINER_RESIZED:
        e->na = 2;
        break;
    case MPI_COMBINER_DUP:
        break;
    default: /* a combiner typejit does not translate: nothing is read */
        e->nd = 0;
        break;
    }
    /* The `_c` form: every integer and address is a count, but the integers that stay ints in
     * the large-count constructor. */
    if (a->large) {
        e->nc = e->ni - kept + e->na;
        e->ni = kept;
        e->na = 0;
    }
}

/* ---- decoding --------------------------------------------------------------------------------
 * MPI_Type_get_contents lays a constructor's arguments out in the integer and address arrays
 * for the MPI-3 forms, and in the count array (with only ndims, order and the darray
 * distribution in the integer one) for the `_c` forms. */

/* Whether the arrays the MPI reported are at least what the combiner's layout reads. */
static bool fits(const tj_contents_t *c)
{
    tj_envelope_t want;
    const tj_envelope_t *e = &c->env;
    tj_envelope_of(&c->args, &want);
    return e->ni >= want.ni && e->na >= want.na && e->nc >= want.nc && e->nd >= want.nd;
}

static tj_status_t decode(tj_contents_t *c)
{
    tj_type_args_t *a = &c->args;
    const int *in = c->ints;
    const MPI_Count *cn = c->counts;
    bool l = c->env.nc > 0;

    *a = (tj_type_args_t){.combiner = c->env.combiner, .large = l};
    if (c->env.nd > 0)
        a->child = c->types[0];
    /* The count comes first in either layout; subarray and darray keep ndims in the integers. */
    if (a->combiner == MPI_COMBINER_SUBARRAY)
        a->count = c->env.ni > 0 ? in[0] : 0;
    else if (a->combiner == MPI_COMBINER_DARRAY)
        a->count = c->env.ni > 2 ? in[2] : 0;
    else if (a->combiner == MPI_COMBINER_RESIZED || a->combiner == MPI_COMBINER_DUP)
        a->count = 0; /* no count: a resized type's first large count is its lower bound */
    else if (l)
        a->count = cn[0];
    else if (c->env.ni > 0)
        a->count = in[0];
    if (a->count < 0)
        return TJ_ERR_MPI;
    if (!fits(c))
        return TJ_ERR_MPI;
    switch (a->combiner) {
    case MPI_COMBINER_VECTOR:
        a->blocklen = l ? cn[1] : in[1];
        a->stride = l ? cn[2] : in[2];
        break;
    case MPI_COMBINER_HVECTOR:
        a->blocklen = l ? cn[1] : in[1];
        a->stride = l ? cn[2] : c->addrs[0];
        break;
    case MPI_COMBINER_SUBARRAY: {
        const void *base = l ? (const void *)cn : (const void *)&in[1];
        tj_array_kind_t k = l ? TJ_ARRAY_COUNT : TJ_ARRAY_INT;
        size_t w = l ? sizeof(MPI_Count) : sizeof(int);
        a->sizes = (tj_array_t){base, k};
        a->subsizes = (tj_array_t){(const char *)base + (size_t)a->count * w, k};
        a->starts = (tj_array_t){(const char *)base + 2 * (size_t)a->count * w, k};
        a->order = l ? in[1] : in[1 + 3 * a->count];
        break;
    }
    case MPI_COMBINER_DARRAY: {
        /* size, rank, ndims, then gsizes (in the counts for the `_c` form), distribs, dargs,
         * psizes, order. */
        const int *d = l ? &in[3] : &in[3 + a->count];
        a->nprocs = in[0], a->rank = in[1];
        a->sizes = l ? TJ_ARRAY_OF_COUNT(cn) : TJ_ARRAY_OF_INT(&in[3]);
        a->distribs = TJ_ARRAY_OF_INT(d);
        a->dargs = TJ_ARRAY_OF_INT(d + a->count);
        a->psizes = TJ_ARRAY_OF_INT(d + 2 * a->count);
        a->order = d[3 * a->count];
        break;
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        a->blocklen = l ? cn[1] : in[1];
        if (a->combiner == MPI_COMBINER_INDEXED_BLOCK)
            a->displs = l ? TJ_ARRAY_OF_COUNT(&cn[2]) : TJ_ARRAY_OF_INT(&in[2]);
        else
            a->bdispls = l ? TJ_ARRAY_OF_COUNT(&cn[2]) : TJ_ARRAY_OF_AINT(c->addrs);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        a->blocklens = l ? TJ_ARRAY_OF_COUNT(&cn[1]) : TJ_ARRAY_OF_INT(&in[1]);
        if (a->combiner == MPI_COMBINER_INDEXED)
            a->displs =
                l ? TJ_ARRAY_OF_COUNT(&cn[1 + a->count]) : TJ_ARRAY_OF_INT(&in[1 + a->count]);
        else
            a->bdispls = l ? TJ_ARRAY_OF_COUNT(&cn[1 + a->count]) : TJ_ARRAY_OF_AINT(c->addrs);
        a->types = c->types;
        break;
    default:
        break;
    }
    return TJ_OK;
}

/* ---- contents -------------------------------------------------------------------------------- */

void tj_contents_free(tj_contents_t *c)
{
    /* get_contents returns new handles for derived children; named ones must not be freed.
     * A struct of a million members usually repeats one type: ask about each handle once. */
    MPI_Datatype last = MPI_DATATYPE_NULL;
    bool last_named = true;
    for (MPI_Count i = 0; i < c->env.nd; i++) {
        tj_envelope_t e;
        MPI_Datatype t = c->types[i];
        if (t != last || i == 0) {
            last = t;
            last_named = !tj_envelope_get(t, &e) || tj_combiner_named(e.combiner);
        }
        if (!last_named)
            PMPI_Type_free(&c->types[i]);
    }
    if (c->ints != c->ints_small)
        free(c->ints);
    if (c->addrs != c->addrs_small)
        free(c->addrs);
    if (c->counts != c->counts_small)
        free(c->counts);
    if (c->types != c->types_small)
        free(c->types);
}

#define ARRAY(_c, _field, _n)                                                                      \
    ((_n) <= TJ_CONTENTS_SMALL ? (_c)->_field##_small                                              \
                               : malloc((size_t)(_n) * sizeof(*(_c)->_field)))

tj_status_t tj_contents_get(MPI_Datatype type, tj_contents_t *c)
{
    tj_envelope_t *e = &c->env;
    int rc;

    if (!tj_envelope_get(type, e))
        return TJ_ERR_MPI;
    c->ints = c->ints_small, c->addrs = c->addrs_small, c->counts = c->counts_small;
    c->types = c->types_small;
    if (tj_combiner_named(e->combiner)) {
        c->env.nd = 0;
        c->args = (tj_type_args_t){.combiner = e->combiner};
        return TJ_OK;
    }
    if (e->ni < 0 || e->na < 0 || e->nc < 0 || e->nd < 0 || (size_t)e->ni > SIZE_MAX / 8 ||
        (size_t)e->na > SIZE_MAX / 8 || (size_t)e->nc > SIZE_MAX / 8 ||
        (size_t)e->nd > SIZE_MAX / 8 || (e->nc > 0 && !have_large()))
        return TJ_ERR_MPI;
    MPI_Count nd = e->nd;
    e->nd = 0; /* nothing to free yet */
    c->ints = ARRAY(c, ints, e->ni);
    c->addrs = ARRAY(c, addrs, e->na);
    c->counts = ARRAY(c, counts, e->nc);
    c->types = ARRAY(c, types, nd);
    if (c->ints == NULL || c->addrs == NULL || c->counts == NULL || c->types == NULL) {
        tj_contents_free(c);
        return TJ_ERR_NOMEM;
    }
    if (have_large())
        rc = contents_c(type, e->ni, e->na, e->nc, nd, c->ints, c->addrs, c->counts, c->types);
    else
        rc = PMPI_Type_get_contents(type, (int)e->ni, (int)e->na, (int)nd, c->ints, c->addrs,
                                    c->types);
    if (rc != MPI_SUCCESS) {
        tj_contents_free(c);
        return TJ_ERR_MPI;
    }
    e->nd = nd;
    if (decode(c) != TJ_OK) {
        tj_contents_free(c);
        return TJ_ERR_MPI;
    }
    return TJ_OK;
}

tj_status_t tj_contents_new(MPI_Datatype type, tj_contents_t **out)
{
    tj_contents_t *c = malloc(sizeof(*c));
    tj_status_t st;

    if (c == NULL)
        return TJ_ERR_NOMEM;
    if ((st = tj_contents_get(type, c)) != TJ_OK) {
        free(c);
        return st;
    }
    *out = c;
    return TJ_OK;
}

void tj_contents_delete(tj_contents_t *c)
{
    tj_contents_free(c);
    free(c);
}
