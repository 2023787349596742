/* SPDX-License-Identifier: BSD-3-Clause */
/* The families of collectives and reductions and their arguments, written once: coll.c,
 * reduce.c, persist.c and fortran_coll.c make a family's blocking, non-blocking and persistent
 * wrappers, in their int and large-count forms, and its Fortran entry points from these lists. */
#ifndef TJ_INTERPOSE_COLL_ARGS_H
#define TJ_INTERPOSE_COLL_ARGS_H

#include <mpi.h>

/* A family's arguments before the communicator, in order: _A(role, name) each, the name also
 * the field of tj_coll_call_t (calls/coll_sides.h) or tj_red_call_t (calls/reduce.h) that the
 * argument fills. */

/* One side of a collective, @p _x s (send) or r (receive): its buffer, of role @p _b, then one
 * count and type (ONE); counts, displacements in elements and a type (V); counts, displacements
 * (in bytes: Alltoallw's) and a type per peer (W); counts, MPI_Aint byte displacements and a type
 * per peer (W_AINT: Neighbor_alltoallw's, in every form). */
#define TJ_SIDE_ONE(_A, _b, _x) _A(_b, _x##buf) _A(COUNT, _x##count) _A(TYPE, _x##type)
#define TJ_SIDE_V(_A, _b, _x)                                                                      \
    _A(_b, _x##buf) _A(COUNTS, _x##counts) _A(DISPLS, _x##displs) _A(TYPE, _x##type)
#define TJ_SIDE_W(_A, _b, _x)                                                                      \
    _A(_b, _x##buf) _A(COUNTS, _x##counts) _A(DISPLS, _x##displs) _A(TYPES, _x##types)
#define TJ_SIDE_W_AINT(_A, _b, _x)                                                                 \
    _A(_b, _x##buf) _A(COUNTS, _x##counts) _A(ADISPLS, _x##adispls) _A(TYPES, _x##types)

/* The collectives: Allgather, Alltoall and their neighbourhood forms share one list, and so do
 * Allgatherv and Alltoallv with theirs. Scatter's receive buffer takes MPI_IN_PLACE; Bcast's
 * buffer, count and type are the send side's. */
#define TJ_ARGS_ALLGATHER(_A)          TJ_SIDE_ONE(_A, SBUF, s) TJ_SIDE_ONE(_A, RBUF, r)
#define TJ_ARGS_ALLGATHERV(_A)         TJ_SIDE_ONE(_A, SBUF, s) TJ_SIDE_V(_A, RBUF, r)
#define TJ_ARGS_ALLTOALLV(_A)          TJ_SIDE_V(_A, SBUF, s) TJ_SIDE_V(_A, RBUF, r)
#define TJ_ARGS_ALLTOALLW(_A)          TJ_SIDE_W(_A, SBUF, s) TJ_SIDE_W(_A, RBUF, r)
#define TJ_ARGS_NEIGHBOR_ALLTOALLW(_A) TJ_SIDE_W_AINT(_A, SBUF, s) TJ_SIDE_W_AINT(_A, RBUF, r)
#define TJ_ARGS_GATHER(_A)             TJ_ARGS_ALLGATHER(_A) _A(ROOT, root)
#define TJ_ARGS_GATHERV(_A)            TJ_ARGS_ALLGATHERV(_A) _A(ROOT, root)
#define TJ_ARGS_SCATTER(_A)                                                                        \
    TJ_SIDE_ONE(_A, SCATTER_SBUF, s) TJ_SIDE_ONE(_A, SCATTER_RBUF, r) _A(ROOT, root)
#define TJ_ARGS_SCATTERV(_A)                                                                       \
    TJ_SIDE_V(_A, SCATTER_SBUF, s) TJ_SIDE_ONE(_A, SCATTER_RBUF, r) _A(ROOT, root)
#define TJ_ARGS_BCAST(_A) TJ_SIDE_ONE(_A, BUF, s) _A(ROOT, root)

/* The reductions: one count (Allreduce, Reduce_scatter_block: each rank's block, Scan, Exscan),
 * one count and a root (Reduce), the count of each rank (Reduce_scatter). */
#define TJ_ARGS_ALLREDUCE(_A)                                                                      \
    _A(SBUF, sbuf) _A(RBUF, rbuf) _A(COUNT, count) _A(TYPE, type) _A(OP, op)
#define TJ_ARGS_REDUCE(_A) TJ_ARGS_ALLREDUCE(_A) _A(ROOT, root)
#define TJ_ARGS_REDUCE_SCATTER(_A)                                                                 \
    _A(SBUF, sbuf) _A(RBUF, rbuf) _A(COUNTS, rcounts) _A(TYPE, type) _A(OP, op)

/* What each role is in C, for a form whose counts are _cnt and displacements _disp (int and
 * int, or MPI_Count and MPI_Aint). */
#define TJ_C_SBUF(_cnt, _disp)         const void * /* the send buffer, or MPI_IN_PLACE */
#define TJ_C_RBUF(_cnt, _disp)         void *       /* the receive buffer */
#define TJ_C_SCATTER_SBUF(_cnt, _disp) const void * /* never MPI_IN_PLACE */
#define TJ_C_SCATTER_RBUF(_cnt, _disp) void *       /* or MPI_IN_PLACE, at the root */
#define TJ_C_BUF(_cnt, _disp)          void *       /* read at the root, written elsewhere */
#define TJ_C_COUNT(_cnt, _disp)        _cnt
#define TJ_C_COUNTS(_cnt, _disp)       const _cnt *
#define TJ_C_DISPLS(_cnt, _disp)       const _disp *
#define TJ_C_ADISPLS(_cnt, _disp)      const MPI_Aint *
#define TJ_C_TYPE(_cnt, _disp)         MPI_Datatype
#define TJ_C_TYPES(_cnt, _disp)        const MPI_Datatype *
#define TJ_C_ROOT(_cnt, _disp)         int
#define TJ_C_OP(_cnt, _disp)           MPI_Op

/* What follows a family's arguments in each kind of call: the communicator, then the request of
 * a non-blocking call, the info and the request of a persistent collective's init. */
#define TJ_TAIL_PARAMS_BLOCKING    MPI_Comm comm
#define TJ_TAIL_PARAMS_NONBLOCKING MPI_Comm comm, MPI_Request *req
#define TJ_TAIL_PARAMS_PERSISTENT  MPI_Comm comm, MPI_Info info, MPI_Request *req
#define TJ_TAIL_NAMES_BLOCKING     comm
#define TJ_TAIL_NAMES_NONBLOCKING  comm, req
#define TJ_TAIL_NAMES_PERSISTENT   comm, info, req

/* A family's arguments @p _args in a call of kind @p _call (BLOCKING, NONBLOCKING, PERSISTENT):
 * as the parameters of a wrapper in its int form (@p _s empty) or its large-count form (@p _s
 * `_c`), and as the arguments it passes on; and, with the communicator, as the fields of the
 * call it describes. */
#define TJ_PARAMS(_args, _s, _call) _args(TJ_PARAM##_s) TJ_TAIL_PARAMS_##_call
#define TJ_PARAM(_role, _name)      TJ_C_##_role(int, int) _name,
#define TJ_PARAM_c(_role, _name)    TJ_C_##_role(MPI_Count, MPI_Aint) _name,
#define TJ_NAMES(_args, _call)      _args(TJ_NAME) TJ_TAIL_NAMES_##_call
#define TJ_NAME(_role, _name)       _name,
#define TJ_FIELDS(_args)            .comm = comm _args(TJ_FIELD)
#define TJ_FIELD(_role, _name)      , ._name = _name

/* A family's blocking and non-blocking wrappers (TJ_WRAPPER, interpose/wrappers.h), in the int
 * (@p _s empty) or large-count (_c, @p _large) form: each fills a @p _call_t with its arguments
 * and hands it to @p _take(call, request or NULL, &rc), and when that returns false passes the
 * application's arguments to the system MPI's call. */
#define TJ_FAMILY_WRAPPERS(_call_t, _take, _s, _large, _name, _iname, _kind, _args)                \
    int TJ_WRAPPER(MPI_##_name##_s)(TJ_PARAMS(_args, _s, BLOCKING))                                \
    {                                                                                              \
        TJ_FAMILY_RUN(_call_t, _take, _kind, _large, _args, NULL,                                  \
                      PMPI_##_name##_s(TJ_NAMES(_args, BLOCKING)));                                \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(TJ_PARAMS(_args, _s, NONBLOCKING))                            \
    {                                                                                              \
        TJ_FAMILY_RUN(_call_t, _take, _kind, _large, _args, req,                                   \
                      PMPI_##_iname##_s(TJ_NAMES(_args, NONBLOCKING)));                            \
    }
#define TJ_FAMILY_RUN(_call_t, _take, _kind, _large, _args, _req, _pass)                           \
    do {                                                                                           \
        _call_t c = {.kind = _kind, .large = _large, TJ_FIELDS(_args)};                            \
        int rc;                                                                                    \
        if (_take(&c, _req, &rc))                                                                  \
            return rc;                                                                             \
        return _pass;                                                                              \
    } while (0)

/* The families of collectives: _X(Name, Iname, lower, UPPER, kind, args) makes MPI_Name, its
 * non-blocking MPI_Iname and persistent MPI_Name_init, each of calls/coll.h's kind and with the
 * arguments args, and their Fortran entry points mpi_lower (MPI_UPPER) and mpi_ilower. Those
 * with an array of types (the W families) have one written Fortran function each, for both
 * forms. */
#define TJ_COLL_FAMILIES(_X)                                                                       \
    _X(Alltoall, Ialltoall, alltoall, ALLTOALL, TJ_COLL_ALLTOALL, TJ_ARGS_ALLGATHER)               \
    _X(Neighbor_alltoall, Ineighbor_alltoall, neighbor_alltoall, NEIGHBOR_ALLTOALL,                \
       TJ_COLL_NEIGHBOR_ALLTOALL, TJ_ARGS_ALLGATHER)                                               \
    _X(Neighbor_allgather, Ineighbor_allgather, neighbor_allgather, NEIGHBOR_ALLGATHER,            \
       TJ_COLL_NEIGHBOR_ALLGATHER, TJ_ARGS_ALLGATHER)                                              \
    _X(Allgather, Iallgather, allgather, ALLGATHER, TJ_COLL_ALLGATHER, TJ_ARGS_ALLGATHER)          \
    _X(Allgatherv, Iallgatherv, allgatherv, ALLGATHERV, TJ_COLL_ALLGATHERV, TJ_ARGS_ALLGATHERV)    \
    _X(Neighbor_allgatherv, Ineighbor_allgatherv, neighbor_allgatherv, NEIGHBOR_ALLGATHERV,        \
       TJ_COLL_NEIGHBOR_ALLGATHERV, TJ_ARGS_ALLGATHERV)                                            \
    _X(Alltoallv, Ialltoallv, alltoallv, ALLTOALLV, TJ_COLL_ALLTOALLV, TJ_ARGS_ALLTOALLV)          \
    _X(Neighbor_alltoallv, Ineighbor_alltoallv, neighbor_alltoallv, NEIGHBOR_ALLTOALLV,            \
       TJ_COLL_NEIGHBOR_ALLTOALLV, TJ_ARGS_ALLTOALLV)                                              \
    _X(Gather, Igather, gather, GATHER, TJ_COLL_GATHER, TJ_ARGS_GATHER)                            \
    _X(Scatter, Iscatter, scatter, SCATTER, TJ_COLL_SCATTER, TJ_ARGS_SCATTER)                      \
    _X(Gatherv, Igatherv, gatherv, GATHERV, TJ_COLL_GATHERV, TJ_ARGS_GATHERV)                      \
    _X(Scatterv, Iscatterv, scatterv, SCATTERV, TJ_COLL_SCATTERV, TJ_ARGS_SCATTERV)                \
    _X(Bcast, Ibcast, bcast, BCAST, TJ_COLL_BCAST, TJ_ARGS_BCAST)
#define TJ_COLL_W_FAMILIES(_X)                                                                     \
    _X(Alltoallw, Ialltoallw, alltoallw, ALLTOALLW, TJ_COLL_ALLTOALLW, TJ_ARGS_ALLTOALLW)          \
    _X(Neighbor_alltoallw, Ineighbor_alltoallw, neighbor_alltoallw, NEIGHBOR_ALLTOALLW,            \
       TJ_COLL_NEIGHBOR_ALLTOALLW, TJ_ARGS_NEIGHBOR_ALLTOALLW)

/* The families of reductions, as the collectives' (kinds of calls/reduce.h). */
#define TJ_RED_FAMILIES(_X)                                                                        \
    _X(Reduce, Ireduce, reduce, REDUCE, TJ_RED_REDUCE, TJ_ARGS_REDUCE)                             \
    _X(Allreduce, Iallreduce, allreduce, ALLREDUCE, TJ_RED_ALLREDUCE, TJ_ARGS_ALLREDUCE)           \
    _X(Reduce_scatter_block, Ireduce_scatter_block, reduce_scatter_block, REDUCE_SCATTER_BLOCK,    \
       TJ_RED_REDUCE_SCATTER_BLOCK, TJ_ARGS_ALLREDUCE)                                             \
    _X(Scan, Iscan, scan, SCAN, TJ_RED_SCAN, TJ_ARGS_ALLREDUCE)                                    \
    _X(Exscan, Iexscan, exscan, EXSCAN, TJ_RED_EXSCAN, TJ_ARGS_ALLREDUCE)                          \
    _X(Reduce_scatter, Ireduce_scatter, reduce_scatter, REDUCE_SCATTER, TJ_RED_REDUCE_SCATTER,     \
       TJ_ARGS_REDUCE_SCATTER)

#endif /* TJ_INTERPOSE_COLL_ARGS_H */
