/* SPDX-License-Identifier: BSD-3-Clause */
/* An MPI whose PMPI_Irecv takes its time after posting the receive, for the emu tests: preloaded
 * after libtypejit.so, it stands in front of the system MPI's PMPI_Irecv (the name typejit and the
 * tests' reference receives call) and pauses SLOW_IRECV_US microseconds (default 200) once the
 * receive is posted. That is a schedule any MPI may take under load; it makes the window in which
 * threads that share a communicator and tag, each posting a receive and then sending to itself,
 * take each other's messages wide enough that a test sees it every run, not once in many. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <time.h>

typedef int (*irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static irecv_fn next_irecv;
static long pause_us = 200;

__attribute__((constructor)) static void slow_irecv_init(void)
{
    const char *s = getenv("SLOW_IRECV_US");
    next_irecv = (irecv_fn)dlsym(RTLD_NEXT, "PMPI_Irecv");
    if (s != NULL)
        pause_us = atol(s);
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    int rc = next_irecv(buf, count, type, source, tag, comm, request);
    struct timespec pause = {pause_us / 1000000, pause_us % 1000000 * 1000};
    nanosleep(&pause, NULL);
    return rc;
}
