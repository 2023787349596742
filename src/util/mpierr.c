/* Errors typejit itself detects, raised as the system MPI raises its own. */
#include "util/mpierr.h"

int tj_mpi_raise(MPI_Comm comm, int code)
{
    MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
    int returns = 0;

    if (comm == MPI_COMM_NULL || PMPI_Comm_get_errhandler(comm, &handler) != MPI_SUCCESS)
        return code;
    returns = handler == MPI_ERRORS_RETURN;
    if (handler != MPI_ERRHANDLER_NULL)
        PMPI_Errhandler_free(&handler);
    if (!returns)
        PMPI_Comm_call_errhandler(comm, code);
    return code;
}
