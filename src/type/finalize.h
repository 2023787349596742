/* SPDX-License-Identifier: BSD-3-Clause */
/* The end of the type engine's state (MPI_Finalize). */
#ifndef TJ_TYPE_FINALIZE_H
#define TJ_TYPE_FINALIZE_H

/* Release the type table's records and pools (records still held stay where they are). */
void tj_type_finalize(void);

#endif
