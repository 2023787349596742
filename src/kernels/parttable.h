/* SPDX-License-Identifier: BSD-3-Clause */
/* The part tables of layouts in device memory: what the kernel of a layout of more parts than
 * its source holds reads (jit/parts.h). Each is built at the first device call that needs it, in
 * the context of that call, kept with the layout (shared by every type of that layout) and freed
 * with it, or at MPI_Finalize. */
#ifndef TJ_KERNELS_PARTTABLE_H
#define TJ_KERNELS_PARTTABLE_H

#include "gpu/cuda.h"
#include "type/layout.h"

/* The device address of @p l's part table in the current scope's context, copied there on
 * first use. */
tj_status_t tj_parttable_get(tj_layout_t *l, tj_devptr_t *table);

/* The layout of @p l's contiguous runs (no frame, every run a part, its table always in device
 * memory), made once and kept with @p l: what the generic parts kernel moves while @p l's own
 * kernel is being compiled, and with TYPEJIT_JIT=off. No reference is given: it lives as long
 * as @p l. TJ_ERR_NOT_STRIDED when @p l has too many runs. */
tj_status_t tj_parttable_runs(tj_layout_t *l, tj_layout_t **runs);

/* Free every device table, each in its own context (MPI_Finalize, before the contexts go). */
void tj_parttable_finalize(void);

#endif /* TJ_KERNELS_PARTTABLE_H */
