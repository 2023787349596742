/* SPDX-License-Identifier: BSD-3-Clause */
/* Reductions staged through host mirrors (src/calls/staged.c). Each call has up to two buffers that
 * matter on this rank: the input vector (sbuf, or the receive buffer with MPI_IN_PLACE) and the
 * receive buffer where it is significant. A device one gets a mirror holding its footprint; the
 * system MPI runs the very call on the mirrors (host buffers are passed as they are), so the
 * result is the one the system MPI computes on host buffers, bit for bit; the receive mirror is
 * written back. */
#include "calls/reduce.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/launch.h"
#include "move/count.h"
#include "type/lazy.h"
#include "move/model.h"
#include "move/mirror.h"
#include "calls/staged.h"
#include "move/span.h"
#include "type/element.h"
#include "util/common.h"
#include "util/config.h"
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
static int64_t rcount_at(const tj_red_call_t *c, int i)
{
    return c->large ? (int64_t)((const MPI_Count *)c->rcounts)[i] : ((const int *)c->rcounts)[i];
}

static bool describe(red_t *x, int64_t *nsend, int64_t *nrecv, bool *refuse)
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
            int64_t n = rcount_at(c, i);
            if (n < 0 || !tj_add64(total, n, &total))
                return false;
        }
        *refuse = inter;
        *nsend = x->inplace ? -1 : total;
        *nrecv = x->inplace ? total : rcount_at(c, rank);
        return true;
    case TJ_RED_REDUCE_SCATTER_BLOCK:
        if (!tj_mul64(c->count, size, &total))
            return false;
        *refuse = inter;
        *nsend = x->inplace ? -1 : total;
        *nrecv = x->inplace ? total : c->count;
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
    int64_t n = c->count;
    bool l = c->large;

    /* The form the application called: its counts fit it. */
    switch (c->kind) {
    case TJ_RED_REDUCE:
        return req ? TJ_COUNT_CALL(l, Ireduce, sb, rb, n, t, op, c->root, comm, req)
                   : TJ_COUNT_CALL(l, Reduce, sb, rb, n, t, op, c->root, comm);
    case TJ_RED_ALLREDUCE:
        return req ? TJ_COUNT_CALL(l, Iallreduce, sb, rb, n, t, op, comm, req)
                   : TJ_COUNT_CALL(l, Allreduce, sb, rb, n, t, op, comm);
    case TJ_RED_REDUCE_SCATTER:
        return req ? TJ_COUNT_CALL(l, Ireduce_scatter, sb, rb, c->rcounts, t, op, comm, req)
                   : TJ_COUNT_CALL(l, Reduce_scatter, sb, rb, c->rcounts, t, op, comm);
    case TJ_RED_REDUCE_SCATTER_BLOCK:
        return req ? TJ_COUNT_CALL(l, Ireduce_scatter_block, sb, rb, n, t, op, comm, req)
                   : TJ_COUNT_CALL(l, Reduce_scatter_block, sb, rb, n, t, op, comm);
    case TJ_RED_SCAN:
        return req ? TJ_COUNT_CALL(l, Iscan, sb, rb, n, t, op, comm, req)
                   : TJ_COUNT_CALL(l, Scan, sb, rb, n, t, op, comm);
    case TJ_RED_EXSCAN:
        return req ? TJ_COUNT_CALL(l, Iexscan, sb, rb, n, t, op, comm, req)
                   : TJ_COUNT_CALL(l, Exscan, sb, rb, n, t, op, comm);
    case TJ_RED_LOCAL:
        return TJ_COUNT_CALL(l, Reduce_local, sb, rb, n, t, op);
    }
    return MPI_ERR_INTERN;
}

/* The quick test every reduction on a machine with a device pays: is the first element of the
 * send or the receive buffer in device memory (whatever the counts; describe decides the rest)?
 * At most two pointer queries, no allocation. MPI_ERR_INTERN when a query failed (it said why):
 * the call fails. */
