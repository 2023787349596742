/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI_Init and MPI_Finalize: typejit's state around the system MPI, shared by every wrapper: the
 * re-entry guard and the "is typejit active" test. */
#ifndef TJ_INTERPOSE_INIT_H
#define TJ_INTERPOSE_INIT_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "interpose/state.h"
#include "util/config.h"

/* True when this call should be looked at: typejit is enabled, MPI is initialised by us and we
 * are not inside another wrapper. */
static inline bool tj_interpose_active(void)
{
    return atomic_load_explicit(&tj_interpose_state.init.initialised, memory_order_acquire) &&
           !tj_interpose_thread.init.in_wrapper;
}

/* Activate typejit after the system MPI's MPI_Init or MPI_Init_thread returned MPI_SUCCESS
 * (also the Fortran entry points). */
void tj_interpose_after_init(void);

#endif /* TJ_INTERPOSE_INIT_H */
