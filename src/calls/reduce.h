/* SPDX-License-Identifier: BSD-3-Clause */
/* Reductions on device buffers with an MPI that is not CUDA-aware: staged exactly through host
 * mirrors (src/move/mirror.c). The system MPI runs the application's reduction, with its datatype
 * and operation, on host copies of the device buffers; the result goes back to the device when
 * the call (or, non-blocking, the Wait or Test that completes it) returns. */
#ifndef TJ_CALLS_REDUCE_H
#define TJ_CALLS_REDUCE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls/call_result.h"
#include "type/table.h"

typedef enum {
    TJ_RED_REDUCE,
    TJ_RED_ALLREDUCE,
    TJ_RED_REDUCE_SCATTER,
    TJ_RED_REDUCE_SCATTER_BLOCK,
    TJ_RED_SCAN,
    TJ_RED_EXSCAN,
    TJ_RED_LOCAL, /* MPI_Reduce_local: sbuf is inbuf, rbuf inoutbuf; no communicator */
} tj_red_kind_t;

/* The arguments of one reduction, as the application passed them: `count` elements, or
 * MPI_Reduce_scatter's rcounts[] (int, or MPI_Count in the large-count form), or
 * MPI_Reduce_scatter_block's count per process. */
typedef struct {
    tj_red_kind_t kind;
    bool large; /* the large-count form (MPI_Reduce_c, ...): the system MPI gets that form */
    const void *sbuf;
    void *rbuf;
    int64_t count;
    const void *rcounts;
    MPI_Datatype type;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    const tj_type_info_t *info; /* the type table's record, NULL when there is none */
} tj_red_call_t;

/* Run @p c: blocking when @p req is NULL, else the system MPI's non-blocking form, whose request
 * (in *req) is completed, written back and released by the interposed Wait and Test calls. The
 * call is typejit's when a buffer it reads or writes is in device or managed memory and the MPI
 * is not CUDA-aware. */
tj_call_result_t tj_reduce_run(const tj_red_call_t *c, MPI_Request *req, int *rc);

/* Whether a buffer @p c reads or writes on this rank is in device or managed memory, without
 * running it: for the forms typejit does not run, which a device buffer makes the caller
 * refuse. */
bool tj_reduce_on_device(const tj_red_call_t *c);

#endif /* TJ_CALLS_REDUCE_H */
