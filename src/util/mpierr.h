/* Errors typejit itself detects, raised as the system MPI raises its own. */
#ifndef TJ_UTIL_MPIERR_H
#define TJ_UTIL_MPIERR_H

#include <mpi.h>

/* Hands @p code to @p comm's error handler and returns it: nothing to call when the handler is
 * MPI_ERRORS_RETURN (Intel MPI 2021.19's standard-ABI library aborts in
 * MPI_Comm_call_errhandler even then), the handler otherwise. */
int tj_mpi_raise(MPI_Comm comm, int code);

#endif /* TJ_UTIL_MPIERR_H */
