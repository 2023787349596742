/* SPDX-License-Identifier: BSD-3-Clause */
/* Persistent collectives (Open MPI's MPIX_*_init extension, MPI 4.0's MPI_*_init): the request
 * they return is started and completed many times on the buffers given at the init, which an MPI
 * that is not CUDA-aware would read and write from host code. typejit does not stage them (yet):
 * with a buffer in device memory and such an MPI, the init is refused with MPI_ERR_BUFFER and
 * one error line; a CUDA-aware MPI gets it as it is, and host buffers go to the system MPI after
 * the pointer queries of their sides (none on a machine without a device). The MPI 4.0 inits
 * have large-count forms (`_c`) where the MPI has them; every form shares one definition. */
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "calls/coll.h"
#include "move/model.h"
#include "calls/reduce.h"
#include "util/mpierr.h"

#if defined(TJ_HAVE_MPIX_INIT) || defined(TJ_HAVE_MPI4)

static const char why[] = "a persistent collective on device memory with a system MPI that is not "
                          "CUDA-aware (it would read and write the buffers from host code at each "
                          "start; typejit does not stage persistent collectives)";

/* Whether the init of @p fn must be refused; errors go through the communicator's handler. */
static bool refuse_coll(const char *fn, tj_coll_call_t *c, int *rc)
{
    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return false;
    c->lookup = tj_interpose_lookup;
    if (!tj_coll_on_device(c))
        return false;
    *rc = tj_interpose_refuse(fn, why);
    tj_mpi_raise(c->comm, *rc);
    return true;
}

static bool refuse_red(const char *fn, tj_red_call_t *c, int *rc)
{
    bool on;
    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return false;
    c->info = tj_interpose_lookup(c->type);
    on = tj_reduce_on_device(c);
    tj_table_return(c->info);
    if (!on)
        return false;
    *rc = tj_interpose_refuse(fn, why);
    tj_mpi_raise(c->comm, *rc);
    return true;
}

/* Each init from one definition, for Open MPI's MPIX_ names (int counts) and MPI 4.0's MPI_ names
 * in their int and large-count forms: (prefix, suffix, count type, displacement type, large),
 * then the function's name without prefix, and what the family needs. */
#if defined(TJ_HAVE_MPIX_INIT)
#define MPIX_FORMS(_m, ...) _m(MPIX, , int, int, false, __VA_ARGS__)
#else
#define MPIX_FORMS(_m, ...)
#endif
#if defined(TJ_HAVE_MPI4)
#define MPI4_FORMS(_m, ...)                                                                        \
    _m(MPI, , int, int, false, __VA_ARGS__)                                                        \
        TJ_IF_LARGE(_m(MPI, _c, MPI_Count, MPI_Aint, true, __VA_ARGS__))
#else
#define MPI4_FORMS(_m, ...)
#endif
#define FORMS(_m, ...) MPIX_FORMS(_m, __VA_ARGS__) MPI4_FORMS(_m, __VA_ARGS__)

/* The refusal or the pass to the system MPI's own init. */
#define INIT(_refuse, _fn, _c, _pass)                                                              \
    do {                                                                                           \
        int rc;                                                                                    \
        if (_refuse(_fn, _c, &rc))                                                                 \
            return rc;                                                                             \
        return _pass;                                                                              \
    } while (0)
#define NAME(_p, _name, _s) #_p "_" #_name #_s

/* Allgather, Alltoall, Neighbor_allgather, Neighbor_alltoall: one count per side. */
#define ALLGATHER(_p, _s, _cnt, _disp, _large, _name, _kind)                                       \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, _cnt rcount, MPI_Datatype rtype, MPI_Comm comm,   \
                                     MPI_Info info, MPI_Request *req)                              \
    {                                                                                              \
        tj_coll_call_t c = {.kind = _kind,                                                         \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scount = scount,                                                      \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcount = rcount,                                                      \
                            .rtype = rtype,                                                        \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req));      \
    }
FORMS(ALLGATHER, Allgather_init, TJ_COLL_ALLGATHER)
FORMS(ALLGATHER, Alltoall_init, TJ_COLL_ALLTOALL)
FORMS(ALLGATHER, Neighbor_allgather_init, TJ_COLL_NEIGHBOR_ALLGATHER)
FORMS(ALLGATHER, Neighbor_alltoall_init, TJ_COLL_NEIGHBOR_ALLTOALL)

/* Allgatherv, Neighbor_allgatherv. */
#define ALLGATHERV(_p, _s, _cnt, _disp, _large, _name, _kind)                                      \
    int TJ_WRAPPER(_p##_##_name##_s)(                                                              \
        const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, const _cnt rcounts[],       \
        const _disp displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info, MPI_Request *req)  \
    {                                                                                              \
        tj_coll_call_t c = {.kind = _kind,                                                         \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scount = scount,                                                      \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcounts = rcounts,                                                    \
                            .rdispls = displs,                                                     \
                            .rtype = rtype,                                                        \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, info,    \
                                 req));                                                            \
    }
