/* SPDX-License-Identifier: BSD-3-Clause */
/* A collective call as typejit sees it: the application's arguments, and two sides, send and
 * receive, each a list of per-peer slices (a count of objects of one datatype at a byte offset from
 * the buffer argument), read from the application's arguments as each collective defines them
 * (counts, displacements in elements or bytes, per-peer types, roots, intercommunicators,
 * MPI_IN_PLACE, the neighbours of a process topology). The other parts of a collective work on
 * these: which sides typejit packs and how they lie in the message (coll_packed.h), moving them
 * (coll_move.h), the system MPI's call (coll_system.h), the life of a call (coll.h). */
#ifndef TJ_CALLS_COLL_SIDES_H
#define TJ_CALLS_COLL_SIDES_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda.h"
#include "move/staging.h"
#include "type/table.h"

typedef enum {
    TJ_COLL_ALLTOALL,
    TJ_COLL_ALLTOALLV,
    TJ_COLL_ALLTOALLW,
    TJ_COLL_NEIGHBOR_ALLTOALLV,
    TJ_COLL_NEIGHBOR_ALLTOALLW,
    TJ_COLL_NEIGHBOR_ALLTOALL,
    TJ_COLL_NEIGHBOR_ALLGATHER,
    TJ_COLL_NEIGHBOR_ALLGATHERV,
    TJ_COLL_ALLGATHER,
    TJ_COLL_ALLGATHERV,
    TJ_COLL_GATHER,
    TJ_COLL_GATHERV,
    TJ_COLL_SCATTER,
    TJ_COLL_SCATTERV,
    TJ_COLL_BCAST,
} tj_coll_kind_t;

/* The arguments of one collective call, as the application passed them. Per side: a single
 * count (the forms without v), or counts[] with displacements displs[] (in elements for the v
 * forms, in bytes for Alltoallw), or byte displacements adispls[] (Neighbor_alltoallw), with one
 * type per peer (types[]) for the w forms. counts[] and displs[] are int arrays, or, in the
 * large-count forms (`large`), MPI_Count and MPI_Aint arrays. MPI_Bcast's buffer, count and type
 * are the send side's. */
typedef struct {
    tj_coll_kind_t kind;
    bool large; /* the large-count form (MPI_Alltoallv_c, ...): the system MPI gets that form */
    const void *sbuf;
    int64_t scount;
    const void *scounts, *sdispls;
    const MPI_Aint *sadispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    int64_t rcount;
    const void *rcounts, *rdispls;
    const MPI_Aint *radispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    int root;
    MPI_Comm comm;
    /* The type table's record of a datatype, borrowed (the interposition layer's lookup, which
     * also records named types); NULL when there is none. */
    const tj_type_info_t *(*lookup)(MPI_Datatype type);
} tj_coll_call_t;

/* A datatype a side uses, with its record. */
typedef struct {
    MPI_Datatype type; /* the application's, or the duplicate a pending receive keeps */
    bool dup;          /* `type` is typejit's duplicate, freed on release */
    bool known;        /* `info` is the type table's record, held (else the side's own record of its
                        * extents, freed with the side) */
    const tj_type_info_t *info; /* extents always valid */
    MPI_Datatype
        packed_type; /* what the system MPI moves for one object; MPI_DATATYPE_NULL: none */
} tj_coll_type_t;

/* One peer's part of a side. */
typedef struct {
    int64_t count;
    int t;        /* index into the side's types */
    int64_t off;  /* byte offset of object 0 from the buffer argument */
    int64_t poff; /* byte offset in the packed buffer */
    bool skip;    /* an MPI_PROC_NULL neighbour: the system MPI never touches this slice */
    bool in;      /* MPI_IN_PLACE: packed before the call too */
} tj_coll_slice_t;

/* One side of a call: its slices, the types they use, and, when typejit packs it, its staging and
 * the arguments the system MPI gets instead of the application's. */
typedef struct {
    bool present; /* this rank has this side in this call */
    bool packed;  /* typejit packs it */
    bool split;   /* a slice's bytes lie in more than one allocation or memory kind */
    bool blind;   /* the driver cannot tell where the side lies: packed bytes of zeros are sent,
                   * nothing is received into it, and the call reports MPI_ERR_INTERN */
    char *buf;    /* the buffer argument */
    int n;
    tj_coll_slice_t *slices;
    tj_coll_type_t *types;
    int ntypes;
    int64_t bytes; /* packed bytes of all slices */
    tj_gpu_ctx_t ctx;
    int device;
    tj_gpu_ptr_t at; /* where the first slice that moves bytes lies (its one query) */
    tj_stage_t *stage;
    /* The arguments the system MPI gets for a packed side: counts and displacements as int
     * arrays, or MPI_Count and MPI_Aint arrays for a large-count call. One allocation, at
     * wadispls. */
    void *wcounts, *wdispls;
    MPI_Aint *wadispls;
    MPI_Datatype *wtypes;
} tj_coll_side_t;

/* A call: the application's arguments and its two sides. */
typedef struct {
    tj_coll_call_t c;
    bool inplace; /* the send side is MPI_IN_PLACE: the receive side's `in` slices go first */
    int failed;   /* a pack that failed: the call is still made, and then reports this */
    tj_coll_side_t s, r;
} tj_coll_t;

/* Which sides this rank has in the call @p x (x->c set), and their slices. False: not typejit's
 * call (arguments the system MPI must judge, or out of memory). */
bool tj_coll_sides_describe(tj_coll_t *x);

/* Release what a side holds: its staging, its records and the types of the packed bytes made for
 * it. */
void tj_coll_sides_free(tj_coll_side_t *sd);

#endif /* TJ_CALLS_COLL_SIDES_H */
