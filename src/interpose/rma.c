/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided wrappers. The origin-side calls (Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap and the request-based R forms) stage device buffers through host memory when
 * the MPI is not CUDA-aware (src/send/rma.c); the window synchronisations that complete them
 * (fence, complete, unlock, flush and their all/local forms, and Win_free) then write back what
 * the MPI wrote. A window whose memory is on the device cannot be staged (other processes reach
 * it at any time): Win_create and Win_attach refuse it with an MPI that is not CUDA-aware. */
#include "gpu/cuda.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "send/model.h"
#include "send/rma.h"
#include "util/mpierr.h"

/* Stage @p n buffer arguments of @p fn when one is on the device and the MPI needs it; errors
 * typejit detects go through the window's error handler. */
static tj_staged_result_t begin(const char *fn, int n, tj_staged_buf_t *bufs, MPI_Win win,
                                tj_rma_op_t **op, int *rc)
{
    tj_staged_result_t r;

    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return TJ_STAGED_PASS;
    for (int i = 0; i < n; i++)
        bufs[i].info = tj_interpose_lookup(bufs[i].type);
    if ((r = tj_rma_begin(fn, n, bufs, op, rc)) == TJ_STAGED_FAILED)
        tj_mpi_raise_win(win, *rc);
    for (int i = 0; i < n; i++)
        tj_table_return(bufs[i].info);
    return r;
}

/* The pass, failure and staged outcomes of every origin-side wrapper: @p _pass is the system
 * MPI's call as the application made it, @p _staged the same with tj_rma_arg buffers. */
#define ORIGIN_CALL(_fn, _n, _bufs, _win, _target, _req, _pass, _staged)                           \
    do {                                                                                           \
        tj_rma_op_t *op;                                                                           \
        int rc;                                                                                    \
        switch (begin(_fn, _n, _bufs, _win, &op, &rc)) {                                           \
        case TJ_STAGED_PASS:                                                                       \
            return _pass;                                                                          \
        case TJ_STAGED_FAILED:                                                                     \
            return rc;                                                                             \
        case TJ_STAGED_OK:                                                                         \
            break;                                                                                 \
        }                                                                                          \
        rc = _staged;                                                                              \
        return tj_rma_issued(op, rc, _win, _target, _req);                                         \
    } while (0)

/* Each origin-side wrapper in its int and large-count forms from one definition: (suffix,
 * count type). */
#define FORMS(_m) _m(, int) TJ_IF_LARGE(_m(_c, MPI_Count))

#define PUT(_s, _cnt)                                                                              \
    int TJ_WRAPPER(MPI_Put##_s)(const void *obuf, _cnt ocount, MPI_Datatype otype, int target,     \
                                MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype, MPI_Win win)      \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, false}};                               \
        ORIGIN_CALL("MPI_Put" #_s, 1, b, win, target, NULL,                                        \
                    PMPI_Put##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, win),          \
                    PMPI_Put##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp, tcount,    \
                                 ttype, win));                                                     \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Rput##_s)(const void *obuf, _cnt ocount, MPI_Datatype otype, int target,    \
                                 MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype, MPI_Win win,     \
                                 MPI_Request *req)                                                 \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, false}};                               \
        ORIGIN_CALL("MPI_Rput" #_s, 1, b, win, target, req,                                        \
                    PMPI_Rput##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req),    \
                    PMPI_Rput##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp, tcount,   \
                                  ttype, win, req));                                               \
    }
FORMS(PUT)

#define GET(_s, _cnt)                                                                              \
    int TJ_WRAPPER(MPI_Get##_s)(void *obuf, _cnt ocount, MPI_Datatype otype, int target,           \
                                MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype, MPI_Win win)      \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, true}};                                \
        ORIGIN_CALL("MPI_Get" #_s, 1, b, win, target, NULL,                                        \
                    PMPI_Get##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, win),          \
                    PMPI_Get##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp, tcount,    \
                                 ttype, win));                                                     \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Rget##_s)(void *obuf, _cnt ocount, MPI_Datatype otype, int target,          \
                                 MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype, MPI_Win win,     \
                                 MPI_Request *req)                                                 \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, true}};                                \
        ORIGIN_CALL("MPI_Rget" #_s, 1, b, win, target, req,                                        \
                    PMPI_Rget##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, win, req),    \
                    PMPI_Rget##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp, tcount,   \
                                  ttype, win, req));                                               \
    }
FORMS(GET)