FORMS(ALLGATHERV, Allgatherv_init, TJ_COLL_ALLGATHERV)
FORMS(ALLGATHERV, Neighbor_allgatherv_init, TJ_COLL_NEIGHBOR_ALLGATHERV)

/* Alltoallv, Neighbor_alltoallv. */
#define ALLTOALLV(_p, _s, _cnt, _disp, _large, _name, _kind)                                       \
    int TJ_WRAPPER(_p##_##_name##_s)(                                                              \
        const void *sbuf, const _cnt scounts[], const _disp sdispls[], MPI_Datatype stype,         \
        void *rbuf, const _cnt rcounts[], const _disp rdispls[], MPI_Datatype rtype,               \
        MPI_Comm comm, MPI_Info info, MPI_Request *req)                                            \
    {                                                                                              \
        tj_coll_call_t c = {.kind = _kind,                                                         \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scounts = scounts,                                                    \
                            .sdispls = sdispls,                                                    \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcounts = rcounts,                                                    \
                            .rdispls = rdispls,                                                    \
                            .rtype = rtype,                                                        \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,     \
                                 comm, info, req));                                                \
    }
FORMS(ALLTOALLV, Alltoallv_init, TJ_COLL_ALLTOALLV)
FORMS(ALLTOALLV, Neighbor_alltoallv_init, TJ_COLL_NEIGHBOR_ALLTOALLV)

/* Alltoallw (byte displacements of the form's displacement type, W_DISP) and Neighbor_alltoallw
 * (MPI_Aint byte displacements in every form, W_AINT): @p _sd, @p _rd the fields that take
 * them. */
#define W_DISP(_disp) _disp
#define W_AINT(_disp) MPI_Aint
#define ALLTOALLW(_p, _s, _cnt, _disp, _large, _name, _kind, _w, _sd, _rd)                         \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, const _cnt scounts[],                       \
                                     const W_##_w(_disp) sdispls[], const MPI_Datatype stypes[],   \
                                     void *rbuf, const _cnt rcounts[],                             \
                                     const W_##_w(_disp) rdispls[], const MPI_Datatype rtypes[],   \
                                     MPI_Comm comm, MPI_Info info, MPI_Request *req)               \
    {                                                                                              \
        tj_coll_call_t c = {.kind = _kind,                                                         \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scounts = scounts,                                                    \
                            ._sd = sdispls,                                                        \
                            .stypes = stypes,                                                      \
                            .rbuf = rbuf,                                                          \
                            .rcounts = rcounts,                                                    \
                            ._rd = rdispls,                                                        \
                            .rtypes = rtypes,                                                      \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,   \
                                 comm, info, req));                                                \
    }
FORMS(ALLTOALLW, Alltoallw_init, TJ_COLL_ALLTOALLW, DISP, sdispls, rdispls)
FORMS(ALLTOALLW, Neighbor_alltoallw_init, TJ_COLL_NEIGHBOR_ALLTOALLW, AINT, sadispls, radispls)

/* Gather, Scatter: one count per side and a root. */
#define GATHER(_p, _s, _cnt, _disp, _large, _name, _kind)                                          \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, _cnt rcount, MPI_Datatype rtype, int root,        \
                                     MPI_Comm comm, MPI_Info info, MPI_Request *req)               \
    {                                                                                              \
        tj_coll_call_t c = {.kind = _kind,                                                         \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scount = scount,                                                      \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcount = rcount,                                                      \
                            .rtype = rtype,                                                        \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        INIT(                                                                                      \
            refuse_coll, NAME(_p, _name, _s), &c,                                                  \
            P##_p##_##_name##_s(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, req)); \
    }
FORMS(GATHER, Gather_init, TJ_COLL_GATHER)
FORMS(GATHER, Scatter_init, TJ_COLL_SCATTER)

#define GATHERV_INIT(_p, _s, _cnt, _disp, _large, _name)                                           \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, const _cnt rcounts[], const _disp displs[],       \
                                     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,   \
                                     MPI_Request *req)                                             \
    {                                                                                              \
        tj_coll_call_t c = {.kind = TJ_COLL_GATHERV,                                               \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scount = scount,                                                      \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcounts = rcounts,                                                    \
                            .rdispls = displs,                                                     \
                            .rtype = rtype,                                                        \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,    \
                                 info, req));                                                      \
    }
FORMS(GATHERV_INIT, Gatherv_init)

