/* SPDX-License-Identifier: BSD-3-Clause */
/* A layout's contiguous runs in packed order: walked, counted, and made a layout of their own
 * (what the generic parts kernel moves). */
#ifndef TJ_TYPE_LAYOUT_RUNS_H
#define TJ_TYPE_LAYOUT_RUNS_H

#include "type/layout.h"

/* The contiguous runs of one object in packed order, each (disp, len) with disp from frame
 * element 0 (the start excluded, as the kernels are built), adjacent runs merged: calls @p fn
 * for each. False, after at most @p max calls, when there are more than @p max runs. */
bool tj_layout_runs_each(const tj_layout_t *l, int64_t max,
                         void (*fn)(int64_t disp, int64_t len, void *arg), void *arg);

/* The layout of the contiguous runs of the finished layout @p l (tj_layout_runs_each): no
 * frame, the same start, extent and size, its table never baked, so that one kernel per word
 * serves every such layout (the generic parts kernel). TJ_ERR_NOT_STRIDED past
 * TJ_LAYOUT_MAX_PARTS runs. */
tj_status_t tj_layout_runs_make(const tj_layout_t *l, tj_layout_t **out);

/* Number of runs tj_layout_runs_each calls back for; -1 when more than @p max. */
int64_t tj_layout_runs_count(const tj_layout_t *l, int64_t max);

#endif /* TJ_TYPE_LAYOUT_RUNS_H */
