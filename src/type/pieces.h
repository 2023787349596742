/* SPDX-License-Identifier: BSD-3-Clause */
/* The pieces of a wide datatype (tj_type_info_t.wide): the byte ranges its typemap touches,
 * taken apart along its constructors until each is narrower than TJ_WIDE, so that the memory
 * each lies in can be asked of the driver. A struct of blocks at absolute addresses (over
 * MPI_BOTTOM) becomes one piece per block. */
#ifndef TJ_TYPE_PIECES_H
#define TJ_TYPE_PIECES_H

#include <mpi.h>
#include <stdint.h>

/* [lo, hi) relative to the buffer argument. */
typedef struct {
    int64_t lo, hi;
} tj_piece_t;

/* The pieces of `count` objects of @p type, at most @p max of them, into @p out. Returns their
 * number, or -1 when there would be more than @p max or a constructor cannot be taken apart
 * (darray, subarray, a system MPI that does not answer): the caller then knows nothing. */
int tj_pieces(MPI_Datatype type, int64_t count, tj_piece_t *out, int max);

#endif /* TJ_TYPE_PIECES_H */