static int touches_device(const tj_red_call_t *c, bool *on)
{
    tj_type_info_t own = {0};
    const tj_type_info_t *info = c->info;
    tj_gpu_ptr_t where;

    *on = false;
    if (info == NULL) {
        tj_table_read_extents(c->type, &own);
        info = &own;
    }
    if (!info->extents || info->size == 0)
        return MPI_SUCCESS;
    if (info->wide) {
        *on = true; /* its bytes may lie apart: the mirrors look at every piece */
        return MPI_SUCCESS;
    }
    if (c->sbuf != MPI_IN_PLACE) {
        if (tj_gpu_query((const char *)c->sbuf + info->true_lb, &where) != TJ_OK)
            return MPI_ERR_INTERN;
        if ((*on = tj_gpu_device_like(where.kind)))
            return MPI_SUCCESS;
    }
    if (tj_gpu_query((const char *)c->rbuf + info->true_lb, &where) != TJ_OK)
        return MPI_ERR_INTERN;
    *on = tj_gpu_device_like(where.kind);
    return MPI_SUCCESS;
}

bool tj_reduce_on_device(const tj_red_call_t *c)
{
    red_t x = {.c = *c};
    int64_t nsend, nrecv;
    bool refuse, on;
    tj_mirror_t m;

    bool found;

    if (!tj_gpu_available())
        return false;
    /* A buffer the driver cannot place is never taken for host memory. */
    if (touches_device(c, &on) != MPI_SUCCESS)
        return true;
    if (!on || !describe(&x, &nsend, &nrecv, &refuse))
        return false;
    found = (nsend > 0 && tj_mirror_find(c->info, c->type, c->sbuf, nsend, names[c->kind], &m)) ||
            (nrecv > 0 && tj_mirror_find(c->info, c->type, c->rbuf, nrecv, names[c->kind], &m));
    if (found)
        tj_mirror_free(&m); /* only asked where the bytes are */
    return found;
}

/* ---- MPI_Reduce_local by a kernel --------------------------------------------------------- */

/* The expression of `o` (the inout element) and `a` (the input element) that Open MPI's own
 * operations compute, element by element (ompi/mca/op/base: out = out + in,
 * out = (out > in) ? out : in, out = out && in, ...); NULL for a pair the kernel does not take
 * (an invalid pair: the system MPI reports it). */
static const char *op_expr(MPI_Op op, int kind, const char **name)
{
    static const struct {
        MPI_Op op;
        const char *name, *expr;
        int kinds; /* bit k: valid for element kind k (TJ_ELEMENT_*) */
    } ops[] = {
        {MPI_SUM, "MPI_SUM", "o + a", 3},
        {MPI_PROD, "MPI_PROD", "o * a", 3},
        {MPI_MAX, "MPI_MAX", "(o > a) ? o : a", 3},
        {MPI_MIN, "MPI_MIN", "(o < a) ? o : a", 3},
        {MPI_LAND, "MPI_LAND", "o && a", 1},
        {MPI_LOR, "MPI_LOR", "o || a", 1},
        {MPI_LXOR, "MPI_LXOR", "(o ? 1 : 0) ^ (a ? 1 : 0)", 1},
        {MPI_BAND, "MPI_BAND", "o & a", 5},
        {MPI_BOR, "MPI_BOR", "o | a", 5},
        {MPI_BXOR, "MPI_BXOR", "o ^ a", 5},
    };
    for (size_t i = 0; i < TJ_ARRAY_SIZE(ops); i++)
        if (ops[i].op == op && (ops[i].kinds & (1 << kind))) {
            *name = ops[i].name;
            return ops[i].expr;
        }
    return NULL;
}

/* MPI_Reduce_local of a strided type of one predefined element type with a predefined
 * operation, both buffers in one context's device memory: one generated kernel, the operation
 * and element type baked in. TJ_CALL_PASS (nothing done) when the call does not fit; TJ_CALL_TAKEN
 * with the system MPI's verdict on the arguments (its error handler has run) or the kernel's
 * success; TJ_CALL_FAILED when the kernel failed on the device. */
