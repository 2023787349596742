/* SPDX-License-Identifier: BSD-3-Clause */
/* Reduction wrappers: Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block, Scan, Exscan,
 * their non-blocking forms, and Reduce_local, each also in its large-count form (`_c`) where the
 * MPI has them. A call with a device buffer and an MPI that is not
 * CUDA-aware is staged exactly through host memory (src/calls/reduce.c); every other call goes
 * to the system MPI, after at most two pointer queries (none on a machine without a device). */
#include "interpose/coll_args.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "calls/reduce.h"
#include "calls/send_queue.h"
#include "util/mpierr.h"

/* Whether typejit runs the call; *rc is then its result. Errors typejit itself detects go
 * through the communicator's error handler (MPI_COMM_WORLD's for Reduce_local, as Open MPI
 * raises them), as the system MPI's do. */
static bool take(tj_red_call_t *c, MPI_Request *req, int *rc)
{
    tj_call_result_t r;

    if (c->kind != TJ_RED_LOCAL)
        tj_send_queue_flush_collectives(c->comm); /* as in coll.c */
    if (!tj_interpose_device_calls())
        return false;
    c->info = tj_interpose_lookup(c->type);
    r = tj_reduce_run(c, req, rc);
    tj_table_return(c->info);
    if (r == TJ_CALL_FAILED)
        tj_mpi_raise(c->kind == TJ_RED_LOCAL ? MPI_COMM_WORLD : c->comm, *rc);
    return r != TJ_CALL_PASS;
}

/* Each wrapper in its int and large-count forms from one definition: (suffix, count type,
 * large), then the family's names; the blocking and non-blocking calls of a family share it, and
 * their arguments are the family's (interpose/coll_args.h). */
#define FORMS(_m, ...)                                                                             \
    _m(, int, false, __VA_ARGS__) TJ_IF_LARGE(_m(_c, MPI_Count, true, __VA_ARGS__))

#define REDUCTION(_s, _cnt, _large, _name, _iname, _kind, _args)                                   \
    TJ_FAMILY_WRAPPERS(tj_red_call_t, take, _s, _large, _name, _iname, _kind, _args)
#define REDUCTION_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                              \
    FORMS(REDUCTION, _name, _iname, _kind, _args)
TJ_RED_FAMILIES(REDUCTION_FAMILY)

#define REDUCE_LOCAL(_s, _cnt, _large, _unused)                                                    \
    int TJ_WRAPPER(MPI_Reduce_local##_s)(const void *inbuf, void *inoutbuf, _cnt count,            \
                                         MPI_Datatype type, MPI_Op op)                             \
    {                                                                                              \
        tj_red_call_t c = {.kind = TJ_RED_LOCAL,                                                   \
                           .large = _large,                                                        \
                           .sbuf = inbuf,                                                          \
                           .rbuf = inoutbuf,                                                       \
                           .count = count,                                                         \
                           .type = type,                                                           \
                           .op = op,                                                               \
                           .comm = MPI_COMM_NULL};                                                 \
        int rc;                                                                                    \
        if (take(&c, NULL, &rc))                                                                   \
            return rc;                                                                             \
        return PMPI_Reduce_local##_s(inbuf, inoutbuf, count, type, op);                            \
    }
FORMS(REDUCE_LOCAL, -)
