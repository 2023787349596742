/* CPU pack and unpack. The two innermost dimensions run as a tight loop specialised for the
 * common run lengths (fixed-size memcpy that the compiler turns into one load and one store);
 * outer dimensions and objects advance an odometer once per row of dimension 1. */
#include "type/cpu.h"

#include <string.h>

/* One row: counts[1] runs of `run` bytes, `stride` bytes apart on the typed side and packed
 * back to back. The fixed-size cases let the compiler emit single moves. */
#define ROW_LOOP(_run_expr, _dst, _src, _n, _stride, _typed_is_dst)                                \
    do {                                                                                           \
        for (int64_t _i = 0; _i < (_n); _i++) {                                                    \
            memcpy((_dst), (_src), (_run_expr));                                                   \
            if (_typed_is_dst) {                                                                   \
                (_dst) += (_stride);                                                               \
                (_src) += (_run_expr);                                                             \
            } else {                                                                               \
                (_src) += (_stride);                                                               \
                (_dst) += (_run_expr);                                                             \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static inline void row(char *dst, const char *src, int64_t run, int64_t n, int64_t stride,
                       int typed_is_dst)
{
    switch (run) {
    case 1:
        ROW_LOOP(1, dst, src, n, stride, typed_is_dst);
        break;
    case 2:
        ROW_LOOP(2, dst, src, n, stride, typed_is_dst);
        break;
    case 4:
        ROW_LOOP(4, dst, src, n, stride, typed_is_dst);
        break;
    case 8:
        ROW_LOOP(8, dst, src, n, stride, typed_is_dst);
        break;
    case 16:
        ROW_LOOP(16, dst, src, n, stride, typed_is_dst);
        break;
    case 32:
        ROW_LOOP(32, dst, src, n, stride, typed_is_dst);
        break;
    case 64:
        ROW_LOOP(64, dst, src, n, stride, typed_is_dst);
        break;
    case 128:
        ROW_LOOP(128, dst, src, n, stride, typed_is_dst);
        break;
    default:
        ROW_LOOP((size_t)run, dst, src, n, stride, typed_is_dst);
        break;
    }
}

/* Walks every row of dimension 1 of `count` objects; calls row() with the typed address. */
static void walk(const tj_block_t *b, char *typed, char *packed, int64_t count, int unpack)
{
    const int64_t run = b->counts[0];
    const int64_t n1 = b->ndims > 1 ? b->counts[1] : 1;
    const int64_t s1 = b->ndims > 1 ? b->strides[1] : 0;
    const int64_t row_bytes = run * n1;
    int64_t idx[TJ_BLOCK_MAX_DIMS] = {0};

    /* A dense object stepped by its own size is one copy. */
    if (b->ndims == 1 && b->extent == run) {
        size_t bytes = (size_t)(run * count);
        if (unpack)
            memmove(typed + b->start, packed, bytes);
        else
            memcpy(packed, typed + b->start, bytes);
        return;
    }
    for (int64_t k = 0; k < count; k++) {
        char *obj = typed + b->start + k * b->extent;
        char *base = obj;
        memset(idx, 0, sizeof(idx));
        for (;;) {
            if (unpack)
                row(base, packed, run, n1, s1, 1);
            else
                row(packed, base, run, n1, s1, 0);
            packed += row_bytes;
            /* Advance the odometer over dimensions 2 and up. */
            int d = 2;
            for (; d < b->ndims; d++) {
                if (++idx[d] < b->counts[d]) {
                    base += b->strides[d];
                    break;
                }
                base -= (b->counts[d] - 1) * b->strides[d];
                idx[d] = 0;
            }
            if (d >= b->ndims)
                break;
        }
    }
}

void tj_cpu_pack(const tj_block_t *block, const void *typed, int64_t count, void *packed)
{
    walk(block, (char *)typed, packed, count, 0);
}

void tj_cpu_unpack(const tj_block_t *block, const void *packed, int64_t count, void *typed)
{
    walk(block, typed, (char *)packed, count, 1);
}

/* Every part of `count` objects of a layout, in typemap order: runs copied whole, the other
 * parts by the block walk of their shape. */
static void walk_layout(const tj_layout_t *l, char *typed, char *packed, int64_t count, int unpack)
{
    int64_t elems = tj_layout_elements(l);

    for (int64_t k = 0; k < count; k++) {
        char *obj = typed + l->start + k * l->extent;
        for (int64_t e = 0; e < elems; e++) {
            char *el = obj + tj_layout_frame_offset(l, e);
            for (int64_t p = 0; p < l->nparts; p++) {
                const tj_block_t *sh = &l->shapes[l->shape != NULL ? l->shape[p] : 0];
                int64_t len = l->pre[p + 1] - l->pre[p];
                char *at = el + l->disp[p];
                if (tj_layout_is_run(sh)) {
                    if (unpack)
                        memmove(at, packed, (size_t)len);
                    else
                        memcpy(packed, at, (size_t)len);
                } else {
                    walk(sh, at, packed, len / sh->size, unpack);
                }
                packed += len;
            }
        }
    }
}

void tj_cpu_pack_layout(const tj_layout_t *l, const void *typed, int64_t count, void *packed)
{
    walk_layout(l, (char *)typed, packed, count, 0);
}

void tj_cpu_unpack_layout(const tj_layout_t *l, const void *packed, int64_t count, void *typed)
{
    walk_layout(l, typed, (char *)packed, count, 1);
}
