/* SPDX-License-Identifier: BSD-3-Clause */
/* The system MPI's collective on the bytes typejit packed: the same call the application made
 * (the same form: int or large-count, blocking or not), with each packed side's staging, packed
 * counts, displacements and types in place of the application's. */
#ifndef TJ_CALLS_COLL_SYSTEM_H
#define TJ_CALLS_COLL_SYSTEM_H

#include "calls/coll_sides.h"

/* The system MPI's call for @p x: blocking when @p req is NULL. Its result. */
int tj_coll_system_call(tj_coll_t *x, MPI_Request *req);

#endif /* TJ_CALLS_COLL_SYSTEM_H */
