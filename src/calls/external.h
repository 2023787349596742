/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Pack_external and MPI_Unpack_external with a buffer in device memory: the typed side is
 * staged through a host mirror (src/calls/staged.c), the packed side through host memory of the
 * bytes the call moves, and the system MPI converts to or from the external data representation
 * on the host, with the application's own arguments (so errors are the system MPI's), except a
 * packed buffer too short for the call: MPI_ERR_TRUNCATE, nothing written, as Open MPI answers
 * (the MPICH family would write past its end). With either kind of MPI. Counts, sizes and
 * positions are 64-bit: the int and the large-count forms (MPI_Pack_external_c, ...) share this;
 * typejit's own calls of the system MPI use the form the values fit (src/move/count.c). */
#ifndef TJ_CALLS_EXTERNAL_H
#define TJ_CALLS_EXTERNAL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls/call_result.h"
#include "calls/staged.h"
#include "type/table.h"

/* TJ_CALL_PASS: no buffer the call touches is in device memory, the caller passes it on;
 * TJ_CALL_TAKEN: done, *rc is the system MPI's result (its error handler has run);
 * TJ_CALL_FAILED: typejit's staging failed or the packed buffer is too short, *rc is the error
 * class to report. @p info may be NULL. */
tj_call_result_t tj_external_pack(const tj_type_info_t *info, const char *datarep,
                                  const void *inbuf, int64_t incount, MPI_Datatype type,
                                  void *outbuf, int64_t outsize, int64_t *position, int *rc);
tj_call_result_t tj_external_unpack(const tj_type_info_t *info, const char *datarep,
                                    const void *inbuf, int64_t insize, int64_t *position,
                                    void *outbuf, int64_t outcount, MPI_Datatype type, int *rc);

#endif /* TJ_CALLS_EXTERNAL_H */
