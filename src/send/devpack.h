/* MPI_Pack and MPI_Unpack with a device buffer on either side: JIT kernels where the type is
 * strided, staging through host memory where it is not or a kernel cannot serve the call. */
#ifndef TJ_SEND_DEVPACK_H
#define TJ_SEND_DEVPACK_H

#include <mpi.h>
#include <stdbool.h>

#include "type/table.h"

/* True when either pointer is device or managed memory (the GPU paths must take the call). */
bool tj_devpack_involved(const void *a, const void *b);

/* Kernels for a freshly committed type, when a device is present or TYPEJIT_JIT=always. */
void tj_devpack_prepare(tj_type_info_t *info);

/* MPI_Pack / MPI_Unpack for calls tj_devpack_involved accepted, with the system MPI's results,
 * position updates and error codes. */
int tj_devpack_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf, int incount,
                    void *outbuf, int outsize, int *position, MPI_Comm comm);
int tj_devpack_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf, int insize,
                      int *position, void *outbuf, int outcount, MPI_Comm comm);

/* Release staging buffers, kernels and the driver (MPI_Finalize). */
void tj_devpack_finalize(void);

#endif /* TJ_SEND_DEVPACK_H */