#define ACCUMULATE(_s, _cnt)                                                                       \
    int TJ_WRAPPER(MPI_Accumulate##_s)(const void *obuf, _cnt ocount, MPI_Datatype otype,          \
                                       int target, MPI_Aint tdisp, _cnt tcount,                    \
                                       MPI_Datatype ttype, MPI_Op mop, MPI_Win win)                \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, false}};                               \
        ORIGIN_CALL(                                                                               \
            "MPI_Accumulate" #_s, 1, b, win, target, NULL,                                         \
            PMPI_Accumulate##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, mop, win),      \
            PMPI_Accumulate##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp, tcount,     \
                                ttype, mop, win));                                                 \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Raccumulate##_s)(                                                           \
        const void *obuf, _cnt ocount, MPI_Datatype otype, int target, MPI_Aint tdisp,             \
        _cnt tcount, MPI_Datatype ttype, MPI_Op mop, MPI_Win win, MPI_Request *req)                \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, false}};                               \
        ORIGIN_CALL("MPI_Raccumulate" #_s, 1, b, win, target, req,                                 \
                    PMPI_Raccumulate##_s(obuf, ocount, otype, target, tdisp, tcount, ttype, mop,   \
                                         win, req),                                                \
                    PMPI_Raccumulate##_s(tj_rma_arg(op, 0, obuf), ocount, otype, target, tdisp,    \
                                         tcount, ttype, mop, win, req));                           \
    }
FORMS(ACCUMULATE)

/* With MPI_NO_OP the origin buffer is not read (it may be NULL). */
#define GET_ACCUMULATE(_s, _cnt)                                                                   \
    int TJ_WRAPPER(MPI_Get_accumulate##_s)(const void *obuf, _cnt ocount, MPI_Datatype otype,      \
                                           void *rbuf, _cnt rcount, MPI_Datatype rtype,            \
                                           int target, MPI_Aint tdisp, _cnt tcount,                \
                                           MPI_Datatype ttype, MPI_Op mop, MPI_Win win)            \
    {                                                                                              \
        tj_staged_buf_t b[2] = {{obuf, mop == MPI_NO_OP ? 0 : ocount, otype, NULL, false},         \
                                {rbuf, rcount, rtype, NULL, true}};                                \
        ORIGIN_CALL("MPI_Get_accumulate" #_s, 2, b, win, target, NULL,                             \
                    PMPI_Get_accumulate##_s(obuf, ocount, otype, rbuf, rcount, rtype, target,      \
                                            tdisp, tcount, ttype, mop, win),                       \
                    PMPI_Get_accumulate##_s(tj_rma_arg(op, 0, obuf), ocount, otype,                \
                                            tj_rma_arg(op, 1, rbuf), rcount, rtype, target, tdisp, \
                                            tcount, ttype, mop, win));                             \
    }                                                                                              \
    int TJ_WRAPPER(MPI_Rget_accumulate##_s)(                                                       \
        const void *obuf, _cnt ocount, MPI_Datatype otype, void *rbuf, _cnt rcount,                \
        MPI_Datatype rtype, int target, MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype,           \
        MPI_Op mop, MPI_Win win, MPI_Request *req)                                                 \
    {                                                                                              \
        tj_staged_buf_t b[2] = {{obuf, mop == MPI_NO_OP ? 0 : ocount, otype, NULL, false},         \
                                {rbuf, rcount, rtype, NULL, true}};                                \
        ORIGIN_CALL("MPI_Rget_accumulate" #_s, 2, b, win, target, req,                             \
                    PMPI_Rget_accumulate##_s(obuf, ocount, otype, rbuf, rcount, rtype, target,     \
                                             tdisp, tcount, ttype, mop, win, req),                 \
                    PMPI_Rget_accumulate##_s(tj_rma_arg(op, 0, obuf), ocount, otype,               \
                                             tj_rma_arg(op, 1, rbuf), rcount, rtype, target,       \
                                             tdisp, tcount, ttype, mop, win, req));                \
    }
FORMS(GET_ACCUMULATE)

int TJ_WRAPPER(MPI_Fetch_and_op)(const void *obuf, void *rbuf, MPI_Datatype type, int target,
                                 MPI_Aint tdisp, MPI_Op mop, MPI_Win win)
{
    tj_staged_buf_t b[2] = {{obuf, mop == MPI_NO_OP ? 0 : 1, type, NULL, false},
                            {rbuf, 1, type, NULL, true}};
    ORIGIN_CALL("MPI_Fetch_and_op", 2, b, win, target, NULL,
                PMPI_Fetch_and_op(obuf, rbuf, type, target, tdisp, mop, win),
                PMPI_Fetch_and_op(tj_rma_arg(op, 0, obuf), tj_rma_arg(op, 1, rbuf), type, target,
                                  tdisp, mop, win));
}

int TJ_WRAPPER(MPI_Compare_and_swap)(const void *obuf, const void *cbuf, void *rbuf,
                                     MPI_Datatype type, int target, MPI_Aint tdisp, MPI_Win win)
{
    tj_staged_buf_t b[3] = {
        {obuf, 1, type, NULL, false}, {cbuf, 1, type, NULL, false}, {rbuf, 1, type, NULL, true}};
    ORIGIN_CALL("MPI_Compare_and_swap", 3, b, win, target, NULL,
                PMPI_Compare_and_swap(obuf, cbuf, rbuf, type, target, tdisp, win),
                PMPI_Compare_and_swap(tj_rma_arg(op, 0, obuf), tj_rma_arg(op, 1, cbuf),
                                      tj_rma_arg(op, 2, rbuf), type, target, tdisp, win));
}

