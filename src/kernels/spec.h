/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel's spec: what it is built for (one strided block, a fused set of blocks, the generic
 * kernel, the parts of a layout; word, direction, compile target, and what a block's kernel
 * does with each word). Specs name kernels: the kernel lookup makes one kernel per spec and target.
 */
#ifndef TJ_KERNELS_SPEC_H
#define TJ_KERNELS_SPEC_H

#include <stdbool.h>

#include "jit/gen.h"
#include "type/block.h"
#include "type/layout.h"

/* The kinds of kernel, each a row of the table of operations in kernels/kind.h. */
typedef enum {
    TJ_KERNEL_SINGLE,  /* one strided block (tj_gen_source, tj_gen_edges_source); its op says
                          what is done with each word */
    TJ_KERNEL_FUSED,   /* a set of blocks moved in one launch (tj_gen_fused_source) */
    TJ_KERNEL_GENERIC, /* the layout as run-time arguments (tj_gen_generic_source) */
    TJ_KERNEL_PARTS,   /* every part of a layout (tj_gen_parts_source) */
    TJ_KERNEL_KINDS
} tj_kernel_kind_t;

/* What a kernel of one strided block does with each word of the typed buffer: moves it (the pack
 * and unpack kernels), moves it with its bytes reversed (external32, words of one element), or
 * reduces it into the typed buffer (MPI_Reduce_local's inout = EXPR(inout, in), words of one
 * element). The kernels of SWAP and REDUCE are the same template with another statement per
 * word (tj_gen_swap_source, tj_gen_reduce_source), launched the same way; they have function
 * names of their own and no manifest line, so their disk keys are those they always had. */
typedef enum { TJ_OP_MOVE, TJ_OP_SWAP, TJ_OP_REDUCE } tj_op_kind_t;

typedef struct {
    tj_op_kind_t kind;
    /* REDUCE: the element's C type, the expression of `o` (inout) and `a` (in), and what the
     * source's comment calls the operation ("MPI_Reduce_local MPI_SUM on double"). */
    const char *ctype, *expr, *what;
} tj_kernel_op_t;

/* What a kernel is built for. A kernel serves every placement of its shapes: it is built for
 * each block moved to start 0 (tj_block_at_zero) and launched at the typed pointer plus the
 * block's start, whatever start the blocks given here have. */
typedef struct {
    tj_kernel_kind_t kind;
    const tj_block_t *blocks; /* SINGLE: one; FUSED: nblocks (1 to TJ_FUSED_MAX); GENERIC: none */
    int nblocks;
    /* W, dividing every block's word. SINGLE with edges: the word of the middle of each run,
     * dividing the block's edges_word; SWAP and REDUCE: the element's size; FUSED: the widest
     * of words. */
    int word;
    int edge;         /* SINGLE: the word of each run's head and tail (below W), or 0: no edges */
    const int *words; /* FUSED: the word of each block, dividing it (NULL: W for every block) */
    tj_dir_t dir;
    const char *target;        /* "sm_90" (CUBIN) or "compute_90" (PTX) */
    tj_kernel_op_t op;         /* SINGLE: what is done with each word (MOVE for the others) */
    const tj_layout_t *layout; /* PARTS: the finished layout (its table only when baked) */
    bool serial;               /* PARTS, UNPACK: launched as one thread (an overlapping layout) */
    /* PARTS: for launches of one object (the extent and the object's size do not narrow the
     * words of its segments: type/layout_words.h) */
    bool one_object;
} tj_kernel_spec_t;

static inline tj_kernel_spec_t tj_spec_single(const tj_block_t *block, int word, tj_dir_t dir,
                                              const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_SINGLE,
                          .blocks = block,
                          .nblocks = 1,
                          .word = word,
                          .dir = dir,
                          .target = target};
    return s;
}

/* The kernel of @p block for the words of a launch (tj_block_words): with edges when
 * words.edge is not 0. */
