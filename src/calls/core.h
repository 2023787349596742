/* SPDX-License-Identifier: BSD-3-Clause */
/* The core's life: what MPI_Init sets up below the MPI wrappers and what MPI_Finalize tears down,
 * in the one order that is safe (docs/architecture.md, "Life of the core"). */
#ifndef TJ_CALLS_CORE_H
#define TJ_CALLS_CORE_H

/* After the system MPI's MPI_Init or MPI_Init_thread succeeded: the type table locks only under
 * MPI_THREAD_MULTIPLE (the level MPI granted), the log and the warnings of bad settings learn
 * the rank, and the method settings are checked. Returns the rank (-1 when MPI cannot say). */
int tj_core_init(void);

/* Before the system MPI's MPI_Finalize: the background compiles drained (TYPEJIT_JIT_DRAIN), the
 * counters line printed (TYPEJIT_STATS=1), the requests the application freed while active
 * completed, then every layer released from the top down: one-sided operations and windows, self
 * communicators, the method model and staging buffers, the type table, the background compiler,
 * part tables, kernels and modules, and last the driver's streams and contexts. */
void tj_core_finalize(void);

#endif /* TJ_CALLS_CORE_H */
