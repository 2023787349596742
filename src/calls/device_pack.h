/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Pack and MPI_Unpack with a device buffer on either side: their checks, then the move
 * (move/move.h), by a kernel or staged through host memory. */
#ifndef TJ_CALLS_DEVICE_PACK_H
#define TJ_CALLS_DEVICE_PACK_H

#include <mpi.h>
#include <stdbool.h>

#include "calls/call_result.h"
#include "type/table.h"

/* MPI_Pack / MPI_Unpack when a byte the call touches is in device or managed memory:
 * TJ_CALL_TAKEN, with the system MPI's result, position update and error code in @p rc; the
 * bytes are in place when it returns (one wait, or none when nothing ran on the device).
 * TJ_CALL_PASS (nothing done) for host buffers and calls that move no bytes. @p info may be NULL
 * for a type typejit has no record of. One pointer query per side, none without a device; a
 * query the driver fails fails the call (MPI_ERR_INTERN). Errors typejit detects have been
 * through @p comm's error handler. */
tj_call_result_t tj_device_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                int64_t incount, void *outbuf, int64_t outsize, int64_t *position,
                                MPI_Comm comm, int *rc);
tj_call_result_t tj_device_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                                  int64_t insize, int64_t *position, void *outbuf, int64_t outcount,
                                  MPI_Comm comm, int *rc);

#endif /* TJ_CALLS_DEVICE_PACK_H */
