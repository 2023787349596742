/* Collective wrappers: Alltoall, Alltoallv, Alltoallw, Neighbor_alltoall, Neighbor_alltoallv,
 * Neighbor_alltoallw, Neighbor_allgather, Neighbor_allgatherv, Allgather, Allgatherv, Gather,
 * Gatherv, Scatter, Scatterv, Bcast and their non-blocking forms. A call
 * whose buffers are in host memory goes to the system MPI after one pointer query per side (none
 * on a machine without a CUDA device); one with a device buffer is typejit's (src/send/coll.c),
 * and its non-blocking request is completed by the interposed Wait and Test calls. */
#include "gpu/cuda.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/coll.h"
#include "util/mpierr.h"

/* Whether typejit runs the call; *rc is then its result. Errors typejit itself detects go
 * through the communicator's error handler, as the system MPI's do. */
static bool take(tj_coll_call_t *c, MPI_Request *req, int *rc)
{
    tj_coll_result_t r;

    if (tj_gpu_absent() || !tj_interpose_active() || !tj_gpu_available())
        return false;
    c->lookup = tj_interpose_lookup;
    r = tj_coll_run(c, req, rc);
    if (r == TJ_COLL_FAILED)
        tj_mpi_raise(c->comm, *rc);
    return r != TJ_COLL_PASS;
}

#define ALLTOALLV_CALL(_kind)                                                                      \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stype = stype,     \
        .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype, .comm = comm         \
    }
#define ALLTOALLW_CALL(_kind)                                                                      \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, .stypes = stypes,   \
        .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtypes = rtypes, .comm = comm       \
    }
#define NEIGHBOR_W_CALL(_kind)                                                                     \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scounts = scounts, .sadispls = sdispls, .stypes = stypes,  \
        .rbuf = rbuf, .rcounts = rcounts, .radispls = rdispls, .rtypes = rtypes, .comm = comm      \
    }
#define ALLGATHER_CALL(_kind)                                                                      \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,             \
        .rcount = rcount, .rtype = rtype, .comm = comm                                             \
    }
#define ALLGATHERV_CALL(_kind)                                                                     \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,             \
        .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .comm = comm                        \
    }
#define GATHER_CALL(_kind)                                                                         \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,             \
        .rcount = rcount, .rtype = rtype, .root = root, .comm = comm                               \
    }
#define GATHERV_CALL(_kind)                                                                        \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,             \
        .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .root = root, .comm = comm          \
    }
#define SCATTERV_CALL(_kind)                                                                       \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .scounts = scounts, .sdispls = displs, .stype = stype,      \
        .rbuf = rbuf, .rcount = rcount, .rtype = rtype, .root = root, .comm = comm                 \
    }

int TJ_WRAPPER(MPI_Alltoall)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLTOALL);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int TJ_WRAPPER(MPI_Ialltoall)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLTOALL);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ialltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Alltoallv)(const void *sbuf, const int scounts[], const int sdispls[],
                              MPI_Datatype stype, void *rbuf, const int rcounts[],
                              const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_ALLTOALLV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}

int TJ_WRAPPER(MPI_Ialltoallv)(const void *sbuf, const int scounts[], const int sdispls[],
                               MPI_Datatype stype, void *rbuf, const int rcounts[],
                               const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                               MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_ALLTOALLV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ialltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Alltoallw)(const void *sbuf, const int scounts[], const int sdispls[],
                              const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                              const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm)
{
    tj_coll_call_t c = ALLTOALLW_CALL(TJ_COLL_ALLTOALLW);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
}

int TJ_WRAPPER(MPI_Ialltoallw)(const void *sbuf, const int scounts[], const int sdispls[],
                               const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                               const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                               MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLW_CALL(TJ_COLL_ALLTOALLW);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ialltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                           req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoallv)(const void *sbuf, const int scounts[], const int sdispls[],
                                       MPI_Datatype stype, void *rbuf, const int rcounts[],
                                       const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_NEIGHBOR_ALLTOALLV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Neighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                   comm);
}

