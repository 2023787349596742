/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective wrappers: Alltoall, Alltoallv, Alltoallw, Neighbor_alltoall, Neighbor_alltoallv,
 * Neighbor_alltoallw, Neighbor_allgather, Neighbor_allgatherv, Allgather, Allgatherv, Gather,
 * Gatherv, Scatter, Scatterv, Bcast and their non-blocking forms, each also in its large-count
 * form (`_c`) where the MPI has them. A call whose buffers are in host memory goes to the system
 * MPI after one pointer query per side (none on a machine without a CUDA device); one with a
 * device buffer is typejit's (src/calls/coll.c), and its non-blocking request is completed by the
 * interposed Wait and Test calls. */
#include "gpu/cuda.h"
#include "interpose/coll_args.h"
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
    tj_call_result_t r;

    /* The collectives of a communicator keep their order: one the send queue holds goes to the
     * system MPI before this one, whoever makes it. */
    tj_send_queue_flush_collectives(c->comm);
    if (tj_gpu_absent() || !tj_interpose_active() || !tj_gpu_available())
        return false;
    c->lookup = tj_interpose_lookup;
    r = tj_coll_run(c, req, rc);
    if (r == TJ_CALL_FAILED)
        tj_mpi_raise(c->comm, *rc);
    return r != TJ_CALL_PASS;
}

/* Each family in its int and large-count forms: (suffix, large), then the names of its blocking
 * and non-blocking calls, its kind and its arguments (interpose/coll_args.h). */
#define FORMS(_m, ...) _m(, false, __VA_ARGS__) TJ_IF_LARGE(_m(_c, true, __VA_ARGS__))

#define COLL(_s, _large, _name, _iname, _kind, _args)                                              \
    TJ_FAMILY_WRAPPERS(tj_coll_call_t, take, _s, _large, _name, _iname, _kind, _args)
#define COLL_FAMILY(_name, _iname, _lower, _upper, _kind, _args)                                   \
    FORMS(COLL, _name, _iname, _kind, _args)
TJ_COLL_FAMILIES(COLL_FAMILY)
TJ_COLL_W_FAMILIES(COLL_FAMILY)
