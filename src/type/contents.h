/* A datatype's constructor and arguments, through MPI_Type_get_envelope and
 * MPI_Type_get_contents: the one place typejit's translations ask MPI what a type is made of. */
#ifndef TJ_TYPE_CONTENTS_H
#define TJ_TYPE_CONTENTS_H

#include <mpi.h>
#include <stdbool.h>

#include "typejit.h"

/* One constructor call by its arguments: what MPI_Type_get_contents would give, with the member
 * arrays by pointer (the caller's own), so that a constructor wrapper copies nothing. */
typedef struct {
    int combiner;                         /* MPI_COMBINER_* */
    int count;                            /* count; subarray, darray: ndims */
    int blocklen;                         /* vector, hvector, indexed_block, hindexed_block */
    MPI_Aint stride;                      /* vector: elements; hvector: bytes */
    const int *blocklens;                 /* indexed, hindexed, struct */
    const int *displs;                    /* indexed, indexed_block: elements */
    const MPI_Aint *bdispls;              /* hindexed, hindexed_block, struct: bytes */
    const MPI_Datatype *types;            /* struct: one per member */
    const int *sizes, *subsizes, *starts; /* subarray */
    int order;                            /* subarray, darray: MPI_ORDER_C or MPI_ORDER_FORTRAN */
    int nprocs, rank;                     /* darray: the group's size and the rank */
    const int *distribs, *dargs, *psizes; /* darray (its gsizes are `sizes`) */
    MPI_Datatype child;                   /* every combiner but struct */
} tj_type_args_t;

/* Arguments of one constructor level. Small argument lists (the common case) live inside the
 * struct; larger ones are allocated. */
#define TJ_CONTENTS_SMALL 32

typedef struct {
    int combiner;
    int ni, na, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Datatype *types;
    int ints_small[TJ_CONTENTS_SMALL];
    MPI_Aint addrs_small[TJ_CONTENTS_SMALL];
    MPI_Datatype types_small[TJ_CONTENTS_SMALL];
} tj_contents_t;

/* Whether @p combiner is a named type's (Open MPI declares the combiners as enum values, so no
 * #ifdef can test them). */
bool tj_contents_is_named(int combiner);

/* The envelope and, for a derived type, the contents of @p type. TJ_ERR_MPI or TJ_ERR_NOMEM;
 * on success tj_contents_free releases what it holds. */
tj_status_t tj_contents_get(MPI_Datatype type, tj_contents_t *c);

/* Free the derived child handles MPI_Type_get_contents returned, and the arrays. */
void tj_contents_free(tj_contents_t *c);

/* The constructor arguments, as a wrapper sees them (pointing into @p c). */
void tj_contents_args(const tj_contents_t *c, tj_type_args_t *a);

#endif /* TJ_TYPE_CONTENTS_H */
