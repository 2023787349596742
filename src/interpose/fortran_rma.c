/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of one-sided communication (rma.c): the origin calls, window creation
 * and attributes in Open MPI builds, and in every family the window synchronisations (which move
 * the bytes of windows in device memory and complete staged origin buffers) and the release of
 * a window. The MPICH family's bindings of the calls with a buffer reach the C wrappers; its
 * mpi_f08 synchronisations, which take no buffer, call PMPI_* directly (MPICH 4.0.2's
 * mpi_win_fence_f08_ calls PMPI_Win_fence), so an MPICH-family build exports these under their
 * f08 names (fortran.c says how each family's bindings reach C). */
#include <dlfcn.h>

#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

#if defined(OPEN_MPI)

/* ---- origin calls ---------------------------------------------------------------------------
 * Each buffer may be MPI_BOTTOM; target displacements are INTEGER(KIND=MPI_ADDRESS_KIND). Each
 * call and its request-based form (MPI_Put and MPI_Rput) come from one function, as for the
 * collectives. */
#define RMA_PAIR(_impl, _lower, _upper, _params, _args)                                            \
    REQUEST_PAIR(_impl, _lower, _upper, r##_lower, R##_upper, _params, _args)

/* Put and Get: the origin buffer and one target. */
#define PUT_OR_GET(_lower, _upper, _blocking, _request)                                            \
    static int rma_##_lower(void *origin, fint *ocount, fint *otype, fint *rank, MPI_Aint *disp,   \
                            fint *tcount, fint *ttype, fint *win, MPI_Request *req)                \
    {                                                                                              \
        void *o = tj_fortran_bottom(origin);                                                       \
        MPI_Datatype ot = PMPI_Type_f2c(*otype), tt = PMPI_Type_f2c(*ttype);                       \
        MPI_Win w = PMPI_Win_f2c(*win);                                                            \
        return req ? _request(o, *ocount, ot, *rank, *disp, *tcount, tt, w, req)                   \
                   : _blocking(o, *ocount, ot, *rank, *disp, *tcount, tt, w);                      \
    }                                                                                              \
    RMA_PAIR(rma_##_lower, _lower, _upper,                                                         \
             (void *origin, fint *ocount, fint *otype, fint *rank, MPI_Aint *disp, fint *tcount,   \
              fint *ttype, fint *win),                                                             \
             (origin, ocount, otype, rank, disp, tcount, ttype, win))

PUT_OR_GET(put, PUT, MPI_Put, MPI_Rput)
PUT_OR_GET(get, GET, MPI_Get, MPI_Rget)

static int rma_accumulate(void *origin, fint *ocount, fint *otype, fint *rank, MPI_Aint *disp,
                          fint *tcount, fint *ttype, fint *op, fint *win, MPI_Request *req)
{
    void *o = tj_fortran_bottom(origin);
    MPI_Datatype ot = PMPI_Type_f2c(*otype), tt = PMPI_Type_f2c(*ttype);
    MPI_Op p = PMPI_Op_f2c(*op);
    MPI_Win w = PMPI_Win_f2c(*win);
    return req ? MPI_Raccumulate(o, *ocount, ot, *rank, *disp, *tcount, tt, p, w, req)
               : MPI_Accumulate(o, *ocount, ot, *rank, *disp, *tcount, tt, p, w);
}
RMA_PAIR(rma_accumulate, accumulate, ACCUMULATE,
         (void *origin, fint *ocount, fint *otype, fint *rank, MPI_Aint *disp, fint *tcount,
          fint *ttype, fint *op, fint *win),
         (origin, ocount, otype, rank, disp, tcount, ttype, op, win))

static int rma_get_accumulate(void *origin, fint *ocount, fint *otype, void *result, fint *rcount,
                              fint *rtype, fint *rank, MPI_Aint *disp, fint *tcount, fint *ttype,
                              fint *op, fint *win, MPI_Request *req)
{
    void *o = tj_fortran_bottom(origin), *r = tj_fortran_bottom(result);
    MPI_Datatype ot = PMPI_Type_f2c(*otype), rt = PMPI_Type_f2c(*rtype), tt = PMPI_Type_f2c(*ttype);
    MPI_Op p = PMPI_Op_f2c(*op);
    MPI_Win w = PMPI_Win_f2c(*win);
    return req ? MPI_Rget_accumulate(o, *ocount, ot, r, *rcount, rt, *rank, *disp, *tcount, tt, p,
                                     w, req)
               : MPI_Get_accumulate(o, *ocount, ot, r, *rcount, rt, *rank, *disp, *tcount, tt, p,
                                    w);
}
RMA_PAIR(rma_get_accumulate, get_accumulate, GET_ACCUMULATE,
         (void *origin, fint *ocount, fint *otype, void *result, fint *rcount, fint *rtype,
          fint *rank, MPI_Aint *disp, fint *tcount, fint *ttype, fint *op, fint *win),
         (origin, ocount, otype, result, rcount, rtype, rank, disp, tcount, ttype, op, win))

static void f_fetch_and_op(void *origin, void *result, fint *type, fint *rank, MPI_Aint *disp,
                           fint *op, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Fetch_and_op(tj_fortran_bottom(origin), tj_fortran_bottom(result),
                                           PMPI_Type_f2c(*type), *rank, *disp, PMPI_Op_f2c(*op),
                                           PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_fetch_and_op, fetch_and_op, FETCH_AND_OP)

static void f_compare_and_swap(void *origin, void *compare, void *result, fint *type, fint *rank,
                               MPI_Aint *disp, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr,
                    MPI_Compare_and_swap(tj_fortran_bottom(origin), tj_fortran_bottom(compare),
                                         tj_fortran_bottom(result), PMPI_Type_f2c(*type), *rank,
                                         *disp, PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_compare_and_swap, compare_and_swap, COMPARE_AND_SWAP)

/* ---- windows on memory ----------------------------------------------------------------------
 * The base is the window's memory itself, passed as it is (as Open MPI's bindings pass it). */

static void f_win_create(void *base, MPI_Aint *size, fint *disp_unit, fint *info, fint *comm,
                         fint *win, fint *ierr)
{
    MPI_Win w;
    int rc =
        MPI_Win_create(base, *size, *disp_unit, PMPI_Info_f2c(*info), PMPI_Comm_f2c(*comm), &w);
    if (rc == MPI_SUCCESS)
        *win = PMPI_Win_c2f(w);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_win_create, win_create, WIN_CREATE)

static void f_win_attach(fint *win, void *base, MPI_Aint *size, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Win_attach(PMPI_Win_f2c(*win), base, *size));
}
FORTRAN_NAMES(f_win_attach, win_attach, WIN_ATTACH)

/* Window attributes. MPI_WIN_BASE and MPI_WIN_MODEL through the C wrapper, which answers them for
 * a window on a host copy of device memory (Fortran gets the address and the model as integers,
 * as Open MPI's binding gives them); every other attribute through Open MPI's own binding, which
 * converts attribute values between the languages. Open MPI's Fortran keyvals are its C ones. */
static void f_win_get_attr(fint *win, fint *keyval, MPI_Aint *value, fint *flag, fint *ierr)
{
    static void (*binding)(fint *, fint *, MPI_Aint *, fint *, fint *);
    void *v = NULL;
    int found = 0, rc;

    if (*keyval != MPI_WIN_BASE && *keyval != MPI_WIN_MODEL) {
        if (binding == NULL)
            *(void **)&binding = dlsym(RTLD_NEXT, "pmpi_win_get_attr_");
        if (binding != NULL) {
            binding(win, keyval, value, flag, ierr);
            return;
        }
    }
    rc = MPI_Win_get_attr(PMPI_Win_f2c(*win), *keyval, &v, &found);
    if (rc == MPI_SUCCESS) {
        *flag = found ? 1 : 0; /* gfortran's .TRUE. */
        if (found)
            *value = *keyval == MPI_WIN_MODEL ? (MPI_Aint) * (int *)v : (MPI_Aint)v;
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_win_get_attr, win_get_attr, WIN_GET_ATTR)

#endif /* OPEN_MPI */

/* ---- synchronisations and release: no buffer, every family ---------------------------------- */

static void f_win_fence(fint *assert_, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Win_fence(*assert_, PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_win_fence, win_fence, WIN_FENCE)

/* The synchronisations of one window (Win_complete, Win_unlock_all, Win_flush_all,
 * Win_flush_local_all). */
#define SYNC_WIN(_lower, _upper, _c)                                                               \
    static void f_##_lower(fint *win, fint *ierr)                                                  \
    {                                                                                              \
        tj_fortran_ierr(ierr, _c(PMPI_Win_f2c(*win)));                                             \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

/* The synchronisations of one target of a window (Win_unlock, Win_flush, Win_flush_local). */
#define SYNC_TARGET(_lower, _upper, _c)                                                            \
    static void f_##_lower(fint *rank, fint *win, fint *ierr)                                      \
    {                                                                                              \
        tj_fortran_ierr(ierr, _c(*rank, PMPI_Win_f2c(*win)));                                      \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

SYNC_WIN(win_complete, WIN_COMPLETE, MPI_Win_complete)
SYNC_WIN(win_wait, WIN_WAIT, MPI_Win_wait)
SYNC_WIN(win_unlock_all, WIN_UNLOCK_ALL, MPI_Win_unlock_all)
SYNC_WIN(win_sync, WIN_SYNC, MPI_Win_sync)
SYNC_WIN(win_flush_all, WIN_FLUSH_ALL, MPI_Win_flush_all)
SYNC_WIN(win_flush_local_all, WIN_FLUSH_LOCAL_ALL, MPI_Win_flush_local_all)
SYNC_TARGET(win_unlock, WIN_UNLOCK, MPI_Win_unlock)
SYNC_TARGET(win_flush, WIN_FLUSH, MPI_Win_flush)
SYNC_TARGET(win_flush_local, WIN_FLUSH_LOCAL, MPI_Win_flush_local)

static void f_win_post(fint *group, fint *assert_, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Win_post(PMPI_Group_f2c(*group), *assert_, PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_win_post, win_post, WIN_POST)

static void f_win_test(fint *win, fint *flag, fint *ierr)
{
    int f = 0;
    int rc = MPI_Win_test(PMPI_Win_f2c(*win), &f);
    if (rc == MPI_SUCCESS)
        *flag = f ? 1 : 0; /* gfortran's .TRUE. */
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_win_test, win_test, WIN_TEST)

static void f_win_lock(fint *type, fint *rank, fint *assert_, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Win_lock(*type, *rank, *assert_, PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_win_lock, win_lock, WIN_LOCK)

static void f_win_lock_all(fint *assert_, fint *win, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Win_lock_all(*assert_, PMPI_Win_f2c(*win)));
}
FORTRAN_NAMES(f_win_lock_all, win_lock_all, WIN_LOCK_ALL)

HANDLE_CALL(MPI_Win_free, win_free, WIN_FREE, MPI_Win, Win)

#endif /* MPI_ABI_VERSION */
