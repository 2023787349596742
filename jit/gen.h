/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel generation: CUDA source of one pack or unpack kernel per strided block and word size,
 * its launch geometry, and the generic kernel that takes the layout as run-time arguments. */
#ifndef TJ_JIT_GEN_H
#define TJ_JIT_GEN_H

#include <stdint.h>

#include "type/block.h"
#include "typejit.h"

typedef enum { TJ_DIR_PACK = 0, TJ_DIR_UNPACK = 1 } tj_dir_t;

/* Launch geometry: grid and thread-block dimensions, x first. */
typedef struct {
    unsigned grid[3];
    unsigned block[3];
} tj_launch_t;

/* CUDA source of one kernel called @p name for (block, word, dir), with the counts, strides,
 * start, extent and W baked in as constants. @p word is 1, 2, 4, 8 or 16 and divides
 * block->word. The kernel is
 *   extern "C" __global__ void NAME(void *dst, const void *src, long long count)
 * PACK: src is the typed buffer (the kernel adds start + k * extent), dst the packed output at
 * the current position. UNPACK: src is the packed input, dst the typed buffer. Both pointers must
 * be aligned to @p word. Unpacking is defined only for layouts whose `count` objects are
 * disjoint. It must be launched with the geometry of tj_gen_launch (the thread-block size is
 * baked in). On success *source is malloc'd NUL-terminated text the caller frees;
 * TJ_ERR_INVALID for a bad block, word or name, TJ_ERR_NOMEM. */
tj_status_t tj_gen_source(const tj_block_t *block, int word, tj_dir_t dir, const char *name,
                          char **source);

/* CUDA source of the kernel @p name for (block, word) with edges of @p edge bytes (0: exactly
 * tj_gen_source's kernel): the same signature, pointers and launch (tj_gen_edges_launch), for
 * launches whose every run has its typed bytes and its packed position agree modulo @p word
 * (tj_block_words): each run's bytes are cut at the @p word-aligned addresses of the packed
 * buffer, the windows inside the run moved with one @p word-byte load and store, the run's head
 * and tail with aligned pieces of @p edge bytes or more (templates/edges.cu). Both pointers must
 * be aligned to @p edge; @p edge divides block->word, @p word > @p edge divides
 * block->edges_word. TJ_ERR_INVALID otherwise. */
tj_status_t tj_gen_edges_source(const tj_block_t *block, int word, int edge, tj_dir_t dir,
                                const char *name, char **source);

/* CUDA source of the kernel @p name of MPI_Reduce_local on a strided type whose every element is
 * of the C type @p ctype, @p esize bytes (which divides the block's word): for each element,
 * in the order of the typemap, inout = EXPR, where @p expr reads the inout element as `o` and the
 * input element as `a` ("o + a", "(o > a) ? o : a"); @p what names the operation for the
 * source's comment. Same signature and launch geometry (tj_gen_launch with word @p esize) as
 * tj_gen_source's kernels: dst is the inout buffer, src the input, both typed, aligned to
 * @p esize. TJ_ERR_INVALID for a bad block, size, type, expression or name. */
tj_status_t tj_gen_reduce_source(const tj_block_t *block, int esize, const char *ctype,
                                 const char *expr, const char *what, const char *name,
                                 char **source);

/* CUDA source of a pack (or unpack) kernel @p name for (block, @p esize) whose packed bytes are
 * the external32 representation of a type made of elements of @p esize bytes each: the typed
 * words of @p esize bytes (1, 2, 4 or 8, dividing the block's word) with their bytes reversed
 * (big-endian on a little-endian device). Same signature, pointers and launch geometry
 * (tj_gen_launch with word @p esize) as tj_gen_source's kernels. */
tj_status_t tj_gen_swap_source(const tj_block_t *block, int esize, tj_dir_t dir, const char *name,
                               char **source);

/* Words (with edges, slots) each thread of the kernel for (block, word, edge) moves per trip
 * of its loops; @p edge 0 for tj_gen_source's kernel. */
int tj_gen_words_per_thread(const tj_block_t *block, int word, int edge);

/* Launch geometry for `count` objects: grid by ceiling division, x < 2^31, y and z <= 65535
 * (the kernels stride over the grid, so any count works). */
void tj_gen_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch);

/* The same for the kernel with edges of (block, word, edge) (tj_gen_launch when @p edge is 0). */
void tj_gen_edges_launch(const tj_block_t *block, int word, int edge, int64_t count,
                         tj_launch_t *launch);

/* What tj_gen_edges_launch's geometry is made of besides the count, worked out once per kernel:
 * the launch of one object, and the objects one row of the grid (y) holds. */
typedef struct {
    tj_launch_t one;
    int64_t per_y;
} tj_gen_geometry_t;

void tj_gen_edges_geometry(const tj_block_t *block, int word, int edge, tj_gen_geometry_t *geo);

/* tj_gen_edges_launch's geometry of @p count objects, from @p geo. */
static inline void tj_gen_geometry_launch(const tj_gen_geometry_t *geo, int64_t count,
                                          tj_launch_t *launch)
{
    int64_t y = count <= geo->per_y ? 1 : (count - 1) / geo->per_y + 1;

    *launch = geo->one;
    launch->grid[1] = (unsigned)(y < 65535 ? y : 65535);
}

