/* SPDX-License-Identifier: BSD-3-Clause */
/* One-sided wrappers, for an MPI that is not CUDA-aware. The origin-side calls (Put, Get,
 * Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap and the request-based R forms) stage
 * device buffers through host memory (src/calls/rma.c); the window synchronisations that complete
 * them (fence, complete, unlock, flush and their all/local forms, and Win_free) then write back
 * what the MPI wrote. A window Win_create makes on device memory gets a host public copy, which
 * the system MPI's window is made on, kept consistent with the device memory by the owner's
 * synchronisations as MPI's separate memory model says (src/calls/window.c); device memory cannot
 * be attached to a dynamic window (the origins address it by its device addresses). */
#include "gpu/cuda.h"
#include "interpose/device.h"
#include "interpose/init.h"
#include "interpose/types.h"
#include "interpose/wrappers.h"
#include "move/model.h"
#include "calls/rma.h"
#include "calls/window.h"
#include "util/mpierr.h"

/* Stage @p n buffer arguments of @p fn when one is on the device and the MPI needs it; errors
 * typejit detects go through the window's error handler. */
static tj_call_result_t begin(const char *fn, int n, tj_staged_buf_t *bufs, MPI_Win win,
                              tj_rma_op_t **op, int *rc)
{
    tj_call_result_t r;

    if (!tj_interpose_device_calls() || tj_model_cuda_aware())
        return TJ_CALL_PASS;
    for (int i = 0; i < n; i++)
        bufs[i].info = tj_interpose_lookup(bufs[i].type);
    if ((r = tj_rma_begin(fn, n, bufs, op, rc)) == TJ_CALL_FAILED)
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
        tj_call_result_t r = begin(_fn, _n, _bufs, _win, &op, &rc);                                \
        if (r == TJ_CALL_PASS)                                                                     \
            return _pass;                                                                          \
        if (r == TJ_CALL_FAILED)                                                                   \
            return rc;                                                                             \
        rc = _staged;                                                                              \
        return tj_rma_issued(op, rc, _win, _target, _req);                                         \
    } while (0)

/* Each origin-side wrapper in its int and large-count forms from one definition: (suffix,
 * count type). */
#define FORMS(_m) _m(, int) TJ_IF_LARGE(_m(_c, MPI_Count))

/* An operation on one origin buffer and its request form, MPI_@p _name and MPI_@p _rname: the
 * origin buffer (of type @p _obuf_t, written when @p _writes), then the parameters @p _params,
 * whose names are @p _args, then the window. */