int TJ_WRAPPER(MPI_Ineighbor_alltoallv)(const void *sbuf, const int scounts[], const int sdispls[],
                                        MPI_Datatype stype, void *rbuf, const int rcounts[],
                                        const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                                        MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_NEIGHBOR_ALLTOALLV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,
                                    comm, req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoallw)(const void *sbuf, const int scounts[],
                                       const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                       void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                                       const MPI_Datatype rtypes[], MPI_Comm comm)
{
    tj_coll_call_t c = NEIGHBOR_W_CALL(TJ_COLL_NEIGHBOR_ALLTOALLW);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Neighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                   comm);
}

int TJ_WRAPPER(MPI_Ineighbor_alltoallw)(const void *sbuf, const int scounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                        void *rbuf, const int rcounts[], const MPI_Aint rdispls[],
                                        const MPI_Datatype rtypes[], MPI_Comm comm,
                                        MPI_Request *req)
{
    tj_coll_call_t c = NEIGHBOR_W_CALL(TJ_COLL_NEIGHBOR_ALLTOALLW);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ineighbor_alltoallw(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                    comm, req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoall)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                      int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLTOALL);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Neighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int TJ_WRAPPER(MPI_Ineighbor_alltoall)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                       int rcount, MPI_Datatype rtype, MPI_Comm comm,
                                       MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLTOALL);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ineighbor_alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Neighbor_allgather)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                       int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLGATHER);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Neighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int TJ_WRAPPER(MPI_Ineighbor_allgather)(const void *sbuf, int scount, MPI_Datatype stype,
                                        void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                                        MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLGATHER);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ineighbor_allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Neighbor_allgatherv)(const void *sbuf, int scount, MPI_Datatype stype,
                                        void *rbuf, const int rcounts[], const int displs[],
                                        MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_NEIGHBOR_ALLGATHERV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Neighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int TJ_WRAPPER(MPI_Ineighbor_allgatherv)(const void *sbuf, int scount, MPI_Datatype stype,
                                         void *rbuf, const int rcounts[], const int displs[],
                                         MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_NEIGHBOR_ALLGATHERV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ineighbor_allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Allgather)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                              int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLGATHER);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int TJ_WRAPPER(MPI_Iallgather)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                               int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLGATHER);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Allgatherv)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                               const int rcounts[], const int displs[], MPI_Datatype rtype,
                               MPI_Comm comm)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_ALLGATHERV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int TJ_WRAPPER(MPI_Iallgatherv)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                const int rcounts[], const int displs[], MPI_Datatype rtype,
                                MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_ALLGATHERV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

int TJ_WRAPPER(MPI_Gather)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_GATHER);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int TJ_WRAPPER(MPI_Igather)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                            MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_GATHER);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
}

int TJ_WRAPPER(MPI_Gatherv)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                            MPI_Comm comm)
{
    tj_coll_call_t c = GATHERV_CALL(TJ_COLL_GATHERV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

int TJ_WRAPPER(MPI_Igatherv)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                             MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = GATHERV_CALL(TJ_COLL_GATHERV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Igatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req);
}

int TJ_WRAPPER(MPI_Scatter)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_SCATTER);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int TJ_WRAPPER(MPI_Iscatter)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                             MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_SCATTER);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iscatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req);
}

int TJ_WRAPPER(MPI_Scatterv)(const void *sbuf, const int scounts[], const int displs[],
                             MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                             int root, MPI_Comm comm)
{
    tj_coll_call_t c = SCATTERV_CALL(TJ_COLL_SCATTERV);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}

int TJ_WRAPPER(MPI_Iscatterv)(const void *sbuf, const int scounts[], const int displs[],
                              MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                              int root, MPI_Comm comm, MPI_Request *req)
{
    tj_coll_call_t c = SCATTERV_CALL(TJ_COLL_SCATTERV);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
}

int TJ_WRAPPER(MPI_Bcast)(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    tj_coll_call_t c = {.kind = TJ_COLL_BCAST,
                        .sbuf = buf,
                        .scount = count,
                        .stype = type,
                        .root = root,
                        .comm = comm};
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Bcast(buf, count, type, root, comm);
}

int TJ_WRAPPER(MPI_Ibcast)(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                           MPI_Request *req)
{
    tj_coll_call_t c = {.kind = TJ_COLL_BCAST,
                        .sbuf = buf,
                        .scount = count,
                        .stype = type,
                        .root = root,
                        .comm = comm};
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ibcast(buf, count, type, root, comm, req);
}
