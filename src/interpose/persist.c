/* Persistent collectives (Open MPI's MPIX_*_init extension, MPI 4.0's MPI_*_init): the request
 * they return is started and completed many times on the buffers given at the init, which an MPI
 * that is not CUDA-aware would read and write from host code. typejit does not stage them (yet):
 * with a buffer in device memory and such an MPI, the init is refused with MPI_ERR_BUFFER and
 * one error line; a CUDA-aware MPI gets it as it is, and host buffers go to the system MPI after
 * the pointer queries of their sides (none on a machine without a device). */
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/coll.h"
#include "send/model.h"
#include "send/reduce.h"

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
    PMPI_Comm_call_errhandler(c->comm, *rc);
    return true;
}

static bool refuse_red(const char *fn, tj_red_call_t *c, int *rc)
{
    tj_type_info_t info;
    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return false;
    c->info = tj_interpose_lookup(c->type, &info) ? &info : NULL;
    if (!tj_reduce_on_device(c))
        return false;
    *rc = tj_interpose_refuse(fn, why);
    PMPI_Comm_call_errhandler(c->comm, *rc);
    return true;
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

#if defined(TJ_HAVE_MPIX_INIT)

int TJ_WRAPPER(MPIX_Bcast_init)(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = {.kind = TJ_COLL_BCAST,
                        .sbuf = buf,
                        .scount = count,
                        .stype = type,
                        .root = root,
                        .comm = comm};
    int rc;
    if (refuse_coll("MPIX_Bcast_init", &c, &rc))
        return rc;
    return PMPIX_Bcast_init(buf, count, type, root, comm, info, req);
}

int TJ_WRAPPER(MPIX_Gather_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_GATHER);
    int rc;
    if (refuse_coll("MPIX_Gather_init", &c, &rc))
        return rc;
    return PMPIX_Gather_init(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, req);
}

int TJ_WRAPPER(MPIX_Gatherv_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                  const int rcounts[], const int displs[], MPI_Datatype rtype,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHERV_CALL(TJ_COLL_GATHERV);
    int rc;
    if (refuse_coll("MPIX_Gatherv_init", &c, &rc))
        return rc;
    return PMPIX_Gatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, info,
                              req);
}

int TJ_WRAPPER(MPIX_Scatter_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_SCATTER);
    int rc;
    if (refuse_coll("MPIX_Scatter_init", &c, &rc))
        return rc;
    return PMPIX_Scatter_init(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, req);
}

int TJ_WRAPPER(MPIX_Scatterv_init)(const void *sbuf, const int scounts[], const int displs[],
                                   MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                                   int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = SCATTERV_CALL(TJ_COLL_SCATTERV);
    int rc;
    if (refuse_coll("MPIX_Scatterv_init", &c, &rc))
        return rc;
    return PMPIX_Scatterv_init(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, info,
                               req);
}

int TJ_WRAPPER(MPIX_Allgather_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                    int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLGATHER);
    int rc;
    if (refuse_coll("MPIX_Allgather_init", &c, &rc))
        return rc;
    return PMPIX_Allgather_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPIX_Allgatherv_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                     const int rcounts[], const int displs[], MPI_Datatype rtype,
                                     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_ALLGATHERV);
    int rc;
    if (refuse_coll("MPIX_Allgatherv_init", &c, &rc))
        return rc;
    return PMPIX_Allgatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, info,
                                 req);
}

int TJ_WRAPPER(MPIX_Alltoall_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                   int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLTOALL);
    int rc;
    if (refuse_coll("MPIX_Alltoall_init", &c, &rc))
        return rc;
    return PMPIX_Alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPIX_Alltoallv_init)(const void *sbuf, const int scounts[], const int sdispls[],
                                    MPI_Datatype stype, void *rbuf, const int rcounts[],
                                    const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                                    MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_ALLTOALLV);
    int rc;
    if (refuse_coll("MPIX_Alltoallv_init", &c, &rc))
        return rc;
    return PMPIX_Alltoallv_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                                info, req);
}

int TJ_WRAPPER(MPIX_Alltoallw_init)(const void *sbuf, const int scounts[], const int sdispls[],
                                    const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                                    const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                    MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLW_CALL(TJ_COLL_ALLTOALLW);
    int rc;
    if (refuse_coll("MPIX_Alltoallw_init", &c, &rc))
        return rc;
    return PMPIX_Alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,
                                comm, info, req);
}

int TJ_WRAPPER(MPIX_Neighbor_allgather_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                             void *rbuf, int rcount, MPI_Datatype rtype,
                                             MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLGATHER);
    int rc;
    if (refuse_coll("MPIX_Neighbor_allgather_init", &c, &rc))
        return rc;
    return PMPIX_Neighbor_allgather_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPIX_Neighbor_allgatherv_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                              void *rbuf, const int rcounts[], const int displs[],
                                              MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                              MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_NEIGHBOR_ALLGATHERV);
    int rc;
    if (refuse_coll("MPIX_Neighbor_allgatherv_init", &c, &rc))
        return rc;
    return PMPIX_Neighbor_allgatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                          info, req);
}

