/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of MPI_Init, MPI_Init_thread and MPI_Finalize (init.c), in every
 * family (fortran.c says how each family's bindings reach C). Fortran passes no arguments of the
 * command line: the C wrappers get none. */
#include "interpose/fortran_binding.h"

#if !defined(MPI_ABI_VERSION)

static void f_init(fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    tj_fortran_ierr(ierr, MPI_Init(&argc, &argv));
}
FORTRAN_NAMES(f_init, init, INIT)

static void f_init_thread(fint *required, fint *provided, fint *ierr)
{
    int argc = 0, prov = 0, rc;
    char **argv = NULL;
    rc = MPI_Init_thread(&argc, &argv, *required, &prov);
    if (rc == MPI_SUCCESS)
        *provided = prov;
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_init_thread, init_thread, INIT_THREAD)

static void f_finalize(fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Finalize());
}
FORTRAN_NAMES(f_finalize, finalize, FINALIZE)

#endif /* MPI_ABI_VERSION */
