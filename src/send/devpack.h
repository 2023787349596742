/* MPI_Pack and MPI_Unpack with a device buffer on either side: JIT kernels where the type is
 * strided, staging through host memory where it is not or a kernel cannot serve the call. */
#ifndef TJ_SEND_DEVPACK_H
#define TJ_SEND_DEVPACK_H

#include <mpi.h>
#include <stdbool.h>

#include "type/table.h"

/* Kernels for a freshly committed type, when a device is present or TYPEJIT_JIT=always. */
void tj_devpack_prepare(tj_type_info_t *info);

/* MPI_Pack / MPI_Unpack when a byte the call touches is in device or managed memory: true, with
 * the system MPI's result, position update and error code in @p rc. False (nothing done) for
 * host buffers and calls that move no bytes: the caller passes those on. @p info may be NULL
 * for a type typejit has no record of. One pointer query per side, none without a device. */
bool tj_devpack_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                     int incount, void *outbuf, int outsize, int *position, MPI_Comm comm, int *rc);
bool tj_devpack_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                       int insize, int *position, void *outbuf, int outcount, MPI_Comm comm,
                       int *rc);

/* Release staging buffers, kernels and the driver's streams and contexts (MPI_Finalize). */
void tj_devpack_finalize(void);

#endif /* TJ_SEND_DEVPACK_H */
