/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on device buffers, built from per-peer packs: every device-resident side of the
 * call is packed peer by peer (src/calls/device_pack.c) into page-locked mapped host memory, the
 * system MPI runs the same collective on those bytes, and the receiving side is unpacked peer by
 * peer. Sides in host memory are handed to the system MPI as they are. */
#ifndef TJ_CALLS_COLL_H
#define TJ_CALLS_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "calls/call_result.h"
#include "calls/coll_sides.h"

/* Run @p c: blocking when @p req is NULL, else the system MPI's non-blocking form, whose request
 * (returned in *req) is completed, unpacked and released by the interposed Wait and Test calls.
 * A call is typejit's when a side with bytes to move lies in device or managed memory and its
 * types need packing (every type with an MPI that is not CUDA-aware; strided types, and
 * contiguous ones when TYPEJIT_STAGE_CONTIGUOUS says so, with one that is). */
tj_call_result_t tj_coll_run(const tj_coll_call_t *c, MPI_Request *req, int *rc);

/* Whether @p c has a side with bytes to move in device or managed memory (what tj_coll_run
 * would look at), without running it: for the forms typejit does not run, which a device buffer
 * makes the caller refuse. */
bool tj_coll_on_device(const tj_coll_call_t *c);

#endif /* TJ_CALLS_COLL_H */
