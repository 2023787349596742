/* SPDX-License-Identifier: BSD-3-Clause */
/* The Fortran entry points of point-to-point communication (p2p.c): sends, receives, matched
 * receives, the persistent inits and MPI_Buffer_attach, in Open MPI builds. The MPICH family's
 * bindings of these calls, which all take a buffer, reach the C wrappers (fortran.c says how each
 * family's bindings reach C). One line an entry point, its arguments' kinds as fortran_binding.h
 * describes them. */
#include "interpose/fortran_binding.h"

#if defined(OPEN_MPI) /* calls with a buffer: the MPICH family's bindings call the C wrappers */

FORTRAN_CALL(MPI_Send, send, SEND, (BUF, INT, TYPE, INT, INT, COMM))
FORTRAN_CALL(MPI_Ssend, ssend, SSEND, (BUF, INT, TYPE, INT, INT, COMM))
FORTRAN_CALL(MPI_Rsend, rsend, RSEND, (BUF, INT, TYPE, INT, INT, COMM))
FORTRAN_CALL(MPI_Bsend, bsend, BSEND, (BUF, INT, TYPE, INT, INT, COMM))
FORTRAN_CALL(MPI_Isend, isend, ISEND, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Issend, issend, ISSEND, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Irsend, irsend, IRSEND, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Ibsend, ibsend, IBSEND, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Send_init, send_init, SEND_INIT, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Ssend_init, ssend_init, SSEND_INIT, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Rsend_init, rsend_init, RSEND_INIT, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Bsend_init, bsend_init, BSEND_INIT, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Recv, recv, RECV, (BUF, INT, TYPE, INT, INT, COMM, STATUS))
FORTRAN_CALL(MPI_Irecv, irecv, IRECV, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Recv_init, recv_init, RECV_INIT, (BUF, INT, TYPE, INT, INT, COMM, REQUEST_OUT))
FORTRAN_CALL(MPI_Sendrecv, sendrecv, SENDRECV,
             (BUF, INT, TYPE, INT, INT, BUF, INT, TYPE, INT, INT, COMM, STATUS))
FORTRAN_CALL(MPI_Sendrecv_replace, sendrecv_replace, SENDRECV_REPLACE,
             (BUF, INT, TYPE, INT, INT, INT, INT, COMM, STATUS))
FORTRAN_CALL(MPI_Mrecv, mrecv, MRECV, (BUF, INT, TYPE, MESSAGE_INOUT, STATUS))
FORTRAN_CALL(MPI_Imrecv, imrecv, IMRECV, (BUF, INT, TYPE, MESSAGE_INOUT, REQUEST_OUT))
/* Refused on device memory (refused.c); the buffer is kept by the MPI as it is. */
FORTRAN_CALL(MPI_Buffer_attach, buffer_attach, BUFFER_ATTACH, (MEM, INT))

#endif /* OPEN_MPI */
