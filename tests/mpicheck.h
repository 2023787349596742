/* SPDX-License-Identifier: BSD-3-Clause */
/* What the MPI tests that compare typejit with the system MPI share: failures reported with the
 * rank, their start with the skip without a device taken by every rank together, and the three
 * ways a non-blocking call is completed. */
#ifndef TJ_TESTS_MPICHECK_H
#define TJ_TESTS_MPICHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "cudrv.h"

/* One failure: counted in @p failures, printed with the rank for the first @p limit of them (a
 * broken path fails every case; the first lines tell why). */
static inline void __attribute__((format(printf, 4, 5)))
mpicheck_fail(long *failures, long limit, int rank, const char *fmt, ...)
{
    va_list ap;
    if ((*failures)++ >= limit)
        return;
    fprintf(stderr, "rank %d: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

/* Opens the CUDA driver; whether every rank has a device. Every rank skips, or none: a rank left
 * alone would wait forever. */
static inline bool mpicheck_every_rank_has_device(void)
{
    int have = cudrv_open(), all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
}

/* MPI started, this process's rank and the number of ranks, MPI_ERRORS_RETURN on MPI_COMM_WORLD;
 * false, MPI finalized, when a rank has no device (the test then exits 77). */
static inline bool mpicheck_start(int *argc, char ***argv, int *rank, int *nranks)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    if (!mpicheck_every_rank_has_device()) {
        MPI_Finalize();
        return false;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return true;
}

/* The failures of every rank together. */
static inline long mpicheck_job_failures(long failures)
{
    long all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* Completes a non-blocking call in one of three ways, chosen by @p how: MPI_Wait, a loop of
 * MPI_Test, MPI_Waitall with a null request beside it. */
static inline int mpicheck_complete(MPI_Request *req, long how)
{
    int flag = 0, rc;
    switch (how % 3) {
    case 0:
        return MPI_Wait(req, MPI_STATUS_IGNORE);
    case 1:
        while (!flag)
            if ((rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return rc;
        return MPI_SUCCESS;
    default: {
        MPI_Request two[2] = {*req, MPI_REQUEST_NULL};
        /* Statuses, not MPI_STATUSES_IGNORE: MPICH's header declares the array's size to GCC,
         * which then warns about its sentinel (a pointer to nothing). */
        MPI_Status sts[2];
        rc = MPI_Waitall(2, two, sts);
        *req = two[0];
        return rc;
    }
    }
}

#endif /* TJ_TESTS_MPICHECK_H */
