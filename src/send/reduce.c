/* Reductions staged through host mirrors. Each call has up to two buffers that matter on this
 * rank: the input vector (sbuf, or the receive buffer with MPI_IN_PLACE) and the receive buffer
 * where it is significant. A device one gets a mirror holding its footprint; the system MPI runs
 * the very call on the mirrors (host buffers are passed as they are), so the result is the one
 * the system MPI computes on host buffers, bit for bit; the receive mirror is written back. */
#include "send/reduce.h"

#include <limits.h>
#include <stdlib.h>

#include "send/mirror.h"
#include "send/model.h"
#include "send/request.h"
#include "util/common.h"
#include "util/log.h"
#include "util/stats.h"

typedef struct {
    tj_red_call_t c;
    bool inplace;
    bool has_s, has_r; /* the mirrors in use */
    tj_mirror_t s, r;
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

static int call_system(red_t *x, MPI_Request *req)
{
    const tj_red_call_t *c = &x->c;
    const void *sb = x->inplace ? MPI_IN_PLACE : x->has_s ? tj_mirror_arg(&x->s) : c->sbuf;
    void *rb = x->has_r ? tj_mirror_arg(&x->r) : c->rbuf;
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

static void release(void *arg)
{
    red_t *x = arg;
    tj_mirror_free(&x->s);
    tj_mirror_free(&x->r);
    free(x);
}

static int finish(void *arg, const MPI_Status *status)
{
    red_t *x = arg;
    (void)status;
    return x->has_r ? tj_mirror_write_back(&x->r) : MPI_SUCCESS;
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
    if (c->sbuf != MPI_IN_PLACE) {
        tj_gpu_query((const char *)c->sbuf + info->true_lb, &where);
        if (is_gpu(where.kind))
            return true;
    }
    tj_gpu_query((const char *)c->rbuf + info->true_lb, &where);
    return is_gpu(where.kind);
}

tj_red_result_t tj_reduce_run(const tj_red_call_t *c, MPI_Request *req, int *rc)
{
    const char *fn = names[c->kind];
    int nsend, nrecv;
    bool refuse;
    red_t *x;

    if (tj_model_cuda_aware() || !tj_gpu_available() || !touches_device(c))
        return TJ_RED_PASS;
    if ((x = calloc(1, sizeof(*x))) == NULL) {
        tj_log_error("%s: out of memory describing a reduction", fn);
        return TJ_RED_PASS;
    }
    x->c = *c;
    if (!describe(x, &nsend, &nrecv, &refuse))
        goto pass;
    x->has_s = nsend > 0 && tj_mirror_find(c->info, c->type, c->sbuf, nsend, &x->s);
    x->has_r = nrecv > 0 && tj_mirror_find(c->info, c->type, c->rbuf, nrecv, &x->r);
    if (!x->has_s && !x->has_r)
        goto pass;
    if (refuse) {
        tj_log_error("%s on an intercommunicator with a device buffer: not supported by typejit "
                     "with an MPI that is not CUDA-aware; MPI_ERR_BUFFER",
                     fn);
        tj_stats_inc(TJ_STAT_calls_refused);
        *rc = MPI_ERR_BUFFER;
        release(x);
        return TJ_RED_FAILED;
    }
    tj_stats_inc(TJ_STAT_calls_staged);
    if ((x->has_s && (*rc = tj_mirror_fetch(&x->s, fn)) != MPI_SUCCESS) ||
        (x->has_r && (*rc = tj_mirror_fetch(&x->r, fn)) != MPI_SUCCESS) ||
        (req != NULL && x->has_r && (*rc = tj_mirror_keep_type(&x->r)) != MPI_SUCCESS)) {
        release(x);
        return TJ_RED_FAILED;
    }
    if ((*rc = call_system(x, req)) != MPI_SUCCESS) {
        release(x);
        return TJ_RED_DONE;
    }
    if (req != NULL) {
        tj_completion_t done = {finish, release, x};
        MPI_Status st;
        if (tj_request_add_completion(*req, &done) == TJ_OK)
            return TJ_RED_DONE;
        /* Not trackable: complete it here. */
        if ((*rc = PMPI_Wait(req, &st)) != MPI_SUCCESS) {
            release(x);
            return TJ_RED_DONE;
        }
    }
    *rc = finish(x, MPI_STATUS_IGNORE);
    release(x);
    return *rc == MPI_SUCCESS ? TJ_RED_DONE : TJ_RED_FAILED;

pass:
    release(x);
    return TJ_RED_PASS;
}
