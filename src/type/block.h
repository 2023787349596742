/* SPDX-License-Identifier: BSD-3-Clause */
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
    /* W of one object: the largest of 16, 8, 4, 2, 1 dividing counts[0] and the stride of every
     * dimension of more than one element. The start, the extent (which matters only between
     * objects) and the buffers narrow it at launch: tj_block_words. */
    int word;
    /* The largest of 16, 8, 4, 2, 1 dividing, for every dimension of more than one element, its
     * stride minus its packed pitch (the product of the counts below it): every run's typed
     * bytes then agree with their packed position modulo it, so that a kernel with edges moves
     * the middle of each run in words of that size (a multiple of word). */
    int edges_word;
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
static inline int tj_block_word_for(const int64_t *vals, int n, int max_word)
{
    /* A power of two divides a value exactly when the value's low bits are zero, negative
     * values included (two's complement): the answer is the lowest bit set in any of them. */
    uint64_t bits = (uint64_t)max_word;
    for (int i = 0; i < n; i++)
        bits |= (uint64_t)vals[i];
    return (int)(bits & (~bits + 1));
}

/* Whether @p n dimensions of @p counts elements @p strides bytes apart (any order, any sign), laid
 * over a run of @p span bytes, never overlap: sorted by |stride|, each steps past the span of
 * all smaller ones together. Exact for nested layouts, conservative (overlap) for exotic
 * interleavings, which then take a slower path. Sorts the arrays in place. */
bool tj_block_dims_disjoint(int n, int64_t *counts, int64_t *strides, int64_t span);

/* True if @p count consecutive objects address no byte twice (unpacking into them in parallel
 * cannot race). */
bool tj_block_disjoint(const tj_block_t *block, int64_t count);

/* The bytes [lo, hi) of a piece of a layout, lo <= hi. */
typedef struct {
    int64_t lo, hi;
} tj_range_t;

/* True if no byte lies in two of the @p n ranges @p r. Sorts them in place by their first byte. */
bool tj_block_ranges_disjoint(tj_range_t *r, int64_t n);

/* The same layout moved to start at byte 0. Kernels are built for it and launched at the typed
 * pointer plus the start, so that one kernel serves every placement of a shape (halo faces at
 * different offsets, types at absolute addresses over MPI_BOTTOM); the address of object 0 then
 * narrows the word (tj_block_words). */
tj_block_t tj_block_at_zero(const tj_block_t *block);

/* The largest word of 16, 8, 4, 2, 1, at most @p word, to which @p addr is aligned. */
static inline int tj_block_word_at(int word, uintptr_t addr)
{
    while (word > 1 && (addr & (uintptr_t)(word - 1)) != 0)
        word /= 2;
    return word;
}

/* The words of one launch: W, and for a kernel with edges the narrower word that moves the
 * head and the tail of each run (0: no edges; every word is W). */
typedef struct {
    int word;
    int edge;
} tj_words_t;

/* Contiguous runs shorter than this many words of a kernel with edges get none: a kernel with
 * edges moves a run's misaligned head and tail apart from its middle, which pays, and keeps the
 * sectors a warp touches at the layout's, only for long runs. */
#define TJ_BLOCK_EDGE_RUN_WORDS 32

/* Bytes of the block's contiguous runs: counts[0], times the counts of the dimensions that
 * continue it without a gap (a stride equal to the run's length so far; dimensions of one
 * element skipped). */
static inline int64_t tj_block_run(const tj_block_t *block)
{
    int64_t run = block->counts[0];

    for (int d = 1; d < block->ndims; d++) {
        if (block->counts[d] == 1)
            continue;
        if (block->strides[d] != run)
            break;
        run *= block->counts[d]; /* cannot overflow: bounded by the block's size */
    }
    return run;
}

/* The words of a launch of @p count objects of @p block whose object 0 begins at address
 * @p typed_at (the typed pointer plus the block's start) and whose packed bytes begin at
 * @p packed_at. W is the block's word narrowed by the alignment of both addresses and, when
 * count > 1, by the extent. When the runs are long (TJ_BLOCK_EDGE_RUN_WORDS) and every run's
 * typed bytes agree with their packed position modulo a wider word (edges_word, the two
 * addresses, and when count > 1 the extent minus the size, and the size: each object's packed
 * bytes begin at such a word), the launch moves that wider word with edges of W. Every launch
 * of a block's kernels asks here, and so does `typejit warm`, so that the kernels it compiles
 * are the ones the runtime looks up. */
