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
 * Each buffer may be MPI_BOTTOM; target displacements are INTEGER(KIND=MPI_ADDRESS_KIND). */
FORTRAN_CALL(MPI_Put, put, PUT, (BUF, INT, TYPE, INT, AINT, INT, TYPE, WIN))
FORTRAN_CALL(MPI_Rput, rput, RPUT, (BUF, INT, TYPE, INT, AINT, INT, TYPE, WIN, REQUEST_OUT))
FORTRAN_CALL(MPI_Get, get, GET, (BUF, INT, TYPE, INT, AINT, INT, TYPE, WIN))
FORTRAN_CALL(MPI_Rget, rget, RGET, (BUF, INT, TYPE, INT, AINT, INT, TYPE, WIN, REQUEST_OUT))
FORTRAN_CALL(MPI_Accumulate, accumulate, ACCUMULATE,
             (BUF, INT, TYPE, INT, AINT, INT, TYPE, OP, WIN))
FORTRAN_CALL(MPI_Raccumulate, raccumulate, RACCUMULATE,
             (BUF, INT, TYPE, INT, AINT, INT, TYPE, OP, WIN, REQUEST_OUT))
FORTRAN_CALL(MPI_Get_accumulate, get_accumulate, GET_ACCUMULATE,
             (BUF, INT, TYPE, BUF, INT, TYPE, INT, AINT, INT, TYPE, OP, WIN))
FORTRAN_CALL(MPI_Rget_accumulate, rget_accumulate, RGET_ACCUMULATE,
             (BUF, INT, TYPE, BUF, INT, TYPE, INT, AINT, INT, TYPE, OP, WIN, REQUEST_OUT))
FORTRAN_CALL(MPI_Fetch_and_op, fetch_and_op, FETCH_AND_OP, (BUF, BUF, TYPE, INT, AINT, OP, WIN))
FORTRAN_CALL(MPI_Compare_and_swap, compare_and_swap, COMPARE_AND_SWAP,
             (BUF, BUF, BUF, TYPE, INT, AINT, WIN))

/* ---- windows on memory ----------------------------------------------------------------------
 * The base is the window's memory itself, passed as it is (as Open MPI's bindings pass it). */
FORTRAN_CALL(MPI_Win_create, win_create, WIN_CREATE, (MEM, AINT, INT, INFO, COMM, WIN_OUT))
FORTRAN_CALL(MPI_Win_attach, win_attach, WIN_ATTACH, (WIN, MEM, AINT))

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

FORTRAN_CALL(MPI_Win_fence, win_fence, WIN_FENCE, (INT, WIN))
FORTRAN_CALL(MPI_Win_post, win_post, WIN_POST, (GROUP, INT, WIN))
FORTRAN_CALL(MPI_Win_complete, win_complete, WIN_COMPLETE, (WIN))
FORTRAN_CALL(MPI_Win_wait, win_wait, WIN_WAIT, (WIN))
FORTRAN_CALL(MPI_Win_test, win_test, WIN_TEST, (WIN, FLAG_OUT))
FORTRAN_CALL(MPI_Win_lock, win_lock, WIN_LOCK, (INT, INT, INT, WIN))
FORTRAN_CALL(MPI_Win_unlock, win_unlock, WIN_UNLOCK, (INT, WIN))
FORTRAN_CALL(MPI_Win_lock_all, win_lock_all, WIN_LOCK_ALL, (INT, WIN))
FORTRAN_CALL(MPI_Win_unlock_all, win_unlock_all, WIN_UNLOCK_ALL, (WIN))
FORTRAN_CALL(MPI_Win_sync, win_sync, WIN_SYNC, (WIN))
FORTRAN_CALL(MPI_Win_flush, win_flush, WIN_FLUSH, (INT, WIN))
FORTRAN_CALL(MPI_Win_flush_all, win_flush_all, WIN_FLUSH_ALL, (WIN))
FORTRAN_CALL(MPI_Win_flush_local, win_flush_local, WIN_FLUSH_LOCAL, (INT, WIN))
FORTRAN_CALL(MPI_Win_flush_local_all, win_flush_local_all, WIN_FLUSH_LOCAL_ALL, (WIN))
FORTRAN_CALL(MPI_Win_free, win_free, WIN_FREE, (WIN_INOUT))

#endif /* MPI_ABI_VERSION */
