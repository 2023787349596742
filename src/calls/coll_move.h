/* SPDX-License-Identifier: BSD-3-Clause */
/* Moving a packed side of a collective between its typed buffer and its staging: consecutive
 * slices of one type whose objects follow each other in the typed buffer (the usual
 * displacements) make one run, packed or unpacked by one call, so one kernel launch serves all
 * of them; when a side has several such runs of strided types (a halo exchange's faces), one
 * fused kernel moves all of them in a single launch (move/fused.h); anything it cannot take goes
 * run by run through calls/device_pack.h. */
#ifndef TJ_CALLS_COLL_MOVE_H
#define TJ_CALLS_COLL_MOVE_H

#include "gpu/batch.h"
#include "calls/coll_sides.h"

/* Pack (or unpack) every slice of the packed side @p sd of @p x that moves bytes, into @p b;
 * @p only_in: the MPI_IN_PLACE slices alone. Returns the MPI result. */
int tj_coll_move_side(tj_coll_t *x, tj_coll_side_t *sd, bool pack, bool only_in, tj_batch_t *b);

#endif /* TJ_CALLS_COLL_MOVE_H */
