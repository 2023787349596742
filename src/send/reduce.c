/* Reductions staged through host mirrors (src/send/staged.c). Each call has up to two buffers that
 * matter on this rank: the input vector (sbuf, or the receive buffer with MPI_IN_PLACE) and the
 * receive buffer where it is significant. A device one gets a mirror holding its footprint; the
 * system MPI runs the very call on the mirrors (host buffers are passed as they are), so the
 * result is the one the system MPI computes on host buffers, bit for bit; the receive mirror is
 * written back. */
#include "send/reduce.h"

#include <limits.h>

#include "send/model.h"
#include "send/mirror.h"
#include "send/staged.h"
#include "util/common.h"
#include "util/log.h"
#include "util/stats.h"

typedef struct {
    tj_red_call_t c;
    bool inplace;
} red_t;

static const char *const names[] = {
    "MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Scan",   "MPI_Exscan",    "MPI_Reduce_local"};

/* How many elements of the type this rank's input vector (*nsend) and receive buffer (*nrecv)
 * hold; -1 when the buffer is not used here. False: arguments the system MPI must judge, or an
 * intercommunicator form typejit refuses (*refuse). */
static bool describe(red_t *x, int *nsend, int *nrecv, bool *refuse)
{
    const tj_red_call_t *c = &x->c;
    int inter = 0, rank = 0, size = 1;
    int64_t total = 0;

    *nsend = *nrecv = -1;
    *refuse = false;
    if (c->kind != TJ_RED_LOCAL &&
        (c->comm == MPI_COMM_NULL || PMPI_Comm_test_inter(c->comm, &inter) != MPI_SUCCESS ||
         PMPI_Comm_rank(c->comm, &rank) != MPI_SUCCESS ||
         PMPI_Comm_size(c->comm, &size) != MPI_SUCCESS))
        return false;
    x->inplace = !inter && c->kind != TJ_RED_LOCAL && c->sbuf == MPI_IN_PLACE;
    switch (c->kind) {
    case TJ_RED_REDUCE:
        if (inter) {
            if (c->root == MPI_ROOT)
                *nrecv = c->count;
            else if (c->root != MPI_PROC_NULL)
                *nsend = c->count;
            return true;
        }
        if (c->root < 0 || c->root >= size)
            return false;
        if (c->root == rank)
            *nrecv = c->count;
        if (!x->inplace)
            *nsend = c->count;
        return true;
    case TJ_RED_ALLREDUCE:
    case TJ_RED_SCAN:
    case TJ_RED_EXSCAN:
    case TJ_RED_LOCAL:
        *nrecv = c->count;
        if (!x->inplace)
            *nsend = c->count;
        return true;
    case TJ_RED_REDUCE_SCATTER:
        if (c->rcounts == NULL)
            return false;
        for (int i = 0; i < size; i++) {
            if (c->rcounts[i] < 0)
                return false;
            total += c->rcounts[i];
        }
        if (total > INT_MAX)
            return false;
        *refuse = inter;
        *nsend = x->inplace ? -1 : (int)total;
        *nrecv = x->inplace ? (int)total : c->rcounts[rank];
        return true;
    case TJ_RED_REDUCE_SCATTER_BLOCK:
        if (!tj_mul64(c->count, size, &total) || total > INT_MAX)
            return false;
        *refuse = inter;
        *nsend = x->inplace ? -1 : (int)total;
        *nrecv = x->inplace ? (int)total : c->count;
        return true;
    }
    return false;
}

