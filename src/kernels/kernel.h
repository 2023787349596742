/* A kernel: what it is built for (its spec: one strided block, a fused set of blocks, or the
 * generic kernel; word, direction and compile target), its exact CUDA source, its compiled
 * image, and its module in every context it was loaded in. Kernels are made and owned by the
 * supply (kernels/supply.h); other layers hold them by pointer and launch their function. */
#ifndef TJ_KERNELS_KERNEL_H
#define TJ_KERNELS_KERNEL_H

#include <stddef.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "jit/parts.h"
#include "kernels/module.h"
#include "type/block.h"

typedef enum {
    TJ_KERNEL_SINGLE,  /* one strided block (tj_gen_source) */
    TJ_KERNEL_FUSED,   /* a set of blocks moved in one launch (tj_gen_fused_source) */
    TJ_KERNEL_GENERIC, /* the layout as run-time arguments (tj_gen_generic_source) */
    TJ_KERNEL_SOURCE,  /* a kernel its caller generated itself (MPI_Reduce_local's with the
                          operation baked in, external32's with the byte swap): given by its
                          exact source and function name */
    TJ_KERNEL_PARTS,   /* every part of a layout (tj_gen_parts_source) */
} tj_kernel_kind_t;

/* What a kernel is built for. A kernel serves every placement of its shapes: it is built for
 * each block moved to start 0 (tj_block_at_zero) and launched at the typed pointer plus the
 * block's start, whatever start the blocks given here have. */
typedef struct {
    tj_kernel_kind_t kind;
    const tj_block_t *blocks; /* SINGLE: one; FUSED: nblocks (1 to TJ_FUSED_MAX); GENERIC: none */
    int nblocks;
    /* W, dividing every block's word; unused by SOURCE. SINGLE with edges: the word of the
     * middle of each run, dividing the block's edges_word; FUSED: the widest of words. */
    int word;
    int edge;         /* SINGLE: the word of each run's head and tail (below W), or 0: no edges */
    const int *words; /* FUSED: the word of each block, dividing it (NULL: W for every block) */
    tj_dir_t dir;
    const char *target;        /* "sm_90" (CUBIN) or "compute_90" (PTX) */
    const char *source;        /* SOURCE: the exact CUDA source (NULL in a kernel's own spec) */
    const char *name;          /* SOURCE: the kernel function's name in it */
    const tj_layout_t *layout; /* PARTS: the finished layout (its table only when baked) */
    bool serial;               /* PARTS, UNPACK: launched as one thread (an overlapping layout) */
} tj_kernel_spec_t;

static inline tj_kernel_spec_t tj_kernel_single(const tj_block_t *block, int word, tj_dir_t dir,
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
static inline tj_kernel_spec_t tj_kernel_words(const tj_block_t *block, tj_words_t words,
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

/* A fused kernel of @p n blocks, block i moved with words[i] bytes at a time (its W the widest
 * of them). */
static inline tj_kernel_spec_t tj_kernel_fused(const tj_block_t *blocks, const int *words, int n,
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

static inline tj_kernel_spec_t tj_kernel_generic(int word, tj_dir_t dir, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_GENERIC, .word = word, .dir = dir, .target = target};
    return s;
}

/* The kernel @p name defined by @p source, for @p target; the direction is the caller's to
 * choose for the counters (it does not change the binary). */
static inline tj_kernel_spec_t tj_kernel_from_source(const char *source, const char *name,
                                                     tj_dir_t dir, const char *target)
{
    tj_kernel_spec_t s = {
        .kind = TJ_KERNEL_SOURCE, .dir = dir, .target = target, .source = source, .name = name};
    return s;
}

/* The kernel of every part of the finished layout @p layout; @p serial for the one-thread
 * unpack of a layout whose bytes overlap (a kernel of its own name). */
static inline tj_kernel_spec_t tj_kernel_parts(const tj_layout_t *layout, int word, tj_dir_t dir,
                                               bool serial, const char *target)
{
    tj_kernel_spec_t s = {.kind = TJ_KERNEL_PARTS,
                          .word = word,
                          .dir = dir,
                          .target = target,
                          .layout = layout,
                          .serial = serial};
    return s;
}

/* Longest kernel function name of a SOURCE kernel, with its NUL. */
#define TJ_KERNEL_NAME_MAX 64

/* Longest compile target name, with its NUL. */
#define TJ_TARGET_MAX 32

/* A kernel. Its fields are the supply's to fill (src/kernels/supply.c); other layers use the
 * functions below. */
typedef struct tj_kernel {
    tj_kernel_kind_t kind;
    int nblocks;
    tj_block_t *blocks; /* moved to start 0; NULL for the generic kernel */
    int word, edge;
    int *words; /* FUSED: the word of each block (NULL: word for all) */
    tj_dir_t dir;
    char target[TJ_TARGET_MAX];
    char name[TJ_KERNEL_NAME_MAX]; /* SOURCE: its function */
    tj_layout_t *layout;           /* PARTS: what the source depends on (tj_layout_signature) */
    bool serial;
    tj_status_t failed; /* a compile that failed, remembered so that it is neither retried nor
                           logged again; TJ_OK for a usable image */
    void *image;
    size_t len;
    tj_modules_t modules;
} tj_kernel_t;

/* TJ_OK when @p spec is well formed: a known kind, the number of blocks its kind takes, each
 * block valid for its word (1, 2, 4, 8 or 16, dividing the block's word; with edges, an edge
 * word dividing it and a W above it dividing the block's edges_word), a direction and a target
 * of fitting length. */
tj_status_t tj_kernel_check(const tj_kernel_spec_t *spec);

/* The word block @p i of @p spec is moved with: its words[i], or W. */
int tj_kernel_block_word(const tj_kernel_spec_t *spec, int i);

/* The name of the kernel function of @p spec in its source. */
const char *tj_kernel_name(const tj_kernel_spec_t *spec);

/* The exact CUDA source of @p spec, blocks moved to start 0 (malloc'd, the caller frees it). */
tj_status_t tj_kernel_source(const tj_kernel_spec_t *spec, char **source);

/* A new kernel for @p spec (blocks copied and moved to start 0), without an image yet. */
tj_status_t tj_kernel_new(const tj_kernel_spec_t *spec, tj_kernel_t **kernel);

/* The spec of @p kernel (pointing into the kernel). */
tj_kernel_spec_t tj_kernel_spec(const tj_kernel_t *kernel);

/* Free @p kernel, its image and its modules (the supply, at tj_supply_finalize). */
void tj_kernel_free(tj_kernel_t *kernel);

/* The loaded function of @p kernel in the current context (a tj_gpu_enter scope, or the
 * caller's current context), loading its module there on first use (kernels/module.h). */
tj_status_t tj_kernel_function(tj_kernel_t *kernel, tj_gpu_function_t *fn);

#endif /* TJ_KERNELS_KERNEL_H */
