/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI whose PMPI_Sendrecv takes its time between posting the receive and sending, for the emu
 * tests: preloaded after libtypejit.so, it stands in front of the system MPI's PMPI_Sendrecv (the
 * name typejit calls) and runs it as Irecv, a pause of SLOW_SENDRECV_US microseconds (default
 * 200), Send and Wait. That is a schedule any MPI may take under load; it makes a window in which
 * two threads that share a communicator and tag receive each other's messages wide enough that a
 * test sees it every time, not once in many runs. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
    static long pause_us = -1;
    MPI_Request req;
    int rc;

    if (pause_us < 0) {
        const char *s = getenv("SLOW_SENDRECV_US");
        pause_us = s != NULL ? atol(s) : 200;
    }
    if ((rc = PMPI_Irecv(rbuf, rcount, rtype, source, rtag, comm, &req)) != MPI_SUCCESS)
        return rc;
    struct timespec pause = {0, pause_us * 1000};
    nanosleep(&pause, NULL);
    if ((rc = PMPI_Send(sbuf, scount, stype, dest, stag, comm)) != MPI_SUCCESS) {
        PMPI_Cancel(&req);
        PMPI_Wait(&req, MPI_STATUS_IGNORE);
        return rc;
    }
    return PMPI_Wait(&req, status);
}