static tj_call_result_t local_kernel_of(const tj_red_call_t *c, const tj_type_info_t *info,
                                        int *rc);

static tj_call_result_t local_kernel(const tj_red_call_t *c, int *rc)
{
    const tj_type_info_t *info = c->info;
    tj_call_result_t r;
    tj_gpu_ptr_t io;

    if (info != NULL && info->pending) {
        /* A type whose layout is pending may be one strided block: found out when the call is
         * on the device (type/lazy.h). */
        if (tj_gpu_query((const char *)c->rbuf + info->true_lb, &io) != TJ_OK) {
            /* A buffer the driver cannot place (the query said why) is never host memory. */
            *rc = MPI_ERR_INTERN;
            return TJ_CALL_FAILED;
        }
        if (!tj_gpu_device_like(io.kind))
            return TJ_CALL_PASS;
        info = tj_lazy_resolve(c->type, c->info);
    }
    r = local_kernel_of(c, info, rc);
    tj_lazy_return(c->info, info);
    return r;
}

static tj_call_result_t local_kernel_of(const tj_red_call_t *c, const tj_type_info_t *info, int *rc)
{
    const char *ctype, *expr, *opname;
    char what[96];
    int esize = 0, kind;
    tj_gpu_ptr_t in, io;
    int64_t lo, hi, reach;
    tj_words_t words;
    tj_gpu_scope_t scope;
    tj_status_t st;

    if (info == NULL || !info->strided || c->count <= 0 || info->wide ||
        tj_config()->jit == TJ_JIT_OFF || !tj_mul64(c->count - 1, info->extent, &reach))
        return TJ_CALL_PASS;
    if ((ctype = tj_element_ctype(tj_type_element(c->type), &esize, &kind)) == NULL ||
        (expr = op_expr(c->op, kind, &opname)) == NULL ||
        !tj_block_disjoint(&info->block, c->count))
        return TJ_CALL_PASS;
    /* Every element at an address of its size in both buffers: the plain word of a launch
     * between them. */
    words =
        tj_block_words(&info->block, c->count, (uintptr_t)c->rbuf + (uintptr_t)info->block.start,
                       (uintptr_t)c->sbuf + (uintptr_t)info->block.start);
    if ((words.edge != 0 ? words.edge : words.word) % esize != 0)
        return TJ_CALL_PASS;
    lo = info->true_lb + (reach < 0 ? reach : 0);
    hi = info->true_lb + info->true_extent + (reach > 0 ? reach : 0);
    if (tj_gpu_query((const char *)c->sbuf + info->true_lb, &in) != TJ_OK ||
        tj_gpu_query((const char *)c->rbuf + info->true_lb, &io) != TJ_OK)
        goto out_unplaced;
    if (!tj_gpu_device_like(in.kind) || !tj_gpu_device_like(io.kind) || in.ctx != io.ctx ||
        !tj_gpu_inside(&in, (uintptr_t)c->sbuf + (uintptr_t)lo,
                       (uintptr_t)c->sbuf + (uintptr_t)hi) ||
        !tj_gpu_inside(&io, (uintptr_t)c->rbuf + (uintptr_t)lo, (uintptr_t)c->rbuf + (uintptr_t)hi))
        return TJ_CALL_PASS;
    /* Whether the system MPI takes this type with this operation (Open MPI 4.1 refuses most
     * derived types with a predefined operation): its own checks, on no element. */
    if ((*rc = TJ_COUNT_CALL(c->large, Reduce_local, c->sbuf, c->rbuf, 0, c->type, c->op)) !=
        MPI_SUCCESS)
        return TJ_CALL_TAKEN;
    snprintf(what, sizeof(what), "MPI_Reduce_local %s on %s", opname, ctype);
    if (tj_launch_possible() != TJ_OK || tj_gpu_enter_at(&io, &scope) != TJ_OK)
        return TJ_CALL_PASS;
    {
        /* The strided kernel family with the operation as each word's statement (one element
         * per word): inout (the typed side) = EXPR(inout, in), from the launch path. */
        tj_launch_desc_t d = {.block = &info->block,
                              .count = c->count,
                              .op = {TJ_OP_REDUCE, ctype, expr, what},
                              .op_size = esize,
                              .dir = TJ_DIR_UNPACK,
                              .typed = (tj_devptr_t)(uintptr_t)c->rbuf,
                              .packed =
                                  (tj_devptr_t)(uintptr_t)c->sbuf + (tj_devptr_t)info->block.start,
                              .device = io.device,
                              .policy = TJ_LAUNCH_COMPILE};
        tj_launch_ready_t ready;
        if ((st = tj_launch_prepare(&d, &ready)) != TJ_OK) {
            tj_gpu_leave(&scope);
            return TJ_CALL_PASS; /* no kernel: the system MPI reduces on staged copies */
        }
        if ((st = tj_launch_go(&ready)) == TJ_OK)
            st = tj_gpu_sync();
    }
    tj_gpu_leave(&scope);
    if (st == TJ_OK) {
        *rc = MPI_SUCCESS;
        return TJ_CALL_TAKEN;
    }
    /* A failed launch wrote nothing (the inout buffer is read and written by the same thread:
     * a launch that ran partly cannot be redone); a kernel fault left the context unusable. */
    *rc = MPI_ERR_INTERN;
    return TJ_CALL_FAILED;
out_unplaced:
    /* A buffer the driver cannot place (the query said why) is never taken for host memory. */
    *rc = MPI_ERR_INTERN;
    return TJ_CALL_FAILED;
}

