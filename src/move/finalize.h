/* SPDX-License-Identifier: BSD-3-Clause */
/* The byte movement layer's finalize (MPI_Finalize, from src/calls/core.c). */
#ifndef TJ_MOVE_FINALIZE_H
#define TJ_MOVE_FINALIZE_H

/* The method model's system table and remembered choices freed, then the staging buffers
 * (pooled and in the threads' caches) released. No staging may be in use. */
void tj_move_finalize(void);

#endif /* TJ_MOVE_FINALIZE_H */