/* The generic kernels' layout argument (the TEMPI approach), passed by value. The block's
 * dimensions are merged as the JIT kernels merge them (dimension 0 the run's words, stride W,
 * unless a run is a single word; dimensions of one element left out), fastest first; with P_d
 * the product of the counts of the merged dimensions below d, word i of an object lies at
 *   bias + i * stride + sum over 1 <= d < ndims of (i / P_d) * dims[d - 1].weight
 * bytes from the object's lowest byte, weight_d = stride_d - count_{d-1} * stride_{d-1}, and
 * i / P_d = umulhi(i, magic) >> shift for every i < 2^31. An object of one word has one dimension.
 * The sum is exact modulo 2^64, and modulo 2^32 where every word starts within 4 GiB of the
 * object's lowest byte (wide == 0): the kernels then use 32-bit offsets. templates/generic.cu
 * declares the same layout. */
typedef struct {
    long long start;       /* object 0's lowest byte, from the typed pointer */
    long long extent;      /* bytes from one object to the next */
    long long size;        /* packed bytes of one object */
    unsigned words;        /* words per object */
    int ndims, word, wide; /* merged dimensions (1 to 16), W, 64-bit offsets */
    long long bias;        /* offset of word 0 from the object's lowest byte */
    long long stride;      /* bytes between the words of merged dimension 0 */
    struct {
        unsigned magic, shift;
        long long weight;
    } dims[TJ_BLOCK_MAX_DIMS - 1];
} tj_generic_params_t;

/* Whether the generic kernels serve @p block with @p word: fewer than 2^31 words per object, so
 * that a word index and its quotients fit 32 bits. */
bool tj_gen_generic_usable(const tj_block_t *block, int word);

/* CUDA source of the generic kernels for @p word (1, 2, 4, 8 or 16): two kernels,
 * "tj_generic_pack" and "tj_generic_unpack", taking
 * (void *dst, const void *src, long long count, tj_generic_params_t params), dst and src as
 * for tj_gen_source's kernels (the kernel adds params.start and k * params.extent). On success
 * *source is malloc'd text the caller frees; TJ_ERR_INVALID for a bad word, TJ_ERR_NOMEM. */
tj_status_t tj_gen_generic_source(int word, char **source);

/* The run-time arguments of the generic kernels for (block, word); meaningful only where
 * tj_gen_generic_usable. */
void tj_gen_generic_params(const tj_block_t *block, int word, tj_generic_params_t *params);

/* Words of one object each thread of the generic kernels moves per trip of its loops with
 * @p word: 8 for W = 1, 4 for W = 2, else 1. */
int tj_gen_generic_words_per_thread(int word);

/* Launch geometry of the generic kernels for `count` objects: x covers the words of one object
 * (tj_gen_generic_words_per_thread per thread), y the objects, several per thread block when an
 * object needs fewer threads than a thread block has. */
void tj_gen_generic_launch(const tj_block_t *block, int word, int64_t count, tj_launch_t *launch);

/* ---- fused kernels: one launch for a set of strided blocks ---------------------------------- */

/* Most members (and distinct blocks) one fused kernel serves. */
#define TJ_FUSED_MAX 32

/* One member of a fused launch as the caller describes it: `count` objects of blocks[shape],
 * object 0 at byte `typed` from the typed pointer (the block's start is added on top), the
 * packed bytes at byte `packed` from the packed pointer. Both addresses must be aligned to the
 * word of its block in the kernel. */
typedef struct {
    int shape;
    int64_t typed, packed, count;
} tj_fused_member_t;

/* The fused kernels' third argument, passed by value (templates/fused.cu declares the same
 * layout): per member its offsets and count, its first thread block, and the grid it strides
 * over (gx by gy thread blocks, flattened into the x dimension after the members before it).
 * gx is a constant of the member's block, baked into the kernel (it is here for the record);
 * gy may be anything from 1 up. Entries past the last member have first = 0xffffffff. */
typedef struct {
    long long typed, packed, count;
    unsigned first, gx, gy;
    int shape;
} tj_fused_entry_t;

typedef struct {
    tj_fused_entry_t m[TJ_FUSED_MAX];
    int n, pad;
} tj_fused_args_t;

/* CUDA source of one kernel called @p name moving every member of a set in one launch:
 *   extern "C" __global__ void NAME(void *dst, const void *src, const tj_fused_args_t args)
 * with the constants of each of the @p n blocks (1 to TJ_FUSED_MAX) baked in as in
 * tj_gen_source, block s moved @p words[s] bytes at a time (dividing its word), a member selected
 * by its thread block. PACK: src is the typed pointer, dst the packed one; UNPACK the other way
 * round (members' typed bytes must then be disjoint, within and between members). A member's
 * addresses must be aligned to its block's word. Launch it with the geometry and arguments of
 * tj_gen_fused_launch. On success *source is malloc'd text the caller frees; TJ_ERR_INVALID for
 * a bad block, word, count or name, TJ_ERR_NOMEM. */
tj_status_t tj_gen_fused_source(const tj_block_t *blocks, const int *words, int n, tj_dir_t dir,
                                const char *name, char **source);

/* The arguments and launch geometry of the fused kernel of (@p blocks, @p words, @p nblocks) for
 * @p nmembers members (1 to TJ_FUSED_MAX; counts >= 0, shapes in range): TJ_ERR_INVALID
 * otherwise. The grid is one-dimensional, every member's thread blocks in turn; the kernels
 * stride over each member's own grid, so any member may be given fewer rows of thread blocks
 * (gy) than it has work. */
tj_status_t tj_gen_fused_launch(const tj_block_t *blocks, const int *words, int nblocks,
                                const tj_fused_member_t *members, int nmembers,
                                tj_fused_args_t *args, tj_launch_t *launch);

/* 64-bit hash (XXH3) of every template's name and text: part of each cache key, so that a
 * changed template never meets an image compiled from the old one. */
uint64_t tj_gen_template_hash(void);

#endif /* TJ_JIT_GEN_H */
