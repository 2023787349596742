/* Reduction wrappers: Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block, Scan, Exscan,
 * their non-blocking forms, and Reduce_local. A call with a device buffer and an MPI that is not
 * CUDA-aware is staged exactly through host memory (src/send/reduce.c); every other call goes
 * to the system MPI, after at most two pointer queries (none on a machine without a device). */
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/reduce.h"

/* Whether typejit runs the call; *rc is then its result. Errors typejit itself detects go
 * through the communicator's error handler (MPI_COMM_WORLD's for Reduce_local, as Open MPI
 * raises them), as the system MPI's do. */
static bool take(tj_red_call_t *c, MPI_Request *req, int *rc)
{
    tj_type_info_t info;
    tj_red_result_t r;

    if (!tj_interpose_device_calls())
        return false;
    c->info = tj_interpose_lookup(c->type, &info) ? &info : NULL;
    r = tj_reduce_run(c, req, rc);
    if (r == TJ_RED_FAILED)
        PMPI_Comm_call_errhandler(c->kind == TJ_RED_LOCAL ? MPI_COMM_WORLD : c->comm, *rc);
    return r != TJ_RED_PASS;
}

#define RED_CALL(_kind)                                                                            \
    {                                                                                              \
        .kind = (_kind), .sbuf = sbuf, .rbuf = rbuf, .count = count, .type = type, .op = op,       \
        .comm = comm                                                                               \
    }

int TJ_WRAPPER(MPI_Reduce)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                           int root, MPI_Comm comm)
{
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE);
    int rc;
    c.root = root;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
}

int TJ_WRAPPER(MPI_Ireduce)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                            int root, MPI_Comm comm, MPI_Request *req)
{
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE);
    int rc;
    c.root = root;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ireduce(sbuf, rbuf, count, type, op, root, comm, req);
}

int TJ_WRAPPER(MPI_Allreduce)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm)
{
    tj_red_call_t c = RED_CALL(TJ_RED_ALLREDUCE);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int TJ_WRAPPER(MPI_Iallreduce)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    tj_red_call_t c = RED_CALL(TJ_RED_ALLREDUCE);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iallreduce(sbuf, rbuf, count, type, op, comm, req);
}

int TJ_WRAPPER(MPI_Reduce_scatter)(const void *sbuf, void *rbuf, const int rcounts[],
                                   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    int count = 0;
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE_SCATTER);
    int rc;
    c.rcounts = rcounts;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
}

int TJ_WRAPPER(MPI_Ireduce_scatter)(const void *sbuf, void *rbuf, const int rcounts[],
                                    MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    int count = 0;
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE_SCATTER);
    int rc;
    c.rcounts = rcounts;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ireduce_scatter(sbuf, rbuf, rcounts, type, op, comm, req);
}

int TJ_WRAPPER(MPI_Reduce_scatter_block)(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                         MPI_Op op, MPI_Comm comm)
{
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE_SCATTER_BLOCK);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Reduce_scatter_block(sbuf, rbuf, count, type, op, comm);
}

int TJ_WRAPPER(MPI_Ireduce_scatter_block)(const void *sbuf, void *rbuf, int count,
                                          MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                          MPI_Request *req)
{
    tj_red_call_t c = RED_CALL(TJ_RED_REDUCE_SCATTER_BLOCK);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Ireduce_scatter_block(sbuf, rbuf, count, type, op, comm, req);
}

int TJ_WRAPPER(MPI_Scan)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    tj_red_call_t c = RED_CALL(TJ_RED_SCAN);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Scan(sbuf, rbuf, count, type, op, comm);
}

int TJ_WRAPPER(MPI_Iscan)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, MPI_Request *req)
{
    tj_red_call_t c = RED_CALL(TJ_RED_SCAN);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iscan(sbuf, rbuf, count, type, op, comm, req);
}

int TJ_WRAPPER(MPI_Exscan)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                           MPI_Comm comm)
{
    tj_red_call_t c = RED_CALL(TJ_RED_EXSCAN);
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
}

int TJ_WRAPPER(MPI_Iexscan)(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm, MPI_Request *req)
{
    tj_red_call_t c = RED_CALL(TJ_RED_EXSCAN);
    int rc;
    if (take(&c, req, &rc))
        return rc;
    return PMPI_Iexscan(sbuf, rbuf, count, type, op, comm, req);
}

int TJ_WRAPPER(MPI_Reduce_local)(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type,
                                 MPI_Op op)
{
    tj_red_call_t c = {.kind = TJ_RED_LOCAL,
                       .sbuf = inbuf,
                       .rbuf = inoutbuf,
                       .count = count,
                       .type = type,
                       .op = op,
                       .comm = MPI_COMM_NULL};
    int rc;
    if (take(&c, NULL, &rc))
        return rc;
    return PMPI_Reduce_local(inbuf, inoutbuf, count, type, op);
}