static inline tj_kernel_spec_t tj_spec_words(const tj_block_t *block, tj_words_t words,
                                             tj_dir_t dir, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_SINGLE,
                          .blocks = block,
                          .nblocks = 1,
                          .word = words.word,
                          .edge = words.edge,
                          .dir = dir,
                          .target = target};
    return s;
}

/* The external32 kernel of @p block for elements of @p esize bytes: each element's bytes
 * reversed as it is packed or unpacked. */
static inline tj_kernel_spec_t tj_spec_swap(const tj_block_t *block, int esize, tj_dir_t dir,
                                            const char *target)
{
    tj_kernel_spec_t s = tj_spec_single(block, esize, dir, target);
    s.op.kind = TJ_OP_SWAP;
    return s;
}

/* The reduction kernel of @p block for elements of the C type @p ctype, @p esize bytes:
 * inout = @p expr for each element (see tj_kernel_op_t); its direction is UNPACK (it writes the
 * typed buffer). */
static inline tj_kernel_spec_t tj_spec_reduce(const tj_block_t *block, int esize, const char *ctype,
                                              const char *expr, const char *what,
                                              const char *target)
{
    tj_kernel_spec_t s = tj_spec_single(block, esize, TJ_DIR_UNPACK, target);
    s.op = (tj_kernel_op_t){TJ_OP_REDUCE, ctype, expr, what};
    return s;
}

/* A fused kernel of @p n blocks, block i moved with words[i] bytes at a time (its W the widest
 * of them). */
static inline tj_kernel_spec_t tj_spec_fused(const tj_block_t *blocks, const int *words, int n,
                                             tj_dir_t dir, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_FUSED,
                          .blocks = blocks,
                          .nblocks = n,
                          .word = 1,
                          .words = words,
                          .dir = dir,
                          .target = target};
    for (int i = 0; i < n; i++)
        s.word = words[i] > s.word ? words[i] : s.word;
    return s;
}

static inline tj_kernel_spec_t tj_spec_generic(int word, tj_dir_t dir, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_GENERIC, .word = word, .dir = dir, .target = target};
    return s;
}

/* The kernel of every part of the finished layout @p layout, (@p word, @p one_object) as a
 * launch takes it (tj_layout_launch_word); @p serial for the one-thread unpack of a layout whose
 * bytes overlap (a kernel of its own name). */
static inline tj_kernel_spec_t tj_spec_parts(const tj_layout_t *layout, int word, bool one_object,
                                             tj_dir_t dir, bool serial, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_PARTS,
                          .word = word,
                          .dir = dir,
                          .target = target,
                          .layout = layout,
                          .serial = serial,
                          .one_object = one_object};
    return s;
}

/* The word block @p i of @p spec is moved with: its words[i], or W. */
static inline int tj_spec_block_word(const tj_kernel_spec_t *spec, int i)
{
    return spec->kind == TJ_KERNEL_FUSED && spec->words != NULL ? spec->words[i] : spec->word;
}

/* Whether @p word is a word a kernel moves: 1, 2, 4, 8 or 16. */
static inline bool tj_spec_valid_word(int word)
{
    return word == 1 || word == 2 || word == 4 || word == 8 || word == 16;
}

/* Longest compile target name, with its NUL. */
#define TJ_TARGET_MAX 32

/* Longest text of a REDUCE kernel's element type, expression and operation, with its NUL. */
#define TJ_KERNEL_OP_TEXT_MAX 128

/* A manifest line parsed (kernels/key.h): the spec it names, with room of its own for its blocks,
 * their words and its target. */
typedef struct {
    tj_kernel_kind_t kind;
    tj_block_t blocks[TJ_FUSED_MAX];
    int words[TJ_FUSED_MAX]; /* each block's word, */
    bool words_given;        /* given (FUSED) */
    int nblocks;
    int word, edge;
    tj_dir_t dir;
    char target[TJ_TARGET_MAX];
    tj_layout_t *layout; /* PARTS: the layout the line names (tj_key_line_release) */
    bool serial, one_object;
} tj_spec_line_t;

#endif /* TJ_KERNELS_SPEC_H */