int TJ_WRAPPER(MPIX_Neighbor_alltoall_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                            void *rbuf, int rcount, MPI_Datatype rtype,
                                            MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLTOALL);
    int rc;
    if (refuse_coll("MPIX_Neighbor_alltoall_init", &c, &rc))
        return rc;
    return PMPIX_Neighbor_alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPIX_Neighbor_alltoallv_init)(const void *sbuf, const int scounts[],
                                             const int sdispls[], MPI_Datatype stype, void *rbuf,
                                             const int rcounts[], const int rdispls[],
                                             MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_NEIGHBOR_ALLTOALLV);
    int rc;
    if (refuse_coll("MPIX_Neighbor_alltoallv_init", &c, &rc))
        return rc;
    return PMPIX_Neighbor_alltoallv_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                         rtype, comm, info, req);
}

int TJ_WRAPPER(MPIX_Neighbor_alltoallw_init)(const void *sbuf, const int scounts[],
                                             const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                             void *rbuf, const int rcounts[],
                                             const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                                             MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = NEIGHBOR_W_CALL(TJ_COLL_NEIGHBOR_ALLTOALLW);
    int rc;
    if (refuse_coll("MPIX_Neighbor_alltoallw_init", &c, &rc))
        return rc;
    return PMPIX_Neighbor_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                         rtypes, comm, info, req);
}

int TJ_WRAPPER(MPIX_Reduce_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    c.root = root;
    if (refuse_red("MPIX_Reduce_init", &c, &rc))
        return rc;
    return PMPIX_Reduce_init(sbuf, rbuf, count, type, op, root, comm, info, req);
}

int TJ_WRAPPER(MPIX_Allreduce_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_ALLREDUCE,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPIX_Allreduce_init", &c, &rc))
        return rc;
    return PMPIX_Allreduce_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPIX_Reduce_scatter_init)(const void *sbuf, void *rbuf, const int rcounts[],
                                         MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE_SCATTER,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = 0,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    c.rcounts = rcounts;
    if (refuse_red("MPIX_Reduce_scatter_init", &c, &rc))
        return rc;
    return PMPIX_Reduce_scatter_init(sbuf, rbuf, rcounts, type, op, comm, info, req);
}

int TJ_WRAPPER(MPIX_Reduce_scatter_block_init)(const void *sbuf, void *rbuf, int count,
                                               MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                               MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE_SCATTER_BLOCK,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPIX_Reduce_scatter_block_init", &c, &rc))
        return rc;
    return PMPIX_Reduce_scatter_block_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPIX_Scan_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_SCAN,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPIX_Scan_init", &c, &rc))
        return rc;
    return PMPIX_Scan_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPIX_Exscan_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_EXSCAN,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPIX_Exscan_init", &c, &rc))
        return rc;
    return PMPIX_Exscan_init(sbuf, rbuf, count, type, op, comm, info, req);
}

#endif /* TJ_HAVE_MPIX_INIT */

#if defined(TJ_HAVE_MPI4)

int TJ_WRAPPER(MPI_Bcast_init)(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
                               MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = {.kind = TJ_COLL_BCAST,
                        .sbuf = buf,
                        .scount = count,
                        .stype = type,
                        .root = root,
                        .comm = comm};
    int rc;
    if (refuse_coll("MPI_Bcast_init", &c, &rc))
        return rc;
    return PMPI_Bcast_init(buf, count, type, root, comm, info, req);
}

int TJ_WRAPPER(MPI_Gather_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_GATHER);
    int rc;
    if (refuse_coll("MPI_Gather_init", &c, &rc))
        return rc;
    return PMPI_Gather_init(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, req);
}

int TJ_WRAPPER(MPI_Gatherv_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 const int rcounts[], const int displs[], MPI_Datatype rtype,
                                 int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHERV_CALL(TJ_COLL_GATHERV);
    int rc;
    if (refuse_coll("MPI_Gatherv_init", &c, &rc))
        return rc;
    return PMPI_Gatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, info,
                             req);
}

int TJ_WRAPPER(MPI_Scatter_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = GATHER_CALL(TJ_COLL_SCATTER);
    int rc;
    if (refuse_coll("MPI_Scatter_init", &c, &rc))
        return rc;
    return PMPI_Scatter_init(sbuf, scount, stype, rbuf, rcount, rtype, root, comm, info, req);
}

int TJ_WRAPPER(MPI_Scatterv_init)(const void *sbuf, const int scounts[], const int displs[],
                                  MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = SCATTERV_CALL(TJ_COLL_SCATTERV);
    int rc;
    if (refuse_coll("MPI_Scatterv_init", &c, &rc))
        return rc;
    return PMPI_Scatterv_init(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, info,
                              req);
}

