/* SPDX-License-Identifier: BSD-3-Clause */
/* A kernel: its spec (kernels/spec.h), its exact CUDA source, its compiled image, and its module
 * in every context it was loaded in. Kernels are made and owned by the kernel lookup
 * (kernels/lookup.h); other layers hold them by pointer and launch them through the launch path
 * (kernels/launch.h). What differs between kinds of kernel is in their table of operations
 * (kernels/kind.h). */
#ifndef TJ_KERNELS_KERNEL_H
#define TJ_KERNELS_KERNEL_H

#include <stddef.h>

#include "gpu/cuda.h"
#include "kernels/module.h"
#include "kernels/spec.h"

/* A kernel. Its fields are the kernel lookup's to fill (src/kernels/lookup.c); other layers use the
 * functions below. */
typedef struct tj_kernel {
    tj_kernel_kind_t kind;
    int nblocks;
    tj_block_t *blocks; /* moved to start 0; NULL for the generic kernel */
    int word, edge;
    int *words; /* FUSED: the word of each block (NULL: word for all) */
    tj_dir_t dir;
    char target[TJ_TARGET_MAX];
    tj_op_kind_t op;
    char ctype[TJ_KERNEL_OP_TEXT_MAX], expr[TJ_KERNEL_OP_TEXT_MAX],
        what[TJ_KERNEL_OP_TEXT_MAX]; /* REDUCE: its texts */
    tj_layout_t *layout;             /* PARTS: what the source depends on (tj_layout_signature) */
    bool serial, one_object;
    tj_status_t failed; /* a compile that failed, remembered so that it is neither retried nor
                           logged again; TJ_OK for a usable image */
    void *image;
    size_t len;
    tj_modules_t modules;
    /* SINGLE: the launch geometry of its block, word and edge, but for the count. */
    tj_gen_geometry_t geo;
} tj_kernel_t;

/* TJ_OK when @p spec is well formed: a known kind, a direction and a target of fitting length,
 * and what its kind asks (kernels/kind.h): for blocks, each valid for its word (1, 2, 4, 8 or
 * 16, dividing the block's word; with edges, an edge word dividing it and a W above it dividing
 * the block's edges_word). */
tj_status_t tj_kernel_check(const tj_kernel_spec_t *spec);

/* The name of the kernel function of @p spec in its source. */
const char *tj_kernel_name(const tj_kernel_spec_t *spec);

/* The exact CUDA source of @p spec, blocks moved to start 0 (malloc'd, the caller frees it). */
tj_status_t tj_kernel_source(const tj_kernel_spec_t *spec, char **source);

/* A new kernel for @p spec (blocks copied and moved to start 0), without an image yet. */
tj_status_t tj_kernel_new(const tj_kernel_spec_t *spec, tj_kernel_t **kernel);

/* The spec of @p kernel (pointing into the kernel). */
tj_kernel_spec_t tj_kernel_spec(const tj_kernel_t *kernel);

/* Free @p kernel, its image and its modules (the kernel lookup, at tj_lookup_finalize). */
void tj_kernel_free(tj_kernel_t *kernel);

/* tj_kernel_function when the module is not loaded in the current context yet. */
tj_status_t tj_kernel_load(tj_kernel_t *kernel, tj_gpu_function_t *fn);

/* The loaded function of @p kernel in the current context (a tj_gpu_enter scope, or the
 * caller's current context), loading its module there on first use (kernels/module.h). */
static inline tj_status_t tj_kernel_function(tj_kernel_t *kernel, tj_gpu_function_t *fn)
{
    return tj_modules_loaded(&kernel->modules, fn) ? TJ_OK : tj_kernel_load(kernel, fn);
}

#endif /* TJ_KERNELS_KERNEL_H */
