/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective wrappers: Alltoall, Alltoallv, Alltoallw, Neighbor_alltoall, Neighbor_alltoallv,
 * Neighbor_alltoallw, Neighbor_allgather, Neighbor_allgatherv, Allgather, Allgatherv, Gather,
 * Gatherv, Scatter, Scatterv, Bcast and their non-blocking forms, each also in its large-count
 * form (`_c`) where the MPI has them. A call whose buffers are in host memory goes to the system
 * MPI after one pointer query per side (none on a machine without a CUDA device); one with a
 * device buffer is typejit's (src/calls/coll.c), and its non-blocking request is completed by the
 * interposed Wait and Test calls. */
#include "gpu/cuda.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "calls/coll.h"
#include "calls/send_queue.h"
#include "util/mpierr.h"

/* Whether typejit runs the call; *rc is then its result. Errors typejit itself detects go
 * through the communicator's error handler, as the system MPI's do. */
static bool take(tj_coll_call_t *c, MPI_Request *req, int *rc)
{
    tj_coll_result_t r;

    /* The collectives of a communicator keep their order: one the send queue holds goes to the
     * system MPI before this one, whoever makes it. */
    tj_send_queue_flush_collectives(c->comm);
    if (tj_gpu_absent() || !tj_interpose_active() || !tj_gpu_available())
        return false;
    c->lookup = tj_interpose_lookup;
    r = tj_coll_run(c, req, rc);
    if (r == TJ_COLL_FAILED)
        tj_mpi_raise(c->comm, *rc);
    return r != TJ_COLL_PASS;
}

/* Each wrapper in its int and large-count forms from one definition: (suffix, count type,
 * displacement type, large), then the family's names. A family's blocking and non-blocking
 * calls share it too: @p _req is NULL or the request argument. */
#define FORMS(_m, ...)                                                                             \
    _m(, int, int, false, __VA_ARGS__) TJ_IF_LARGE(_m(_c, MPI_Count, MPI_Aint, true, __VA_ARGS__))

/* The run or the pass to the system MPI, for a call @p c with the application's arguments. */
#define RUN(_c, _req, _pass)                                                                       \
    do {                                                                                           \
        int rc;                                                                                    \
        if (take(_c, _req, &rc))                                                                   \
            return rc;                                                                             \
        return _pass;                                                                              \
    } while (0)

/* Alltoall, Neighbor_alltoall, Neighbor_allgather, Allgather: one count per side. */
#define ALLGATHER_FAMILY(_s, _cnt, _disp, _large, _name, _iname, _kind)                            \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, \
                                    _cnt rcount, MPI_Datatype rtype, MPI_Comm comm)                \
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
        RUN(&c, NULL, PMPI_##_name##_s(sbuf, scount, stype, rbuf, rcount, rtype, comm));           \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, _cnt rcount, MPI_Datatype rtype, MPI_Comm comm,   \
                                     MPI_Request *req)                                             \
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
        RUN(&c, req, PMPI_##_iname##_s(sbuf, scount, stype, rbuf, rcount, rtype, comm, req));      \
    }
FORMS(ALLGATHER_FAMILY, Alltoall, Ialltoall, TJ_COLL_ALLTOALL)
FORMS(ALLGATHER_FAMILY, Neighbor_alltoall, Ineighbor_alltoall, TJ_COLL_NEIGHBOR_ALLTOALL)
FORMS(ALLGATHER_FAMILY, Neighbor_allgather, Ineighbor_allgather, TJ_COLL_NEIGHBOR_ALLGATHER)
FORMS(ALLGATHER_FAMILY, Allgather, Iallgather, TJ_COLL_ALLGATHER)

/* Allgatherv, Neighbor_allgatherv: one send count, receive counts and displacements. */
#define ALLGATHERV_FAMILY(_s, _cnt, _disp, _large, _name, _iname, _kind)                           \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, \
                                    const _cnt rcounts[], const _disp displs[],                    \
                                    MPI_Datatype rtype, MPI_Comm comm)                             \
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
        RUN(&c, NULL, PMPI_##_name##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));  \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, const _cnt rcounts[], const _disp displs[],       \
                                     MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)          \
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
        RUN(&c, req,                                                                               \
            PMPI_##_iname##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req));      \
    }
FORMS(ALLGATHERV_FAMILY, Allgatherv, Iallgatherv, TJ_COLL_ALLGATHERV)
FORMS(ALLGATHERV_FAMILY, Neighbor_allgatherv, Ineighbor_allgatherv, TJ_COLL_NEIGHBOR_ALLGATHERV)

/* Alltoallv, Neighbor_alltoallv: counts and displacements (in elements) per side. */
#define ALLTOALLV_FAMILY(_s, _cnt, _disp, _large, _name, _iname, _kind)                            \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *sbuf, const _cnt scounts[], const _disp sdispls[], \
                                    MPI_Datatype stype, void *rbuf, const _cnt rcounts[],          \
                                    const _disp rdispls[], MPI_Datatype rtype, MPI_Comm comm)      \
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
        RUN(&c, NULL,                                                                              \
            PMPI_##_name##_s(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm)); \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(const void *sbuf, const _cnt scounts[],                       \
                                     const _disp sdispls[], MPI_Datatype stype, void *rbuf,        \
                                     const _cnt rcounts[], const _disp rdispls[],                  \
                                     MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)          \
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
        RUN(&c, req,                                                                               \
            PMPI_##_iname##_s(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,  \
                              req));                                                               \
    }
FORMS(ALLTOALLV_FAMILY, Alltoallv, Ialltoallv, TJ_COLL_ALLTOALLV)
FORMS(ALLTOALLV_FAMILY, Neighbor_alltoallv, Ineighbor_alltoallv, TJ_COLL_NEIGHBOR_ALLTOALLV)