int TJ_WRAPPER(MPI_Allgather_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                   int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLGATHER);
    int rc;
    if (refuse_coll("MPI_Allgather_init", &c, &rc))
        return rc;
    return PMPI_Allgather_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Allgatherv_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                    const int rcounts[], const int displs[], MPI_Datatype rtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_ALLGATHERV);
    int rc;
    if (refuse_coll("MPI_Allgatherv_init", &c, &rc))
        return rc;
    return PMPI_Allgatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Alltoall_init)(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                                  int rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_ALLTOALL);
    int rc;
    if (refuse_coll("MPI_Alltoall_init", &c, &rc))
        return rc;
    return PMPI_Alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Alltoallv_init)(const void *sbuf, const int scounts[], const int sdispls[],
                                   MPI_Datatype stype, void *rbuf, const int rcounts[],
                                   const int rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_ALLTOALLV);
    int rc;
    if (refuse_coll("MPI_Alltoallv_init", &c, &rc))
        return rc;
    return PMPI_Alltoallv_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm,
                               info, req);
}

int TJ_WRAPPER(MPI_Alltoallw_init)(const void *sbuf, const int scounts[], const int sdispls[],
                                   const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                                   const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                                   MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLW_CALL(TJ_COLL_ALLTOALLW);
    int rc;
    if (refuse_coll("MPI_Alltoallw_init", &c, &rc))
        return rc;
    return PMPI_Alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
                               info, req);
}

int TJ_WRAPPER(MPI_Neighbor_allgather_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                            void *rbuf, int rcount, MPI_Datatype rtype,
                                            MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLGATHER);
    int rc;
    if (refuse_coll("MPI_Neighbor_allgather_init", &c, &rc))
        return rc;
    return PMPI_Neighbor_allgather_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Neighbor_allgatherv_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                             void *rbuf, const int rcounts[], const int displs[],
                                             MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHERV_CALL(TJ_COLL_NEIGHBOR_ALLGATHERV);
    int rc;
    if (refuse_coll("MPI_Neighbor_allgatherv_init", &c, &rc))
        return rc;
    return PMPI_Neighbor_allgatherv_init(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                                         info, req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoall_init)(const void *sbuf, int scount, MPI_Datatype stype,
                                           void *rbuf, int rcount, MPI_Datatype rtype,
                                           MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = ALLGATHER_CALL(TJ_COLL_NEIGHBOR_ALLTOALL);
    int rc;
    if (refuse_coll("MPI_Neighbor_alltoall_init", &c, &rc))
        return rc;
    return PMPI_Neighbor_alltoall_init(sbuf, scount, stype, rbuf, rcount, rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoallv_init)(const void *sbuf, const int scounts[],
                                            const int sdispls[], MPI_Datatype stype, void *rbuf,
                                            const int rcounts[], const int rdispls[],
                                            MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request *req)
{
    tj_coll_call_t c = ALLTOALLV_CALL(TJ_COLL_NEIGHBOR_ALLTOALLV);
    int rc;
    if (refuse_coll("MPI_Neighbor_alltoallv_init", &c, &rc))
        return rc;
    return PMPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                                        rtype, comm, info, req);
}

int TJ_WRAPPER(MPI_Neighbor_alltoallw_init)(const void *sbuf, const int scounts[],
                                            const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                                            void *rbuf, const int rcounts[],
                                            const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                                            MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_coll_call_t c = NEIGHBOR_W_CALL(TJ_COLL_NEIGHBOR_ALLTOALLW);
    int rc;
    if (refuse_coll("MPI_Neighbor_alltoallw_init", &c, &rc))
        return rc;
    return PMPI_Neighbor_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                        rtypes, comm, info, req);
}

int TJ_WRAPPER(MPI_Reduce_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    c.root = root;
    if (refuse_red("MPI_Reduce_init", &c, &rc))
        return rc;
    return PMPI_Reduce_init(sbuf, rbuf, count, type, op, root, comm, info, req);
}

int TJ_WRAPPER(MPI_Allreduce_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_ALLREDUCE,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPI_Allreduce_init", &c, &rc))
        return rc;
    return PMPI_Allreduce_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPI_Reduce_scatter_init)(const void *sbuf, void *rbuf, const int rcounts[],
                                        MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE_SCATTER,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = 0,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    c.rcounts = rcounts;
    if (refuse_red("MPI_Reduce_scatter_init", &c, &rc))
        return rc;
    return PMPI_Reduce_scatter_init(sbuf, rbuf, rcounts, type, op, comm, info, req);
}

int TJ_WRAPPER(MPI_Reduce_scatter_block_init)(const void *sbuf, void *rbuf, int count,
                                              MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                              MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_REDUCE_SCATTER_BLOCK,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPI_Reduce_scatter_block_init", &c, &rc))
        return rc;
    return PMPI_Reduce_scatter_block_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPI_Scan_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_SCAN,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPI_Scan_init", &c, &rc))
        return rc;
    return PMPI_Scan_init(sbuf, rbuf, count, type, op, comm, info, req);
}

int TJ_WRAPPER(MPI_Exscan_init)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
    tj_red_call_t c = {.kind = TJ_RED_EXSCAN,
                       .sbuf = sbuf,
                       .rbuf = rbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = comm};
    int rc;
    if (refuse_red("MPI_Exscan_init", &c, &rc))
        return rc;
    return PMPI_Exscan_init(sbuf, rbuf, count, type, op, comm, info, req);
}

#endif /* TJ_HAVE_MPI4 */

#endif