tj_call_result_t tj_reduce_run(const tj_red_call_t *c, MPI_Request *req, int *rc)
{
    const char *fn = names[c->kind];
    red_t x = {.c = *c};
    int64_t nsend, nrecv;
    bool refuse, on;
    tj_staged_t *st;
    tj_call_result_t r;

    if (c->kind == TJ_RED_LOCAL && tj_gpu_available() && (r = local_kernel(c, rc)) != TJ_CALL_PASS)
        return r;
    if (tj_model_cuda_aware() || !tj_gpu_available())
        return TJ_CALL_PASS;
    if ((*rc = touches_device(c, &on)) != MPI_SUCCESS)
        return TJ_CALL_FAILED; /* the query said why */
    if (!on || !describe(&x, &nsend, &nrecv, &refuse))
        return TJ_CALL_PASS;
    if (refuse) {
        tj_log_error("%s on an intercommunicator with a device buffer: not supported by typejit "
                     "with an MPI that is not CUDA-aware; MPI_ERR_BUFFER",
                     fn);
        tj_stats_inc(TJ_STAT_calls_refused);
        *rc = MPI_ERR_BUFFER;
        return TJ_CALL_FAILED;
    }
    tj_staged_buf_t bufs[2] = {
        {c->sbuf, nsend > 0 ? nsend : 0, c->type, c->info, false},
        {c->rbuf, nrecv > 0 ? nrecv : 0, c->type, c->info, true},
    };
    switch (tj_staged_begin(fn, 2, bufs, req != NULL, &st, rc)) {
    case TJ_CALL_PASS:
        return TJ_CALL_PASS;
    case TJ_CALL_FAILED:
        return TJ_CALL_FAILED;
    case TJ_CALL_TAKEN:
        break;
    }
    if ((*rc = call_system(&x, st, req)) != MPI_SUCCESS) {
        tj_staged_release(st);
        return TJ_CALL_TAKEN; /* the system MPI's error, through its error handler */
    }
    *rc = tj_staged_complete(st, MPI_SUCCESS, req);
    return *rc == MPI_SUCCESS ? TJ_CALL_TAKEN : TJ_CALL_FAILED;
}
