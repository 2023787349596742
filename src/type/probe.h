/* SPDX-License-Identifier: BSD-3-Clause */
/* The layout of a datatype learnt from the system MPI itself: for the types whose constructors
 * typejit does not take apart (a byte stride of -1, which Open MPI reads its own way, a
 * constructor newer than typejit, a translation that disagrees with MPI on the size), one
 * object is packed by PMPI_Pack from a buffer whose bytes encode their own offsets, and the
 * packed bytes say which typed byte each came from: its runs, in typemap order. Exact by
 * construction, for footprints up to TJ_PROBE_MAX bytes. */
#ifndef TJ_TYPE_PROBE_H
#define TJ_TYPE_PROBE_H

#include <mpi.h>
#include <stdint.h>

#include "type/layout.h"

/* Largest true extent and size of a type probed (the probe holds both in memory). */
#define TJ_PROBE_MAX ((int64_t)1 << 20)

/* The finished layout of @p type (true lower bound @p true_lb, true extent @p true_extent,
 * extent @p extent, size @p size, as the system MPI reports them). TJ_ERR_UNSUPPORTED beyond
 * TJ_PROBE_MAX or with too many runs, TJ_ERR_MPI, TJ_ERR_NOMEM. */
tj_status_t tj_probe_layout(MPI_Datatype type, int64_t true_lb, int64_t true_extent, int64_t extent,
                            int64_t size, tj_layout_t **out);

#endif /* TJ_TYPE_PROBE_H */
