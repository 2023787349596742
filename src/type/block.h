/* The strided block: start, counts[] and strides[] of any number of dimensions, the object's
 * extent, its packed size and the word size W the kernels move. */
#ifndef TJ_TYPE_BLOCK_H
#define TJ_TYPE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "type/ir.h"

#define TJ_BLOCK_MAX_DIMS 16

/* Byte address of element (i0, ..., i_{n-1}) of object k, relative to the buffer argument:
 *   start + k * extent + sum_d i_d * strides[d],  0 <= i_d < counts[d],
 * with strides[0] == 1: dimension 0 is the contiguous run of counts[0] bytes. The packed order
 * runs i0 fastest, then i1, ..., then k. */
typedef struct {
    int64_t start;
    int64_t extent; /* MPI extent of one object: the step between consecutive objects */
    int64_t size;   /* packed bytes of one object: the product of counts */
    int ndims;
    int64_t counts[TJ_BLOCK_MAX_DIMS];
    int64_t strides[TJ_BLOCK_MAX_DIMS];
    int word;      /* W: largest of 16, 8, 4, 2, 1 dividing counts[0], start, strides, extent */
    int64_t lo;    /* lowest byte one object touches, relative to the buffer */
    int64_t hi;    /* one past the highest byte one object touches */
    bool disjoint; /* no byte of one object is addressed twice */
} tj_block_t;

/* Build the block of a simplified chain (streams over one dense leaf) with the given extent. */
tj_status_t tj_block_from_ir(const tj_ir_t *ir, int64_t extent, tj_block_t *block);

/* Build a block from its parts (counts[0] contiguous bytes, strides[0] == 1), validating them and
 * deriving size, W and the footprint. Used by the parser and by tests. */
tj_status_t tj_block_make(int64_t start, int64_t extent, int ndims, const int64_t *counts,
                          const int64_t *strides, tj_block_t *block);

/* Largest power of two that divides every value in @p vals and @p max_word (itself a power of
 * two). */
int tj_block_word_for(const int64_t *vals, int n, int max_word);

/* True if @p count consecutive objects address no byte twice (unpacking into them in parallel
 * cannot race). */
bool tj_block_disjoint(const tj_block_t *block, int64_t count);

/* The same layout moved to start at byte 0. Kernels are built for it and launched at the typed
 * pointer plus the start, so that one kernel serves every placement of a shape (halo faces at
 * different offsets, types at absolute addresses over MPI_BOTTOM); the start is a multiple of W,
 * so alignment is unchanged. */
tj_block_t tj_block_at_zero(const tj_block_t *block);

/* The largest word of 16, 8, 4, 2, 1, at most @p word, to which @p addr is aligned. */
int tj_block_word_at(int word, uintptr_t addr);

/* True if the two blocks describe the same layout. */
bool tj_block_equal(const tj_block_t *a, const tj_block_t *b);

/* Canonical one-line text, "start=S extent=E counts=c0,c1 strides=1,s1"; the text hashed into
 * kernel keys and written to the manifest. Returns the length needed, as snprintf. */
int tj_block_format(const tj_block_t *block, char *buf, size_t len);

/* Parse the text written by tj_block_format. */
tj_status_t tj_block_parse(const char *text, tj_block_t *block);

#endif /* TJ_TYPE_BLOCK_H */
