/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Pack and MPI_Unpack with a device buffer on either side: JIT kernels where the type is
 * strided, staging through host memory where it is not or a kernel cannot serve the call. */
#ifndef TJ_SEND_DEVPACK_H
#define TJ_SEND_DEVPACK_H

#include <mpi.h>
#include <stdbool.h>

#include "gpu/cuda.h"
#include "gpu/batch.h"
#include "type/table.h"

/* MPI_Pack / MPI_Unpack when a byte the call touches is in device or managed memory: true, with
 * the system MPI's result, position update and error code in @p rc; the bytes are in place when
 * it returns (one wait, or none when nothing ran on the device). False (nothing done) for
 * host buffers and calls that move no bytes: the caller passes those on. @p info may be NULL
 * for a type typejit has no record of. One pointer query per side, none without a device; a
 * query the driver fails fails the call (MPI_ERR_INTERN). Errors typejit detects have been
 * through @p comm's error handler. */
bool tj_devpack_pack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                     int64_t incount, void *outbuf, int64_t outsize, int64_t *position,
                     MPI_Comm comm, int *rc);
bool tj_devpack_unpack(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                       int64_t insize, int64_t *position, void *outbuf, int64_t outcount,
                       MPI_Comm comm, int *rc);

/* The same, with what tj_gpu_query says of the first byte each side touches (the typed
 * buffer plus the type's true lower bound; the packed buffer at *position) already known to
 * the caller, which then saves a driver call: the send paths know their own staging, and a
 * buffer they have just queried. NULL: query that side. With @p batch, a kernel between the
 * typed side and a packed side in device or mapped pinned memory is launched and its wait left
 * to the batch (a call staged through host memory, or through typejit's device staging, still
 * waits itself): the bytes are in place once tj_batch_wait succeeds, and when it fails the
 * caller does the call again without a batch. Errors are returned, not raised: the caller's
 * wrapper raises them. */
bool tj_devpack_pack_at(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                        int64_t incount, const tj_gpu_ptr_t *in_at, void *outbuf, int64_t outsize,
                        const tj_gpu_ptr_t *out_at, int64_t *position, MPI_Comm comm,
                        tj_batch_t *batch, int *rc);
bool tj_devpack_unpack_at(const tj_type_info_t *info, MPI_Datatype type, const void *inbuf,
                          int64_t insize, const tj_gpu_ptr_t *in_at, int64_t *position,
                          void *outbuf, int64_t outcount, const tj_gpu_ptr_t *out_at, MPI_Comm comm,
                          tj_batch_t *batch, int *rc);

/* [lo, hi): the bytes @p count objects of @p info touch, relative to a buffer argument @p off
 * bytes before object 0. False when that overflows 64 bits: no allocation holds such a
 * footprint, and a kernel or copy computing its addresses would wrap. */
bool tj_devpack_span(const tj_type_info_t *info, int64_t off, int64_t count, int64_t *lo,
                     int64_t *hi);

/* Whether the bytes @p count objects of @p info touch, from buffer argument @p buf plus @p off,
 * lie inside the allocation @p where describes (in host memory, whose bounds typejit cannot
 * see: whether their addresses fit the address space). */
bool tj_devpack_inside(const tj_type_info_t *info, const void *buf, int64_t off, int64_t count,
                       const tj_gpu_ptr_t *where);

#endif /* TJ_SEND_DEVPACK_H */
