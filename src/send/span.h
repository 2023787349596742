/* Where the bytes of a wide datatype lie (tj_type_info_t.wide: absolute addresses over
 * MPI_BOTTOM, huge extents). A call's buffer is classified by the first byte its type touches;
 * for a wide type that is not enough, since its other bytes may lie in another allocation or
 * memory kind (host and device memory in one struct), where neither the system MPI nor a kernel
 * can reach them all. Each of its pieces (src/type/pieces.c) is asked of the driver instead. */
#ifndef TJ_SEND_SPAN_H
#define TJ_SEND_SPAN_H

#include <mpi.h>
#include <stdbool.h>

#include "type/table.h"

/* Whether the bytes `count` objects of @p info's type at @p buf touch lie together: all in host
 * memory (pageable or pinned), or all in one device (or managed) allocation. Always true for a
 * type that is not wide, at no cost. False, after one error line naming @p fn, when they are
 * split: the caller returns MPI_ERR_BUFFER. */
bool tj_span_together(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                      const char *fn);

#endif /* TJ_SEND_SPAN_H */
