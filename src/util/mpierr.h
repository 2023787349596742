/* SPDX-License-Identifier: BSD-3-Clause */
/* Errors typejit itself detects, raised as the system MPI raises its own. */
#ifndef TJ_UTIL_MPIERR_H
#define TJ_UTIL_MPIERR_H

#include <mpi.h>

/* Hands @p code to @p comm's error handler and returns it: nothing to call when the handler is
 * MPI_ERRORS_RETURN (Intel MPI 2021.19's standard-ABI library aborts in
 * MPI_Comm_call_errhandler even then), the handler otherwise. */
int tj_mpi_raise(MPI_Comm comm, int code);

/* The same for a window's, a file's and (MPI 4) a session's error handler. */
int tj_mpi_raise_win(MPI_Win win, int code);
int tj_mpi_raise_file(MPI_File fh, int code);
#if MPI_VERSION >= 4
int tj_mpi_raise_session(MPI_Session session, int code);
#endif

#endif /* TJ_UTIL_MPIERR_H */
