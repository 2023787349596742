/* SPDX-License-Identifier: BSD-3-Clause */
/* What a commit decides about a datatype, once, for its record: its strided block or why it has
 * none, whether its layout waits for its first device call, and the CPU packer's plan. */
#ifndef TJ_TYPE_COMMIT_H
#define TJ_TYPE_COMMIT_H

#include <mpi.h>
#include <stdbool.h>

#include "type/cpu_model.h"
#include "type/table.h"

/* Fill the record @p info of @p type, just committed (MPI_Type_commit): its extents; its block,
 * from the translation recorded when the type was created (no MPI_Type_get_contents, which
 * duplicates every derived child), else afresh; or why it is not strided, and whether its
 * layout is built at its first device call (type/lazy.h); the CPU packer's plan of a strided
 * type and the cost model's choice against @p peer's packer, unless TYPEJIT_HOST=system. Counts
 * the commit and what it made of the type. */
void tj_commit_decide(MPI_Datatype type, tj_cpu_peer_t peer, tj_type_info_t *info);

/* The same for a named type, which is never committed, the first time a call meets it; false,
 * and @p info untouched, when @p type is not a named type. */
bool tj_commit_decide_named(MPI_Datatype type, tj_cpu_peer_t peer, tj_type_info_t *info);

#endif /* TJ_TYPE_COMMIT_H */