static inline tj_words_t tj_block_words(const tj_block_t *block, int64_t count, uintptr_t typed_at,
                                        uintptr_t packed_at)
{
    tj_words_t w = {block->word, 0};
    int wide = block->edges_word;

    w.word = tj_block_word_at(tj_block_word_at(w.word, typed_at), packed_at);
    if (count > 1) {
        /* Object k's runs are k * extent and k * size further on. Each object's packed bytes
         * must also begin at a wide word: else the window where one object ends and the next
         * begins is moved by two threads, a sector touched twice per object. */
        int64_t vals[2] = {(int64_t)((uint64_t)block->extent - (uint64_t)block->size), block->size};
        w.word = tj_block_word_for(&block->extent, 1, w.word);
        wide = tj_block_word_for(vals, 2, wide);
    }
    /* Object 0's first run: its typed and packed addresses must agree modulo the wide word. */
    wide = tj_block_word_at(wide, typed_at - packed_at);
    if (wide > w.word && tj_block_run(block) >= (int64_t)TJ_BLOCK_EDGE_RUN_WORDS * wide) {
        w.edge = w.word;
        w.word = wide;
    }
    return w;
}

/* The words of the launches of @p block on buffers aligned to 16 bytes (device allocations
 * are), at packed position 0: words[0] for one object, words[1] for several. Returns 1 when the
 * two are the same (words[1] is then words[0]), else 2. The kernels a commit prepares. */
int tj_block_words_aligned(const tj_block_t *block, tj_words_t words[2]);

/* The most distinct words of a block's launches: five plain words, and ten pairs of a word and
 * a narrower edge word. */
#define TJ_BLOCK_WORDS_MAX 15

/* A launch's words and the first placement that selects them (tj_block_words_aligned_to): the
 * offsets from a 16-byte boundary of the typed buffer (object 0 lies the block's start further
 * on) and of the packed bytes. */
typedef struct {
    tj_words_t words;
    int typed_offset;
    int packed_offset;
} tj_words_offsets_t;

/* Every distinct words of a launch of @p count objects of @p block (only count > 1 matters) whose
 * typed buffer and packed bytes each lie at a multiple of @p align bytes (the alignment of
 * the type's element, 8 for doubles; 16 and its multiples: 16-byte aligned) from a 16-byte
 * boundary: a halo code's faces sent from d + offset, packed at positions that are sums of
 * earlier packs. Each with the first placement that selects it, in increasing order of the
 * packed offset, then of the typed one: words[0] is that of 16-byte aligned buffers. Returns how
 * many (1 to TJ_BLOCK_WORDS_MAX): the kernels `typejit warm` compiles for a type description. */
int tj_block_words_aligned_to(const tj_block_t *block, int64_t count, int align,
                              tj_words_offsets_t words[TJ_BLOCK_WORDS_MAX]);

/* Every distinct words of a launch of @p block (tj_block_words for any count: only one object or
 * several) with typed buffers and packed positions at multiples of @p align from a 16-byte
 * boundary (tj_block_words_aligned_to; 1: any addresses, the kernels `typejit warm --all-words`
 * compiles), at most TJ_BLOCK_WORDS_MAX. Returns how many. */
int tj_block_words_all(const tj_block_t *block, int align, tj_words_t words[TJ_BLOCK_WORDS_MAX]);

/* The contiguous runs of one object in packed order, counts[0] bytes each: calls @p fn with
 * each run's byte offset from the object's first run (sum_d i_d * strides[d], the start
 * excluded), until @p fn returns false. True when every run was passed on. */
bool tj_block_each_run(const tj_block_t *block, bool (*fn)(int64_t disp, void *arg), void *arg);

/* True if the two blocks describe the same layout. */
bool tj_block_equal(const tj_block_t *a, const tj_block_t *b);

/* Canonical one-line text, "start=S extent=E counts=c0,c1 strides=1,s1"; the text hashed into
 * kernel keys and written to the manifest. Returns the length needed, as snprintf. */
int tj_block_format(const tj_block_t *block, char *buf, size_t len);

/* Parse the text written by tj_block_format. */
tj_status_t tj_block_parse(const char *text, tj_block_t *block);

#endif /* TJ_TYPE_BLOCK_H */
