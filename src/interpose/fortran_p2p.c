/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of point-to-point communication (p2p.c): sends, receives, matched
 * receives, the persistent inits and MPI_Buffer_attach, in Open MPI builds. The MPICH family's
 * bindings of these calls, which all take a buffer, reach the C wrappers (fortran.c says how each
 * family's bindings reach C). Buffers may be MPI_BOTTOM. */
#include "interpose/fortran_binding.h"

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

/* Blocking sends: MPI_Send, MPI_Ssend, MPI_Rsend, MPI_Bsend. */
#define BLOCKING_SEND(_c, _lower, _upper)                                                          \
    static void f_##_lower(void *buf, fint *count, fint *datatype, fint *dest, fint *tag,          \
                           fint *comm, fint *ierr)                                                 \
    {                                                                                              \
        tj_fortran_ierr(ierr, _c(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest,  \
                                 *tag, PMPI_Comm_f2c(*comm)));                                     \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

BLOCKING_SEND(MPI_Send, send, SEND)
BLOCKING_SEND(MPI_Ssend, ssend, SSEND)
BLOCKING_SEND(MPI_Rsend, rsend, RSEND)
BLOCKING_SEND(MPI_Bsend, bsend, BSEND)

/* Calls that return one request: the non-blocking sends and receive, the persistent inits. */
#define REQUEST_CALL(_c, _lower, _upper)                                                           \
    static void f_##_lower(void *buf, fint *count, fint *datatype, fint *peer, fint *tag,          \
                           fint *comm, fint *request, fint *ierr)                                  \
    {                                                                                              \
        MPI_Request r;                                                                             \
        int rc = _c(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *peer, *tag,         \
                    PMPI_Comm_f2c(*comm), &r);                                                     \
        if (rc == MPI_SUCCESS)                                                                     \
            *request = PMPI_Request_c2f(r);                                                        \
        tj_fortran_ierr(ierr, rc);                                                                 \
    }                                                                                              \
    FORTRAN_NAMES(f_##_lower, _lower, _upper)

REQUEST_CALL(MPI_Isend, isend, ISEND)
REQUEST_CALL(MPI_Issend, issend, ISSEND)
REQUEST_CALL(MPI_Irsend, irsend, IRSEND)
REQUEST_CALL(MPI_Ibsend, ibsend, IBSEND)
REQUEST_CALL(MPI_Irecv, irecv, IRECV)
REQUEST_CALL(MPI_Send_init, send_init, SEND_INIT)
REQUEST_CALL(MPI_Ssend_init, ssend_init, SSEND_INIT)
REQUEST_CALL(MPI_Rsend_init, rsend_init, RSEND_INIT)
REQUEST_CALL(MPI_Bsend_init, bsend_init, BSEND_INIT)
REQUEST_CALL(MPI_Recv_init, recv_init, RECV_INIT)

static void f_recv(void *buf, fint *count, fint *datatype, fint *source, fint *tag, fint *comm,
                   fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Recv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *source, *tag,
                      PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_recv, recv, RECV)

static void f_sendrecv(void *sendbuf, fint *sendcount, fint *sendtype, fint *dest, fint *sendtag,
                       void *recvbuf, fint *recvcount, fint *recvtype, fint *source, fint *recvtag,
                       fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Sendrecv(tj_fortran_bottom(sendbuf), *sendcount, PMPI_Type_f2c(*sendtype), *dest,
                          *sendtag, tj_fortran_bottom(recvbuf), *recvcount,
                          PMPI_Type_f2c(*recvtype), *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv, sendrecv, SENDRECV)

static void f_sendrecv_replace(void *buf, fint *count, fint *datatype, fint *dest, fint *sendtag,
                               fint *source, fint *recvtag, fint *comm, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    int rc = MPI_Sendrecv_replace(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), *dest,
                                  *sendtag, *source, *recvtag, PMPI_Comm_f2c(*comm), s);
    if (rc == MPI_SUCCESS)
        tj_fortran_status_out(s, status);
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_sendrecv_replace, sendrecv_replace, SENDRECV_REPLACE)

static void f_mrecv(void *buf, fint *count, fint *datatype, fint *message, fint *status, fint *ierr)
{
    MPI_Status cs, *s = tj_fortran_status_in(status, &cs);
    MPI_Message m = PMPI_Message_f2c(*message);
    int rc = MPI_Mrecv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, s);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        tj_fortran_status_out(s, status);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_mrecv, mrecv, MRECV)

static void f_imrecv(void *buf, fint *count, fint *datatype, fint *message, fint *request,
                     fint *ierr)
{
    MPI_Message m = PMPI_Message_f2c(*message);
    MPI_Request r;
    int rc = MPI_Imrecv(tj_fortran_bottom(buf), *count, PMPI_Type_f2c(*datatype), &m, &r);
    if (rc == MPI_SUCCESS) {
        *message = PMPI_Message_c2f(m);
        *request = PMPI_Request_c2f(r);
    }
    tj_fortran_ierr(ierr, rc);
}
FORTRAN_NAMES(f_imrecv, imrecv, IMRECV)

/* Refused on device memory (refused.c); the buffer is kept by the MPI as it is. */
static void f_buffer_attach(void *buffer, fint *size, fint *ierr)
{
    tj_fortran_ierr(ierr, MPI_Buffer_attach(buffer, *size));
}
FORTRAN_NAMES(f_buffer_attach, buffer_attach, BUFFER_ATTACH)

#endif /* OPEN_MPI */