#define SCATTERV_INIT(_p, _s, _cnt, _disp, _large, _name)                                          \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, const _cnt scounts[], const _disp displs[], \
                                     MPI_Datatype stype, void *rbuf, _cnt rcount,                  \
                                     MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Info info,   \
                                     MPI_Request *req)                                             \
    {                                                                                              \
        tj_coll_call_t c = {.kind = TJ_COLL_SCATTERV,                                              \
                            .large = _large,                                                       \
                            .sbuf = sbuf,                                                          \
                            .scounts = scounts,                                                    \
                            .sdispls = displs,                                                     \
                            .stype = stype,                                                        \
                            .rbuf = rbuf,                                                          \
                            .rcount = rcount,                                                      \
                            .rtype = rtype,                                                        \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,    \
                                 info, req));                                                      \
    }
FORMS(SCATTERV_INIT, Scatterv_init)

#define BCAST_INIT(_p, _s, _cnt, _disp, _large, _name)                                             \
    int TJ_WRAPPER(_p##_##_name##_s)(void *buf, _cnt count, MPI_Datatype type, int root,           \
                                     MPI_Comm comm, MPI_Info info, MPI_Request *req)               \
    {                                                                                              \
        tj_coll_call_t c = {.kind = TJ_COLL_BCAST,                                                 \
                            .large = _large,                                                       \
                            .sbuf = buf,                                                           \
                            .scount = count,                                                       \
                            .stype = type,                                                         \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        INIT(refuse_coll, NAME(_p, _name, _s), &c,                                                 \
             P##_p##_##_name##_s(buf, count, type, root, comm, info, req));                        \
    }
FORMS(BCAST_INIT, Bcast_init)

/* ---- reductions ------------------------------------------------------------------------------ */

#define REDUCE_INIT(_p, _s, _cnt, _disp, _large, _name)                                            \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, void *rbuf, _cnt count, MPI_Datatype type,  \
                                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info,            \
                                     MPI_Request *req)                                             \
    {                                                                                              \
        tj_red_call_t c = {.kind = TJ_RED_REDUCE,                                                  \
                           .large = _large,                                                        \
                           .sbuf = sbuf,                                                           \
                           .rbuf = rbuf,                                                           \
                           .count = count,                                                         \
                           .type = type,                                                           \
                           .op = op,                                                               \
                           .root = root,                                                           \
                           .comm = comm};                                                          \
        INIT(refuse_red, NAME(_p, _name, _s), &c,                                                  \
             P##_p##_##_name##_s(sbuf, rbuf, count, type, op, root, comm, info, req));             \
    }
FORMS(REDUCE_INIT, Reduce_init)

/* Allreduce, Reduce_scatter_block, Scan, Exscan: one count, no root. */
#define ALLREDUCE(_p, _s, _cnt, _disp, _large, _name, _kind)                                       \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, void *rbuf, _cnt count, MPI_Datatype type,  \
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)    \
    {                                                                                              \
        tj_red_call_t c = {.kind = _kind,                                                          \
                           .large = _large,                                                        \
                           .sbuf = sbuf,                                                           \
                           .rbuf = rbuf,                                                           \
                           .count = count,                                                         \
                           .type = type,                                                           \
                           .op = op,                                                               \
                           .comm = comm};                                                          \
        INIT(refuse_red, NAME(_p, _name, _s), &c,                                                  \
             P##_p##_##_name##_s(sbuf, rbuf, count, type, op, comm, info, req));                   \
    }
FORMS(ALLREDUCE, Allreduce_init, TJ_RED_ALLREDUCE)
FORMS(ALLREDUCE, Reduce_scatter_block_init, TJ_RED_REDUCE_SCATTER_BLOCK)
FORMS(ALLREDUCE, Scan_init, TJ_RED_SCAN)
FORMS(ALLREDUCE, Exscan_init, TJ_RED_EXSCAN)

#define REDUCE_SCATTER_INIT(_p, _s, _cnt, _disp, _large, _name)                                    \
    int TJ_WRAPPER(_p##_##_name##_s)(const void *sbuf, void *rbuf, const _cnt rcounts[],           \
                                     MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,   \
                                     MPI_Request *req)                                             \
    {                                                                                              \
        tj_red_call_t c = {.kind = TJ_RED_REDUCE_SCATTER,                                          \
                           .large = _large,                                                        \
                           .sbuf = sbuf,                                                           \
                           .rbuf = rbuf,                                                           \
                           .rcounts = rcounts,                                                     \
                           .type = type,                                                           \
                           .op = op,                                                               \
                           .comm = comm};                                                          \
        INIT(refuse_red, NAME(_p, _name, _s), &c,                                                  \
             P##_p##_##_name##_s(sbuf, rbuf, rcounts, type, op, comm, info, req));                 \
    }
FORMS(REDUCE_SCATTER_INIT, Reduce_scatter_init)

#endif
