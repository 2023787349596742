/* SPDX-License-Identifier: BSD-3-Clause */
/* Which sides of a collective typejit packs, and how a packed side lies in the message: its slices
 * one after another in peer order in one page-locked mapped host buffer of the buffer's context,
 * each slice of `count` objects of a type of `size` bytes sent as `count` objects of a
 * contiguous type of `size` bytes (MPI_BYTE for Alltoallw slices of empty types), so that the
 * system MPI chooses the same algorithm and segments messages at the same object boundaries on
 * every rank, whether a rank packs or passes its typed host buffer. Displacements of packed
 * slices are computed in 64 bits; the system MPI gets the form of the call the application made
 * (an int form, or the large-count `_c` form), and an int form fails with MPI_ERR_COUNT where a
 * packed displacement does not fit its int. */
#ifndef TJ_CALLS_COLL_PACKED_H
#define TJ_CALLS_COLL_PACKED_H

#include "calls/coll_sides.h"

/* Whether @p sd is packed: its first byte on a GPU and a type it moves bytes of needing typejit
 * (see tj_coll_run); also whether it is split over allocations or memory kinds, or blind (the
 * driver cannot place it). The layouts of pending types are built here when the side is on the
 * device. */
void tj_coll_packed_classify(tj_coll_side_t *sd);

/* The packed offsets, the types of the packed bytes and the arguments the system MPI gets for the
 * packed side
 * @p sd of call @p c (@p bytes_displs: displacements in bytes, Alltoallw). MPI result. */
int tj_coll_packed_layout(const tj_coll_call_t *c, tj_coll_side_t *sd, bool bytes_displs);

/* The packed side's staging buffer (host memory for a blind side). MPI result. */
int tj_coll_packed_stage(tj_coll_side_t *sd);

#endif /* TJ_CALLS_COLL_PACKED_H */
