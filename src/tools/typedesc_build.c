/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype built from a constructor's checked arguments with the PMPI constructors; the members
 * of a struct written alike made one datatype. */
#include <ctype.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "typedesc_internal.h"

/* A list's values as a new array of the C type MPI takes (one element at least, so that an
 * empty list is not NULL), made once for each such type; NULL when out of memory. */
#define TO_C(_name, _type)                                                                         \
    static _type *_name(const list_t *l)                                                           \
    {                                                                                              \
        _type *v = malloc(sizeof(*v) * (size_t)(l->n > 0 ? l->n : 1));                             \
        if (v != NULL)                                                                             \
            for (int i = 0; i < l->n; i++)                                                         \
                v[i] = (_type)l->v[i];                                                             \
        return v;                                                                                  \
    }

TO_C(to_int, int)
TO_C(to_aint, MPI_Aint)

/* A member's text as it counts for likeness, into a new string: upper case, without white space,
 * comments and the MPI_ prefix of a word. NULL when out of memory. */
static char *alike_form(const node_t *n)
{
    char *out = malloc((size_t)(n->to - n->from) + 1), *o = out;
    bool word_start = true;

    if (out == NULL)
        return NULL;
    for (const char *q = n->from; q < n->to;) {
        if (*q == '#') {
            while (q < n->to && *q != '\n')
                q++;
            word_start = true;
            continue;
        }
        if (isspace((unsigned char)*q)) {
            q++;
            word_start = true;
            continue;
        }
        if (word_start && n->to - q > 4 && strncasecmp(q, "MPI_", 4) == 0 &&
            tj_typedesc_is_word_char(q[4]))
            q += 4;
        word_start = !tj_typedesc_is_word_char(*q);
        *o++ = (char)toupper((unsigned char)*q++);
    }
    *o = '\0';
    return out;
}

/* Whether every member of a struct is written alike: the struct is then made of one datatype,
 * as by a program that builds the member once and passes it for each. It matters on MPICH, whose
 * datatype engine (Yaksa) makes a struct of one datatype an hindexed, without the alignment
 * padding of a struct of distinct members, even of distinct members of one layout. */
static tj_status_t members_alike(parser_t *ps, const nodes_t *m, bool *alike)
{
    char *first, *other;
    tj_status_t status = TJ_OK;

    *alike = false;
    if (m->n < 2)
        return TJ_OK;
    if ((first = alike_form(&m->v[0])) == NULL)
        return tj_typedesc_fail(ps, m->at, TJ_ERR_NOMEM,
                                "out of memory comparing the member types");
    *alike = true;
    for (int i = 1; i < m->n && *alike; i++) {
        if ((other = alike_form(&m->v[i])) == NULL) {
            status = tj_typedesc_fail(ps, m->at, TJ_ERR_NOMEM,
                                      "out of memory comparing the member types");
            *alike = false;
            break;
        }
        *alike = strcmp(first, other) == 0;
        free(other);
    }
    free(first);
    return status;
}

/* The PMPI constructor of MPI function @p _fn, and its name for the message if it fails. */
#define CALL(_fn, ...) (call = #_fn, rc = P##_fn(__VA_ARGS__))

tj_status_t tj_typedesc_build(parser_t *ps, const args_t *args, MPI_Datatype *out)
{
    const list_t *l = args->l;
    MPI_Datatype child = args->child.type, *types = NULL;
    int *i0 = NULL, *i1 = NULL, *i2 = NULL, *i3 = NULL, rc = MPI_SUCCESS;
    MPI_Aint *a1 = NULL;
    const char *call = "";
    tj_status_t status = TJ_OK;

    /* Every list a constructor might need, converted to the C type MPI takes. */
    i0 = to_int(&l[0]);
    i1 = to_int(&l[1]);
    i2 = to_int(&l[2]);
    i3 = to_int(&l[3]);
    a1 = to_aint(&l[1]);
    types = malloc(sizeof(*types) * (size_t)(args->members.n > 0 ? args->members.n : 1));
    if (i0 == NULL || i1 == NULL || i2 == NULL || i3 == NULL || a1 == NULL || types == NULL) {
        status =
            tj_typedesc_fail(ps, args->at, TJ_ERR_NOMEM, "out of memory for the arguments of %s",
                             tj_typedesc_ctor_names[args->kind]);
        goto cleanup;
    }
    for (int i = 0; i < args->members.n; i++)
        types[i] = args->members.v[i].type;
    if (args->kind == CT_STRUCT) {
        bool alike;
        if ((status = members_alike(ps, &args->members, &alike)) != TJ_OK)
            goto cleanup;
        for (int i = 1; alike && i < args->members.n; i++)
            types[i] = types[0];
    }

    switch (args->kind) {
    case CT_CONTIGUOUS:
        CALL(MPI_Type_contiguous, (int)args->a, child, out);
        break;
    case CT_VECTOR:
        CALL(MPI_Type_vector, (int)args->a, (int)args->b, (int)args->c, child, out);
        break;
    case CT_HVECTOR:
        CALL(MPI_Type_create_hvector, (int)args->a, (int)args->b, (MPI_Aint)args->c, child, out);
        break;
    case CT_SUBARRAY:
        CALL(MPI_Type_create_subarray, l[0].n, i0, i1, i2, args->order, child, out);
        break;
    case CT_RESIZED:
        CALL(MPI_Type_create_resized, child, (MPI_Aint)args->a, (MPI_Aint)args->b, out);
        break;
    case CT_DUP:
        CALL(MPI_Type_dup, child, out);
        break;
    case CT_INDEXED_BLOCK:
        CALL(MPI_Type_create_indexed_block, l[1].n, (int)args->a, i1, child, out);
        break;
    case CT_HINDEXED_BLOCK:
        CALL(MPI_Type_create_hindexed_block, l[1].n, (int)args->a, a1, child, out);
        break;
    case CT_INDEXED:
        CALL(MPI_Type_indexed, l[0].n, i0, i1, child, out);
        break;
    case CT_HINDEXED:
        CALL(MPI_Type_create_hindexed, l[0].n, i0, a1, child, out);
        break;
    case CT_STRUCT:
        CALL(MPI_Type_create_struct, l[0].n, i0, a1, types, out);
        break;
    case CT_DARRAY:
        /* A distribution argument of 0 is the default. */
        for (int d = 0; d < l[2].n; d++)
            if (i2[d] == 0)
                i2[d] = MPI_DISTRIBUTE_DFLT_DARG;
        CALL(MPI_Type_create_darray, (int)args->a, (int)args->b, l[0].n, i0, i1, i2, i3,
             args->order, child, out);
        break;
    case CT_COUNT:
        break;
    }
    if (rc != MPI_SUCCESS)
        status = tj_typedesc_fail_mpi(ps, args->at, rc, call);
cleanup:
    free(i3);
    free(types);
    free(a1);
    free(i2);
    free(i1);
    free(i0);
    return status;
}
