/* SPDX-License-Identifier: BSD-3-Clause */
/* What the kernel generators share (the strided, fused and generic kernels: jit/gen_strided.c,
 * gen_fused.c, gen_generic.c; the parts kernels: jit/parts.c): the thread-block shape, filling a
 * template (jit/template.c), the forms and shapes of the strided kernels (jit/geometry.c), a
 * block's merged dimensions (jit/dims.c) and division by a constant (jit/magic_div.c). */
#ifndef TJ_JIT_GEN_INTERNAL_H
#define TJ_JIT_GEN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jit/gen.h"
#include "jit/templates.h"
#include "jit/text.h"
#include "typejit.h"

/* Threads of one thread block; objects of at most TJ_GEN_SMALL_WORDS words are packed several to
 * a thread block so that no thread block runs mostly idle. The kernels bake the shape that
 * follows from it into their source. A test builds a variant of the library with another value
 * (TJ_GEN_BLOCK_THREADS, tests/kernels.cmake): a generator whose output changed. */
#ifndef TJ_GEN_BLOCK_THREADS
#define TJ_GEN_BLOCK_THREADS 256
#endif
#define TJ_GEN_SMALL_WORDS 128
/* Word indices up to this fit 32-bit arithmetic with room for the grid-stride step. */
#define TJ_GEN_INDEX32_LIMIT ((int64_t)1 << 30)
#define TJ_GEN_GRID_X_MAX    2147483647LL
#define TJ_GEN_GRID_YZ_MAX   65535LL

/* ---- templates (jit/template.c) ------------------------------------------------------------- */

/* One placeholder @KEY@ of a template and its value. */
typedef struct {
    const char *key;
    const char *value;
} tj_gen_subst_t;

/* The template @p template_name (a file name under templates/) with every @KEY@ replaced by its
 * value: malloc'd text in *source. TJ_ERR_INVALID for a missing template or an unknown
 * placeholder (logged), TJ_ERR_NOMEM. */
tj_status_t tj_gen_fill(const char *template_name, const tj_gen_subst_t *subst, size_t n,
                        char **source);

/* The CUDA type of a word of @p word bytes: "uint4", "unsigned long long", ... */
const char *tj_gen_word_type(int word);

/* A C++ literal of type long long for @p v, any int64_t value (INT64_MIN has no literal of its
 * own). */
void tj_gen_literal(char *buf, size_t len, int64_t v);

/* Whether @p name may name a kernel function. */
bool tj_gen_valid_name(const char *name);

/* ---- forms and shapes of the strided kernels (jit/geometry.c) ------------------------------- */

/* The shape of one JIT kernel: how words of objects map to threads. */
typedef struct {
    int64_t words;    /* words per object */
    unsigned objects; /* objects per thread block */
    unsigned span;    /* words of one object per thread block */
    unsigned threads; /* threads per thread block */
    unsigned kstep;   /* objects a thread moves per trip (several objects per thread block) */
    unsigned istep;   /* words of one object a thread moves per trip (one object) */
} shape_t;

/* Whether @p word is 1, 2, 4, 8 or 16. */
bool tj_gen_valid_word(int word);

/* Whether @p block is a block the generators take: 1 to TJ_BLOCK_MAX_DIMS dimensions, each of
 * one element or more, strides[0] == 1, a size of one byte or more. */
bool tj_gen_valid_block(const tj_block_t *block);

/* @p word, or 1 where the generator would have refused it. */
int tj_gen_effective_word(const tj_block_t *block, int word);

/* Whether (word, edge) is a kernel of @p block: a word dividing the block's word; with edges, an
 * edge word dividing the block's word, a W above it dividing its edges_word, and runs of more
 * than one byte. */
bool tj_gen_valid_form(const tj_block_t *block, int word, int edge);

/* Words a thread moves per trip with W-byte words: a 1- or 2-byte word costs as many instructions
 * as a 16-byte one, so narrow kernels move several per thread to share the loop's setup. */
unsigned tj_gen_unroll(int word);

/* The shape of a kernel of @p words words (or slots) per object, moved @p word bytes at a time. */
void tj_gen_shape_of(int64_t words, int word, shape_t *shape);

/* What one thread of a kernel handles at a time, per object: words, or with edges slots. */
int64_t tj_gen_words_of(const tj_block_t *block, int word, int edge);

/* The smallest launch, for a block the generator refuses: nothing to divide by. */
void tj_gen_launch_one(tj_launch_t *launch);

static inline int64_t tj_gen_ceil_div(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

/* ---- merged dimensions (jit/dims.c) --------------------------------------------------------- */

/* One dimension after merging, in bytes; dimension 0 counts words `word` bytes apart. `index` is
 * the block's number of the dimension (of the innermost, when merged), used in the names. */
typedef struct {
    int64_t count, stride;
    int index;
} dim_t;

/* The block's dimensions with dimension 0 in words, dimensions of one element dropped and
 * nested neighbours merged (an outer stride equal to the inner dimension's whole length makes
 * the two one dimension). Merging keeps every address and the order; it saves divisions. */
int tj_gen_merge_dims(const tj_block_t *block, int word, dim_t *dims);

/* The merged dimensions of a kernel with edges: dims[0] the contiguous run in bytes (stride 1),
 * then the runs' dimensions; 0 when the block has no run of more than one byte. */
int tj_gen_edge_dims(const tj_block_t *block, dim_t *dims);

/* Slots of one run of @p run bytes in a kernel with edges of (@p word, @p edge): the W-aligned
 * windows of the packed buffer the run meets at most (its packed position is a multiple of
 * @p edge). */
int64_t tj_gen_edge_slots(int64_t run, int word, int edge);

/* The constants of the merged dimensions, as declarations at the top of the kernel: each
 * dimension's count (but the outermost's) and stride. */
void tj_gen_emit_counts(text_t *t, const dim_t *dims, int n, const char *isuffix);

/* The same with their comment. */
void tj_gen_emit_dimensions(text_t *t, const dim_t *dims, int n, const char *isuffix);

/* The statements that turn the index @p var (the word index i, or a kernel with edges' run)
 * into the byte offset `off` within the object. */
void tj_gen_emit_offset(text_t *t, const dim_t *dims, int n, const char *var);

/* ---- division by a constant (jit/magic_div.c) ----------------------------------------------- */

/* Division of q < 2^31 by c (2 <= c < 2^31) as a multiply-high and a shift (Granlund and
 * Montgomery, N = 31): l = ceil(log2 c), magic = ceil(2^(31 + l) / c) < 2^32, and q / c is
 * (q * magic) >> (31 + l), the multiply-high's 32 bits and a shift of l - 1. */
void tj_gen_magic_divider(uint64_t c, unsigned *magic, unsigned *shift);

#endif /* TJ_JIT_GEN_INTERNAL_H */