#define ONE_ORIGIN(_s, _name, _rname, _obuf_t, _writes, _params, _args)                            \
    int TJ_WRAPPER(MPI_##_name##_s)(_obuf_t obuf, TJ_UNPAREN _params, MPI_Win win)                 \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, _writes}};                             \
        ORIGIN_CALL("MPI_" #_name #_s, 1, b, win, target, NULL,                                    \
                    PMPI_##_name##_s(obuf, TJ_UNPAREN _args, win),                                 \
                    PMPI_##_name##_s(tj_rma_arg(op, 0, obuf), TJ_UNPAREN _args, win));             \
    }                                                                                              \
    int TJ_WRAPPER(MPI_##_rname##_s)(_obuf_t obuf, TJ_UNPAREN _params, MPI_Win win,                \
                                     MPI_Request * req)                                            \
    {                                                                                              \
        tj_staged_buf_t b[1] = {{obuf, ocount, otype, NULL, _writes}};                             \
        ORIGIN_CALL("MPI_" #_rname #_s, 1, b, win, target, req,                                    \
                    PMPI_##_rname##_s(obuf, TJ_UNPAREN _args, win, req),                           \
                    PMPI_##_rname##_s(tj_rma_arg(op, 0, obuf), TJ_UNPAREN _args, win, req));       \
    }
#define TARGET_PARAMS(_cnt)                                                                        \
    _cnt ocount, MPI_Datatype otype, int target, MPI_Aint tdisp, _cnt tcount, MPI_Datatype ttype
#define TARGET_ARGS ocount, otype, target, tdisp, tcount, ttype

#define PUT(_s, _cnt)                                                                              \
    ONE_ORIGIN(_s, Put, Rput, const void *, false, (TARGET_PARAMS(_cnt)), (TARGET_ARGS))
#define GET(_s, _cnt) ONE_ORIGIN(_s, Get, Rget, void *, true, (TARGET_PARAMS(_cnt)), (TARGET_ARGS))
#define ACCUMULATE(_s, _cnt)                                                                       \
    ONE_ORIGIN(_s, Accumulate, Raccumulate, const void *, false,                                   \
               (TARGET_PARAMS(_cnt), MPI_Op mop), (TARGET_ARGS, mop))
FORMS(PUT)
FORMS(GET)
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

/* ---- synchronisations ----------------------------------------------------------------------
 * Each does two things for typejit: at the window's owner, it moves the bytes the separate memory
 * model says it makes visible between a window's device memory and its host public copy
 * (src/calls/window.c), and at the origin it completes staged operations, whose bytes are then
 * written back. The system MPI's call is made even when typejit's part before it failed, so that
 * the other processes are not left waiting, and the failure is reported after it. */

/* Before the system MPI's synchronisation @p sync of @p win (@p assert its assertions, @p rank
 * the target of a lock or unlock): the window's own memory. MPI result. */
static int before(MPI_Win win, tj_window_sync_t sync, int assert, int rank)
{
    return tj_window_any() ? tj_window_before(win, sync, assert, rank) : MPI_SUCCESS;
}

/* After the system MPI's synchronisation returned @p rc: the window's own memory. */
static int own_after(int rc, MPI_Win win, tj_window_sync_t sync, int assert, int rank)
{
    if (rc != MPI_SUCCESS || !tj_window_any())
        return MPI_SUCCESS;
    return tj_window_after(win, sync, assert, rank);
}

/* After it returned @p rc: the staged operations towards @p target (-1: all) completed at the
 * origin, written back. */
static int completed(int rc, MPI_Win win, int target)
{
    if (rc != MPI_SUCCESS || !tj_rma_pending())
        return MPI_SUCCESS;
    return tj_rma_completed(win, target);
}

/* The result of a synchronisation: the system MPI's @p rc, else the first failure of typejit's
 * parts before it (@p early) and after it (@p own, @p done), raised through the window's error
 * handler. */
static int result(MPI_Win win, int rc, int early, int own, int done)
{
    int r = early != MPI_SUCCESS ? early : own != MPI_SUCCESS ? own : done;
    if (rc != MPI_SUCCESS || r == MPI_SUCCESS)
        return rc;
    return tj_mpi_raise_win(win, r);
}

int TJ_WRAPPER(MPI_Win_fence)(int assert, MPI_Win win)
{
    int early = before(win, TJ_WINDOW_FENCE, assert, -1);
    int rc = PMPI_Win_fence(assert, win);
    int own = own_after(rc, win, TJ_WINDOW_FENCE, assert, -1);
    return result(win, rc, early, own, completed(rc, win, -1));
}

int TJ_WRAPPER(MPI_Win_post)(MPI_Group group, int assert, MPI_Win win)
{
    int early = before(win, TJ_WINDOW_POST, assert, -1);
    return result(win, PMPI_Win_post(group, assert, win), early, MPI_SUCCESS, MPI_SUCCESS);
}

int TJ_WRAPPER(MPI_Win_wait)(MPI_Win win)
{
    int rc = PMPI_Win_wait(win);
    return result(win, rc, MPI_SUCCESS, own_after(rc, win, TJ_WINDOW_WAIT, 0, -1), MPI_SUCCESS);
}

int TJ_WRAPPER(MPI_Win_test)(MPI_Win win, int *flag)
{
    int rc = PMPI_Win_test(win, flag);
    if (rc != MPI_SUCCESS || !*flag)
        return rc;
    return result(win, rc, MPI_SUCCESS, own_after(rc, win, TJ_WINDOW_WAIT, 0, -1), MPI_SUCCESS);
}

int TJ_WRAPPER(MPI_Win_lock)(int type, int rank, int assert, MPI_Win win)
{
    int rc = PMPI_Win_lock(type, rank, assert, win);
    return result(win, rc, MPI_SUCCESS, own_after(rc, win, TJ_WINDOW_LOCK, assert, rank),
                  MPI_SUCCESS);
}

int TJ_WRAPPER(MPI_Win_unlock)(int rank, MPI_Win win)
{
    int early = before(win, TJ_WINDOW_UNLOCK, 0, rank);
    int rc = PMPI_Win_unlock(rank, win);
    return result(win, rc, early, MPI_SUCCESS, completed(rc, win, rank));
}

int TJ_WRAPPER(MPI_Win_lock_all)(int assert, MPI_Win win)
{
    int rc = PMPI_Win_lock_all(assert, win);
    return result(win, rc, MPI_SUCCESS, own_after(rc, win, TJ_WINDOW_LOCK_ALL, assert, -1),
                  MPI_SUCCESS);
}

int TJ_WRAPPER(MPI_Win_unlock_all)(MPI_Win win)
{
    int early = before(win, TJ_WINDOW_UNLOCK_ALL, 0, -1);
    int rc = PMPI_Win_unlock_all(win);
    return result(win, rc, early, MPI_SUCCESS, completed(rc, win, -1));
}

int TJ_WRAPPER(MPI_Win_sync)(MPI_Win win)
{
    int early = before(win, TJ_WINDOW_SYNC, 0, -1);
    return result(win, PMPI_Win_sync(win), early, MPI_SUCCESS, MPI_SUCCESS);
}

/* MPI_Win_complete and the flushes: they complete the staged operations towards @p _target
 * (-1: all). (name, parameters, arguments, target) */
#define COMPLETING(_name, _params, _args, _target)                                                 \
    int TJ_WRAPPER(MPI_Win_##_name) _params                                                        \
    {                                                                                              \
        int rc = PMPI_Win_##_name _args;                                                           \
        return result(win, rc, MPI_SUCCESS, MPI_SUCCESS, completed(rc, win, _target));             \
    }
COMPLETING(complete, (MPI_Win win), (win), -1)
COMPLETING(flush, (int rank, MPI_Win win), (rank, win), rank)
COMPLETING(flush_all, (MPI_Win win), (win), -1)
COMPLETING(flush_local, (int rank, MPI_Win win), (rank, win), rank)
COMPLETING(flush_local_all, (MPI_Win win), (win), -1)

int TJ_WRAPPER(MPI_Win_free)(MPI_Win *win)
{
    MPI_Win was = win != NULL ? *win : MPI_WIN_NULL;
    int rc = PMPI_Win_free(win), r = MPI_SUCCESS;

    if (rc != MPI_SUCCESS)
        return rc;
    if (tj_window_any())
        r = tj_window_freed(was);
    /* A correct program completed its operations before; an erroneous one's are released. */
    if (tj_rma_pending())
        tj_rma_completed(was, -1);
    /* The window and its error handler are gone: a failure goes to MPI_COMM_WORLD's. */
    return r != MPI_SUCCESS ? tj_mpi_raise(MPI_COMM_WORLD, r) : MPI_SUCCESS;
}

/* ---- windows --------------------------------------------------------------------------------- */

/* MPI_Win_create and its large-count form (an MPI_Aint displacement unit). Device memory with an
 * MPI that is not CUDA-aware: the system MPI's window is made on a host public copy of it
 * (src/calls/window.c). When that copy cannot be made, the window is made on no memory of this
 * process, so that the other processes in the collective call are not left waiting, and the call
 * fails (the window exists: the program frees it as any other). */
#define WIN_CREATE(_s, _unit)                                                                      \
    int TJ_WRAPPER(MPI_Win_create##_s)(void *base, MPI_Aint size, _unit disp_unit, MPI_Info info,  \
                                       MPI_Comm comm, MPI_Win *win)                                \
    {                                                                                              \
        tj_window_t *w = NULL;                                                                     \
        int rank = 0, rc;                                                                          \
        if (size <= 0 || !tj_interpose_device_calls() || tj_model_cuda_aware() ||                  \
            PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)                                            \
            return PMPI_Win_create##_s(base, size, disp_unit, info, comm, win);                    \
        if ((rc = tj_window_make("MPI_Win_create" #_s, base, size, rank, &w)) != MPI_SUCCESS) {    \
            if (PMPI_Win_create##_s(NULL, 0, disp_unit, info, comm, win) != MPI_SUCCESS)           \
                *win = MPI_WIN_NULL;                                                               \
            return tj_mpi_raise(comm, rc);                                                         \
        }                                                                                          \
        if (w == NULL)                                                                             \
            return PMPI_Win_create##_s(base, size, disp_unit, info, comm, win);                    \
        rc = PMPI_Win_create##_s(tj_window_public(w), size, disp_unit, info, comm, win);           \
        if (rc == MPI_SUCCESS)                                                                     \
            tj_window_created(w, *win);                                                            \
        else                                                                                       \
            tj_window_discard(w);                                                                  \
        return rc;                                                                                 \
    }
WIN_CREATE(, int)
TJ_IF_LARGE(WIN_CREATE(_c, MPI_Aint))

static const char attach_why[] =
    "device memory cannot be attached to a dynamic window when the system MPI is not CUDA-aware "
    "(the origins address attached memory by its device addresses, which no host copy can have)";

int TJ_WRAPPER(MPI_Win_attach)(MPI_Win win, void *base, MPI_Aint size)
{
    bool on = false;
    int rc;

    if (size > 0 && tj_interpose_device_calls() && !tj_model_cuda_aware()) {
        if ((rc = tj_interpose_on_device(base, 1, MPI_BYTE, &on)) == MPI_SUCCESS && on)
            rc = tj_interpose_refuse("MPI_Win_attach", attach_why);
        if (rc != MPI_SUCCESS)
            return tj_mpi_raise_win(win, rc);
    }
    return PMPI_Win_attach(win, base, size);
}

/* The attributes that tell where a window's memory is and which memory model it follows: for a
 * window on a public copy of device memory, its device memory and MPI_WIN_SEPARATE (the system
 * MPI would say the public copy and its own model). */
static const int separate_model = MPI_WIN_SEPARATE;

int TJ_WRAPPER(MPI_Win_get_attr)(MPI_Win win, int keyval, void *value, int *flag)
{
    int rc = PMPI_Win_get_attr(win, keyval, value, flag);
    void *base;

    if (rc != MPI_SUCCESS || !*flag || !tj_window_any() ||
        (keyval != MPI_WIN_BASE && keyval != MPI_WIN_MODEL) || (base = tj_window_base(win)) == NULL)
        return rc;
    if (keyval == MPI_WIN_BASE)
        *(void **)value = base;
    else
        *(int **)value = (int *)&separate_model; /* only read: MPI hands it out as int * */
    return rc;
}