/* Alltoallw (byte displacements: int, or MPI_Aint in the large form) and Neighbor_alltoallw
 * (MPI_Aint byte displacements in both forms): one type per peer. @p _w: the displacements' type
 * (W_DISP: the form's, W_AINT: MPI_Aint); @p _sd, @p _rd: the call's fields that take them. */
#define W_DISP(_disp) _disp
#define W_AINT(_disp) MPI_Aint
#define ALLTOALLW_FAMILY(_s, _cnt, _disp, _large, _name, _iname, _kind, _w, _sd, _rd)              \
    int TJ_WRAPPER(MPI_##_name##_s)(                                                               \
        const void *sbuf, const _cnt scounts[], const W_##_w(_disp) sdispls[],                     \
        const MPI_Datatype stypes[], void *rbuf, const _cnt rcounts[],                             \
        const W_##_w(_disp) rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)                 \
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
        RUN(&c, NULL,                                                                              \
            PMPI_##_name##_s(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,       \
                             comm));                                                               \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(const void *sbuf, const _cnt scounts[],                       \
                                     const W_##_w(_disp) sdispls[], const MPI_Datatype stypes[],   \
                                     void *rbuf, const _cnt rcounts[],                             \
                                     const W_##_w(_disp) rdispls[], const MPI_Datatype rtypes[],   \
                                     MPI_Comm comm, MPI_Request *req)                              \
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
        RUN(&c, req,                                                                               \
            PMPI_##_iname##_s(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,      \
                              comm, req));                                                         \
    }
FORMS(ALLTOALLW_FAMILY, Alltoallw, Ialltoallw, TJ_COLL_ALLTOALLW, DISP, sdispls, rdispls)
FORMS(ALLTOALLW_FAMILY, Neighbor_alltoallw, Ineighbor_alltoallw, TJ_COLL_NEIGHBOR_ALLTOALLW, AINT,
      sadispls, radispls)

/* Gather, Scatter: one count per side and a root. */
#define GATHER_FAMILY(_s, _cnt, _disp, _large, _name, _iname, _kind)                               \
    int TJ_WRAPPER(MPI_##_name##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, \
                                    _cnt rcount, MPI_Datatype rtype, int root, MPI_Comm comm)      \
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
        RUN(&c, NULL, PMPI_##_name##_s(sbuf, scount, stype, rbuf, rcount, rtype, root, comm));     \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_iname##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype,            \
                                     void *rbuf, _cnt rcount, MPI_Datatype rtype, int root,        \
                                     MPI_Comm comm, MPI_Request *req)                              \
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
        RUN(&c, req,                                                                               \
            PMPI_##_iname##_s(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req));         \
    }
FORMS(GATHER_FAMILY, Gather, Igather, TJ_COLL_GATHER)
FORMS(GATHER_FAMILY, Scatter, Iscatter, TJ_COLL_SCATTER)

#define GATHERV(_s, _cnt, _disp, _large, _unused)                                                  \
    int TJ_WRAPPER(MPI_Gatherv##_s)(const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, \
                                    const _cnt rcounts[], const _disp displs[],                    \
                                    MPI_Datatype rtype, int root, MPI_Comm comm)                   \
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
        RUN(&c, NULL,                                                                              \
            PMPI_Gatherv##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));      \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Igatherv##_s)(                                                              \
        const void *sbuf, _cnt scount, MPI_Datatype stype, void *rbuf, const _cnt rcounts[],       \
        const _disp displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)       \
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
        RUN(&c, req,                                                                               \
            PMPI_Igatherv##_s(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm,       \
                              req));                                                               \
    }
FORMS(GATHERV, -)

#define SCATTERV(_s, _cnt, _disp, _large, _unused)                                                 \
    int TJ_WRAPPER(MPI_Scatterv##_s)(const void *sbuf, const _cnt scounts[], const _disp displs[], \
                                     MPI_Datatype stype, void *rbuf, _cnt rcount,                  \
                                     MPI_Datatype rtype, int root, MPI_Comm comm)                  \
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
        RUN(&c, NULL,                                                                              \
            PMPI_Scatterv##_s(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));     \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Iscatterv##_s)(                                                             \
        const void *sbuf, const _cnt scounts[], const _disp displs[], MPI_Datatype stype,          \
        void *rbuf, _cnt rcount, MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *req)    \
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
        RUN(&c, req,                                                                               \
            PMPI_Iscatterv##_s(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm,      \
                               req));                                                              \
    }
FORMS(SCATTERV, -)

#define BCAST(_s, _cnt, _disp, _large, _unused)                                                    \
    int TJ_WRAPPER(MPI_Bcast##_s)(void *buf, _cnt count, MPI_Datatype type, int root,              \
                                  MPI_Comm comm)                                                   \
    {                                                                                              \
        tj_coll_call_t c = {.kind = TJ_COLL_BCAST,                                                 \
                            .large = _large,                                                       \
                            .sbuf = buf,                                                           \
                            .scount = count,                                                       \
                            .stype = type,                                                         \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        RUN(&c, NULL, PMPI_Bcast##_s(buf, count, type, root, comm));                               \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Ibcast##_s)(void *buf, _cnt count, MPI_Datatype type, int root,             \
                                   MPI_Comm comm, MPI_Request *req)                                \
    {                                                                                              \
        tj_coll_call_t c = {.kind = TJ_COLL_BCAST,                                                 \
                            .large = _large,                                                       \
                            .sbuf = buf,                                                           \
                            .scount = count,                                                       \
                            .stype = type,                                                         \
                            .root = root,                                                          \
                            .comm = comm};                                                         \
        RUN(&c, req, PMPI_Ibcast##_s(buf, count, type, root, comm, req));                          \
    }
FORMS(BCAST, -)
