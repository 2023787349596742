/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the bytes of a wide datatype lie (tj_type_info_t.wide: absolute addresses over
 * MPI_BOTTOM, huge extents). A call's buffer is classified by the first byte its type touches;
 * for a wide type that is not enough, since its other bytes may lie in another allocation or
 * memory kind (host and device memory in one struct), where neither the system MPI nor a kernel
 * can reach them all. Each of its pieces (src/type/pieces.c) is asked of the driver instead. */
#ifndef TJ_MOVE_SPAN_H
#define TJ_MOVE_SPAN_H

#include <mpi.h>
#include <stdbool.h>

#include "type/table.h"

/* Whether the bytes `count` objects of @p info's type at @p buf touch lie together: all in host
 * memory (pageable or pinned), or all in one device (or managed) allocation. MPI_SUCCESS when
 * they do, and always, at no cost, for a type that is not wide. MPI_ERR_BUFFER, after one error
 * line naming @p fn, when they are split; MPI_ERR_INTERN when the driver could not tell where a
 * piece lies (tj_gpu_query said why). The caller fails its call with that code. */
int tj_span_check(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                  const char *fn);

#endif /* TJ_MOVE_SPAN_H */
