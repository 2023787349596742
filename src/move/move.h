/* SPDX-License-Identifier: BSD-3-Clause */
/* The one move of a device call: `count` objects of a type between its typed buffer and its
 * packed bytes, by the type's kernel (or the generic kernel while that compiles) where a kernel
 * can run, else staged through host memory by the system MPI. MPI_Pack and MPI_Unpack, the
 * point-to-point paths, the collectives and the host mirrors of staged calls all move their
 * bytes here, once they have checked the call and asked the driver where both sides lie. */
#ifndef TJ_MOVE_MOVE_H
#define TJ_MOVE_MOVE_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/batch.h"
#include "gpu/cuda.h"
#include "type/table.h"

typedef struct {
    bool pack; /* typed -> packed */
    /* The type's record with its layout built (tj_lazy_resolve), or, for a type typejit has no
     * record of, a zeroed record with its extents alone (tj_table_read_extents): staged. */
    const tj_type_info_t *info;
    MPI_Datatype type; /* the application's handle: what a staged move packs with */
    const char *typed; /* the typed buffer argument (may be MPI_BOTTOM) */
    tj_gpu_ptr_t tp;   /* where the typed side's first touched byte lies */
    int64_t count;     /* > 0 */
    char *packed;      /* the call's first packed byte */
    tj_gpu_ptr_t pp;   /* where it lies */
    int64_t bytes;     /* count x size, the packed bytes of the call */
    MPI_Comm comm;     /* a staged move's MPI_Pack and MPI_Unpack run on it */
    tj_batch_t *batch; /* where a kernel's wait goes; NULL: the move waits itself */
} tj_move_t;

/* Move @p m's bytes. One side at least is device or managed memory, and the caller has made
 * sure that the call is valid and that both sides' bytes lie inside their allocations
 * (tj_move_inside). With a batch, a kernel between the typed side and a packed side in device
 * or mapped page-locked memory is launched and its wait left to the batch (staging through host
 * memory, or through typejit's device staging, still waits itself): the bytes are in place once
 * tj_batch_wait succeeds, and when it fails the caller moves them again without a batch.
 * Returns the MPI result: MPI_SUCCESS, the system MPI's error of a staged move, MPI_ERR_INTERN
 * when the driver failed (said where it did). */
int tj_move(const tj_move_t *m);

/* [lo, hi): the bytes @p count objects of @p info touch, relative to a buffer argument @p off
 * bytes before object 0. False when that overflows 64 bits: no allocation holds such a
 * footprint, and a kernel or copy computing its addresses would wrap. */
bool tj_move_span(const tj_type_info_t *info, int64_t off, int64_t count, int64_t *lo, int64_t *hi);

/* Whether the bytes @p count objects of @p info touch, from buffer argument @p buf plus @p off,
 * lie inside the allocation @p where describes (in host memory, whose bounds typejit cannot
 * see: whether their addresses fit the address space). */
bool tj_move_inside(const tj_type_info_t *info, const void *buf, int64_t off, int64_t count,
                    const tj_gpu_ptr_t *where);

#endif /* TJ_MOVE_MOVE_H */
