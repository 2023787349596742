/* SPDX-License-Identifier: BSD-3-Clause */
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

/* One definition for each kind of object with an error handler. */
#define RAISE(_fn, _type, _kind, _null)                                                            \
    int _fn(_type obj, int code)                                                                   \
    {                                                                                              \
        MPI_Errhandler handler = MPI_ERRHANDLER_NULL;                                              \
        int returns = 0;                                                                           \
        if (obj == _null || PMPI_##_kind##_get_errhandler(obj, &handler) != MPI_SUCCESS)           \
            return code;                                                                           \
        returns = handler == MPI_ERRORS_RETURN;                                                    \
        if (handler != MPI_ERRHANDLER_NULL)                                                        \
            PMPI_Errhandler_free(&handler);                                                        \
        if (!returns)                                                                              \
            PMPI_##_kind##_call_errhandler(obj, code);                                             \
        return code;                                                                               \
    }
RAISE(tj_mpi_raise_win, MPI_Win, Win, MPI_WIN_NULL)
RAISE(tj_mpi_raise_file, MPI_File, File, MPI_FILE_NULL)
#if MPI_VERSION >= 4
RAISE(tj_mpi_raise_session, MPI_Session, Session, MPI_SESSION_NULL)
#endif