static int call_system(const red_t *x, const tj_staged_t *st, MPI_Request *req)
{
    const tj_red_call_t *c = &x->c;
    const void *sb = x->inplace ? MPI_IN_PLACE : tj_staged_arg(st, 0, c->sbuf);
    void *rb = tj_staged_arg(st, 1, c->rbuf);
    MPI_Datatype t = c->type;
    MPI_Op op = c->op;
    MPI_Comm comm = c->comm;

    switch (c->kind) {
    case TJ_RED_REDUCE:
        return req ? PMPI_Ireduce(sb, rb, c->count, t, op, c->root, comm, req)
                   : PMPI_Reduce(sb, rb, c->count, t, op, c->root, comm);
    case TJ_RED_ALLREDUCE:
        return req ? PMPI_Iallreduce(sb, rb, c->count, t, op, comm, req)
                   : PMPI_Allreduce(sb, rb, c->count, t, op, comm);
    case TJ_RED_REDUCE_SCATTER:
        return req ? PMPI_Ireduce_scatter(sb, rb, c->rcounts, t, op, comm, req)
                   : PMPI_Reduce_scatter(sb, rb, c->rcounts, t, op, comm);
    case TJ_RED_REDUCE_SCATTER_BLOCK:
        return req ? PMPI_Ireduce_scatter_block(sb, rb, c->count, t, op, comm, req)
                   : PMPI_Reduce_scatter_block(sb, rb, c->count, t, op, comm);
    case TJ_RED_SCAN:
        return req ? PMPI_Iscan(sb, rb, c->count, t, op, comm, req)
                   : PMPI_Scan(sb, rb, c->count, t, op, comm);
    case TJ_RED_EXSCAN:
        return req ? PMPI_Iexscan(sb, rb, c->count, t, op, comm, req)
                   : PMPI_Exscan(sb, rb, c->count, t, op, comm);
    case TJ_RED_LOCAL:
        return PMPI_Reduce_local(sb, rb, c->count, t, op);
    }
    return MPI_ERR_INTERN;
}

static bool is_gpu(tj_mem_t m)
{
    return m == TJ_MEM_DEVICE || m == TJ_MEM_MANAGED;
}

/* The quick test every reduction on a machine with a device pays: is the first element of the
 * send or the receive buffer in device memory (whatever the counts; describe decides the rest)?
 * At most two pointer queries, no allocation. */
static bool touches_device(const tj_red_call_t *c)
{
    tj_type_info_t own;
    const tj_type_info_t *info = c->info;
    tj_gpu_ptr_t where;

    if (info == NULL) {
        tj_table_read_extents(c->type, &own);
        info = &own;
    }
    if (!info->extents || info->size == 0)
        return false;
    if (info->wide)
        return true; /* its bytes may lie apart: the mirrors look at every piece */
    if (c->sbuf != MPI_IN_PLACE) {
        tj_gpu_query((const char *)c->sbuf + info->true_lb, &where);
        if (is_gpu(where.kind))
            return true;
    }
    tj_gpu_query((const char *)c->rbuf + info->true_lb, &where);
    return is_gpu(where.kind);
}

bool tj_reduce_on_device(const tj_red_call_t *c)
{
    red_t x = {.c = *c};
    int nsend, nrecv;
    bool refuse;
    tj_mirror_t m;

    if (!tj_gpu_available() || !touches_device(c) || !describe(&x, &nsend, &nrecv, &refuse))
        return false;
    return (nsend > 0 && tj_mirror_find(c->info, c->type, c->sbuf, nsend, names[c->kind], &m)) ||
           (nrecv > 0 && tj_mirror_find(c->info, c->type, c->rbuf, nrecv, names[c->kind], &m));
}

tj_red_result_t tj_reduce_run(const tj_red_call_t *c, MPI_Request *req, int *rc)
{
    const char *fn = names[c->kind];
    red_t x = {.c = *c};
    int nsend, nrecv;
    bool refuse;
    tj_staged_t *st;

    if (tj_model_cuda_aware() || !tj_gpu_available() || !touches_device(c) ||
        !describe(&x, &nsend, &nrecv, &refuse))
        return TJ_RED_PASS;
    if (refuse) {
        tj_log_error("%s on an intercommunicator with a device buffer: not supported by typejit "
                     "with an MPI that is not CUDA-aware; MPI_ERR_BUFFER",
                     fn);
        tj_stats_inc(TJ_STAT_calls_refused);
        *rc = MPI_ERR_BUFFER;
        return TJ_RED_FAILED;
    }
    tj_staged_buf_t bufs[2] = {
        {c->sbuf, nsend > 0 ? nsend : 0, c->type, c->info, false},
        {c->rbuf, nrecv > 0 ? nrecv : 0, c->type, c->info, true},
    };
    switch (tj_staged_begin(fn, 2, bufs, req != NULL, &st, rc)) {
    case TJ_STAGED_PASS:
        return TJ_RED_PASS;
    case TJ_STAGED_FAILED:
        return TJ_RED_FAILED;
    case TJ_STAGED_OK:
        break;
    }
    if ((*rc = call_system(&x, st, req)) != MPI_SUCCESS) {
        tj_staged_release(st);
        return TJ_RED_DONE; /* the system MPI's error, through its error handler */
    }
    *rc = tj_staged_complete(st, MPI_SUCCESS, req);
    return *rc == MPI_SUCCESS ? TJ_RED_DONE : TJ_RED_FAILED;
}