/* ---- the synchronisations that complete operations at the origin ---------------------------- */

/* After a synchronisation of @p win returned @p rc: the operations towards @p target (-1: all)
 * are complete; write back what they brought. */
static int completed(int rc, MPI_Win win, int target)
{
    int done;
    if (rc != MPI_SUCCESS || !tj_rma_pending())
        return rc;
    if ((done = tj_rma_completed(win, target)) != MPI_SUCCESS)
        tj_mpi_raise_win(win, done);
    return done;
}

int TJ_WRAPPER(MPI_Win_fence)(int assert, MPI_Win win)
{
    return completed(PMPI_Win_fence(assert, win), win, -1);
}

int TJ_WRAPPER(MPI_Win_complete)(MPI_Win win)
{
    return completed(PMPI_Win_complete(win), win, -1);
}

int TJ_WRAPPER(MPI_Win_unlock)(int rank, MPI_Win win)
{
    return completed(PMPI_Win_unlock(rank, win), win, rank);
}

int TJ_WRAPPER(MPI_Win_unlock_all)(MPI_Win win)
{
    return completed(PMPI_Win_unlock_all(win), win, -1);
}

int TJ_WRAPPER(MPI_Win_flush)(int rank, MPI_Win win)
{
    return completed(PMPI_Win_flush(rank, win), win, rank);
}

int TJ_WRAPPER(MPI_Win_flush_all)(MPI_Win win)
{
    return completed(PMPI_Win_flush_all(win), win, -1);
}

int TJ_WRAPPER(MPI_Win_flush_local)(int rank, MPI_Win win)
{
    return completed(PMPI_Win_flush_local(rank, win), win, rank);
}

int TJ_WRAPPER(MPI_Win_flush_local_all)(MPI_Win win)
{
    return completed(PMPI_Win_flush_local_all(win), win, -1);
}

int TJ_WRAPPER(MPI_Win_free)(MPI_Win *win)
{
    MPI_Win was = win != NULL ? *win : MPI_WIN_NULL;
    int rc = PMPI_Win_free(win);
    /* A correct program completed its operations before; an erroneous one's are released. */
    if (rc == MPI_SUCCESS && tj_rma_pending())
        tj_rma_completed(was, -1);
    return rc;
}

/* ---- windows --------------------------------------------------------------------------------- */

static const char window_why[] =
    "the window's memory is in device memory and the system MPI is not CUDA-aware (it reads and "
    "writes a window from host code whenever another process accesses it, so it cannot be "
    "staged)";

/* Whether a window's memory must be refused: MPI_ERR_BUFFER (after one error line) when it is
 * device memory and the MPI is not CUDA-aware, MPI_ERR_INTERN when the driver cannot tell where
 * it lies; MPI_SUCCESS to pass the call on. */
static int device_window(const char *fn, const void *base, MPI_Aint size)
{
    bool on = false;
    int rc;

    if (size <= 0 || !tj_interpose_device_calls() || tj_model_cuda_aware())
        return MPI_SUCCESS;
    if ((rc = tj_interpose_on_device(base, 1, MPI_BYTE, &on)) != MPI_SUCCESS)
        return rc;
    return on ? tj_interpose_refuse(fn, window_why) : MPI_SUCCESS;
}

/* MPI_Win_create and its large-count form (an MPI_Aint displacement unit). */
#define WIN_CREATE(_s, _unit)                                                                      \
    int TJ_WRAPPER(MPI_Win_create##_s)(void *base, MPI_Aint size, _unit disp_unit, MPI_Info info,  \
                                       MPI_Comm comm, MPI_Win *win)                                \
    {                                                                                              \
        int rc = device_window("MPI_Win_create" #_s, base, size);                                  \
        if (rc != MPI_SUCCESS) {                                                                   \
            tj_mpi_raise(comm, rc);                                                                \
            return rc;                                                                             \
        }                                                                                          \
        return PMPI_Win_create##_s(base, size, disp_unit, info, comm, win);                        \
    }
WIN_CREATE(, int)
TJ_IF_LARGE(WIN_CREATE(_c, MPI_Aint))

int TJ_WRAPPER(MPI_Win_attach)(MPI_Win win, void *base, MPI_Aint size)
{
    int rc = device_window("MPI_Win_attach", base, size);
    if (rc != MPI_SUCCESS) {
        tj_mpi_raise_win(win, rc);
        return rc;
    }
    return PMPI_Win_attach(win, base, size);
}
