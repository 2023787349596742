/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls staged exactly through host memory: the system MPI runs the application's call, with its
 * own datatypes, counts and operation, on host mirrors (src/move/mirror.c) of the buffers that
 * are in device memory, and the mirrors of the buffers it writes are written back when the call
 * completes: at once for a blocking call, in the interposed Wait or Test for a request, or when
 * the caller says (window synchronisation, the end of a split collective). For the calls an MPI
 * that is not CUDA-aware cannot take on device memory: reductions, one-sided origin buffers,
 * file I/O, external32 packing. */
#ifndef TJ_CALLS_STAGED_H
#define TJ_CALLS_STAGED_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls/call_result.h"
#include "move/mirror.h"
#include "calls/request.h"
#include "type/table.h"

#define TJ_STAGED_MAX 3

/* One buffer argument of a call: `count` objects of `type` at `buf`. */
typedef struct {
    const void *buf;
    int64_t count;
    MPI_Datatype type;
    const tj_type_info_t *info; /* the type table's record, NULL when there is none */
    bool out;                   /* the MPI writes it: written back at completion */
} tj_staged_buf_t;

typedef struct {
    const char *fn; /* the MPI function, for messages */
    int n;
    bool has[TJ_STAGED_MAX]; /* mirrored (in device memory) */
    bool out[TJ_STAGED_MAX];
    tj_mirror_t m[TJ_STAGED_MAX];
    bool finished;          /* written back */
    tj_request_t *reserved; /* a call completed later: the record of its request, taken before
                               the system MPI starts it (NULL once used or for a blocking call) */
} tj_staged_t;

/* Mirror the buffers of @p bufs that lie in device or managed memory (one pointer query each).
 * With @p keep (a call completed later), the written buffers keep duplicates of their types, and
 * a request record is reserved (tj_staged_t.reserved), so that nothing can fail once the system
 * MPI has started the call: out of memory, the call fails before it starts. The
 * caller checks first whether the MPI takes device memory itself. On TJ_CALL_TAKEN *out is the
 * caller's, to release with tj_staged_release (or tj_staged_track). */
tj_call_result_t tj_staged_begin(const char *fn, int n, const tj_staged_buf_t *bufs, bool keep,
                                 tj_staged_t **out, int *rc);

/* The buffer to give the system MPI for argument @p i: its mirror, or @p buf itself. */
void *tj_staged_arg(const tj_staged_t *s, int i, const void *buf);

/* Write back the buffers the MPI wrote, once. MPI result. */
int tj_staged_finish(tj_staged_t *s);

void tj_staged_release(tj_staged_t *s);

/* After the system MPI's call returned @p rc and, non-blocking, its request *@p req: a blocking
 * call is finished and released now; a request finishes and releases it when the interposed
 * Wait or Test completes it. Returns the call's result (@p rc, or the write-back's error). */
int tj_staged_complete(tj_staged_t *s, int rc, MPI_Request *req);

#endif /* TJ_CALLS_STAGED_H */
