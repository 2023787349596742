/* SPDX-License-Identifier: BSD-3-Clause */
/* The pieces of a wide type, asked of the driver (see span.h). A device piece inside the
 * allocation of the one before needs no query; a host piece is asked at both ends (host memory
 * has no bounds the driver reports). */
#include "move/span.h"
#include "util/common.h"

#include <stdint.h>

#include "gpu/cuda.h"
#include "type/pieces.h"
#include "util/log.h"

/* Pieces asked at most; a type with more is judged by its first and last bytes. */
#define SPAN_PIECES 256

/* One piece [lo, hi) of the buffer; *gpu (the first piece decides) and *alloc follow the pieces
 * seen so far. *fits false when it does not lie with them. TJ_ERR_CUDA when a query failed. */
static tj_status_t piece_fits(const char *buf, int64_t lo, int64_t hi, int *gpu,
                              tj_gpu_ptr_t *alloc, bool *fits)
{
    uintptr_t a = (uintptr_t)(buf + lo), b = (uintptr_t)(buf + hi);
    tj_gpu_ptr_t at, last;
    tj_status_t st;

    *fits = true;
    if (*gpu == 1 && tj_gpu_inside(alloc, a, b))
        return TJ_OK;
    if ((st = tj_gpu_query(buf + lo, &at)) != TJ_OK)
        return st;
    if (tj_gpu_device_like(at.kind)) {
        if (*gpu == 0 || !tj_gpu_inside(&at, a, b) ||
            (*gpu == 1 && (at.base != alloc->base || at.ctx != alloc->ctx))) {
            *fits = false;
            return TJ_OK;
        }
        *gpu = 1;
        *alloc = at;
        return TJ_OK;
    }
    if ((st = tj_gpu_query(buf + hi - 1, &last)) != TJ_OK)
        return st;
    if (*gpu == 1 || tj_gpu_device_like(last.kind))
        *fits = false;
    else
        *gpu = 0;
    return TJ_OK;
}

int tj_span_check(const tj_type_info_t *info, MPI_Datatype type, const void *buf, int64_t count,
                  const char *fn)
{
    tj_piece_t pieces[SPAN_PIECES];
    tj_gpu_ptr_t alloc = {0};
    int n, gpu = -1; /* -1: nothing seen yet, 0: host, 1: the device allocation `alloc` */
    bool together = true;

    if (!info->wide || count <= 0 || !tj_gpu_available())
        return MPI_SUCCESS;
    n = tj_pieces(type, count, pieces, SPAN_PIECES);
    if (n < 0) {
        /* Too many pieces to ask: the first and the last byte, at least (none of an empty
         * type, or of bounds past 64 bits, which the system MPI refuses). */
        int64_t reach, far;
        if (info->size == 0 || !tj_mul64(count - 1, info->extent, &reach) ||
            !tj_add64(info->true_lb, reach < 0 ? reach : 0, &pieces[0].lo) ||
            !tj_add64(info->true_extent, reach > 0 ? reach : 0, &far) ||
            !tj_add64(info->true_lb, far, &pieces[1].hi))
            return MPI_SUCCESS;
        pieces[0].hi = pieces[0].lo + 1;
        pieces[1].lo = pieces[1].hi - 1;
        n = 2;
    }
    for (int i = 0; i < n && together; i++)
        if (pieces[i].hi > pieces[i].lo &&
            piece_fits(buf, pieces[i].lo, pieces[i].hi, &gpu, &alloc, &together) != TJ_OK)
            return MPI_ERR_INTERN; /* the query said why */
    if (together)
        return MPI_SUCCESS;
    tj_log_error("%s: the datatype's bytes lie in more than one allocation or memory kind "
                 "(host and device memory, or two device allocations), which neither the "
                 "system MPI nor a kernel can reach at once; MPI_ERR_BUFFER",
                 fn);
    return MPI_ERR_BUFFER;
}
