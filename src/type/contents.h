/* SPDX-License-Identifier: BSD-3-Clause */
/* A datatype's constructor call, as the application made it or as the system MPI reports it
 * (MPI_Type_get_envelope and MPI_Type_get_contents), by the large-count calls where the MPI has
 * them, so that a type made by an MPI-4 `_c` constructor is read like any other and no question
 * typejit asks can reach the application's error handler. */
#ifndef TJ_TYPE_CONTENTS_H
#define TJ_TYPE_CONTENTS_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "typejit.h"

/* An array of a constructor's arguments by pointer, in the width the constructor took: int
 * (the MPI-3 forms), MPI_Aint (byte displacements) or MPI_Count (the `_c` forms); int64_t for
 * typejit's own values. */
typedef enum { TJ_ARRAY_INT, TJ_ARRAY_AINT, TJ_ARRAY_COUNT, TJ_ARRAY_INT64 } tj_array_kind_t;

typedef struct {
    const void *p;
    tj_array_kind_t kind;
} tj_array_t;

#define TJ_ARRAY_OF_INT(_p)   ((tj_array_t){(_p), TJ_ARRAY_INT})
#define TJ_ARRAY_OF_AINT(_p)  ((tj_array_t){(_p), TJ_ARRAY_AINT})
#define TJ_ARRAY_OF_COUNT(_p) ((tj_array_t){(_p), TJ_ARRAY_COUNT})
#define TJ_ARRAY_OF_INT64(_p) ((tj_array_t){(_p), TJ_ARRAY_INT64})

static inline int64_t tj_array_at(tj_array_t a, int64_t i)
{
    switch (a.kind) {
    case TJ_ARRAY_INT:
        return ((const int *)a.p)[i];
    case TJ_ARRAY_AINT:
        return ((const MPI_Aint *)a.p)[i];
    case TJ_ARRAY_INT64:
        return ((const int64_t *)a.p)[i];
    default:
        return ((const MPI_Count *)a.p)[i];
    }
}

/* One constructor call by its arguments: what MPI_Type_get_contents would give, with the member
 * arrays by pointer (the caller's own), so that a constructor wrapper copies nothing. Scalars
 * are 64-bit whatever the form. */
typedef struct {
    int combiner;              /* MPI_COMBINER_* */
    bool large;                /* made by a `_c` constructor (its contents have large counts) */
    int64_t count;             /* count; subarray and darray: ndims */
    int64_t blocklen;          /* vector, hvector, indexed_block, hindexed_block */
    int64_t stride;            /* vector: elements; hvector: bytes */
    tj_array_t blocklens;      /* indexed, hindexed, struct */
    tj_array_t displs;         /* indexed, indexed_block: elements */
    tj_array_t bdispls;        /* hindexed, hindexed_block, struct: bytes */
    const MPI_Datatype *types; /* struct: one per member */
    tj_array_t sizes, subsizes, starts; /* subarray; darray: its gsizes are `sizes` */
    int order;                          /* subarray, darray: MPI_ORDER_C or MPI_ORDER_FORTRAN */
    int64_t nprocs, rank;               /* darray: the group's size and the rank */
    tj_array_t distribs, dargs, psizes; /* darray (int arrays in either form) */
    MPI_Datatype child;                 /* every combiner but struct */
} tj_type_args_t;

/* What MPI_Type_get_envelope(_c) reports: the lengths of the four argument arrays. */
typedef struct {
    int combiner;
    MPI_Count ni, na, nc, nd;
} tj_envelope_t;

/* The envelope of @p type, by MPI_Type_get_envelope_c where the MPI has it (MPI_VERSION >= 4,
 * or found in the MPI library at run time), else MPI_Type_get_envelope. False when the MPI
 * refuses: never for a valid handle (the int form refuses a large-count type in MPICH, through
 * the error handler: typejit never asks it that where the large form exists). */
bool tj_envelope_get(MPI_Datatype type, tj_envelope_t *env);

/* The envelope the system MPI reports for a type made by @p args (MPI 4.1, section 5.1.13),
 * worked out without asking it: it tells a record from a type that MPI later put at the same
 * handle unseen. */
void tj_envelope_of(const tj_type_args_t *args, tj_envelope_t *env);

/* Whether @p combiner is a named type's (predefined, or one of the F90 parameterised ones). */
bool tj_combiner_named(int combiner);

/* Whether the large-count introspection calls are in use (for tests and the debug log). */
bool tj_contents_large(void);

/* Small argument lists (the common case) live on the stack; larger ones are allocated. */
#define TJ_CONTENTS_SMALL 32

/* A type's contents, decoded into @p args (which points into the arrays held here). */
typedef struct {
    tj_envelope_t env;
    tj_type_args_t args;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types;
    int ints_small[TJ_CONTENTS_SMALL];
    MPI_Aint addrs_small[TJ_CONTENTS_SMALL];
    MPI_Count counts_small[TJ_CONTENTS_SMALL];
    MPI_Datatype types_small[TJ_CONTENTS_SMALL];
} tj_contents_t;

/* The contents of @p type: its envelope, and for a derived type its constructor's arguments
 * (args.combiner is the envelope's; a named type has no arguments). TJ_ERR_MPI when the MPI
 * refuses or reports arrays that do not match the combiner, TJ_ERR_NOMEM. On success the caller
 * calls tj_contents_free, which frees the derived child handles the MPI returned. */
tj_status_t tj_contents_get(MPI_Datatype type, tj_contents_t *c);

void tj_contents_free(tj_contents_t *c);

/* tj_contents_get into a new record on the heap (its small arrays are too large for the stack
 * frames of a deep recursion), in *out on success; tj_contents_delete frees it. */
tj_status_t tj_contents_new(MPI_Datatype type, tj_contents_t **out);

void tj_contents_delete(tj_contents_t *c);

#endif /* TJ_TYPE_CONTENTS_H */
