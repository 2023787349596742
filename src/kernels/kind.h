/* SPDX-License-Identifier: BSD-3-Clause */
/* The kinds of kernel as one table of operations: for each kind, how its spec is checked, what
 * its function is called, its CUDA source, its key in the memory table, its manifest line and
 * how that line reads back, how the log and the cache listing describe it, and the geometry and
 * arguments of a launch. kernel.c, key.c, lookup.c and launch.c ask the table; none of them
 * branches on a kind. */
#ifndef TJ_KERNELS_KIND_H
#define TJ_KERNELS_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "cache/hash.h"
#include "gpu/cuda.h"
#include "jit/gen.h"
#include "jit/parts.h"
#include "kernels/spec.h"

/* What one launch moves, besides what its kernel's spec says. */
typedef struct {
    const tj_block_t *block; /* GENERIC: the block, whose layout is the kernel's arguments */
    int64_t count;           /* objects (SINGLE, GENERIC, PARTS) */
    tj_devptr_t table;       /* PARTS: the device address of the part table (0: baked) */
    const tj_fused_member_t *members; /* FUSED: the members, and how many */
    int nmembers;
} tj_kind_work_t;

/* The arguments and geometry of one launch, as its kind's kernels take them: argv points into
 * the structure itself, which therefore stays where it was filled. */
typedef struct {
    tj_devptr_t dst, src;
    long long count;
    union {
        tj_generic_params_t generic;
        tj_parts_args_t parts;
        tj_fused_args_t fused;
    } by;
    void *argv[4];
    tj_launch_t geo;
} tj_kind_args_t;

typedef struct {
    const char *name; /* of the kind, for the table itself */
    /* The word after "TARGET DIRECTION W=WORD " that marks the kind's manifest lines ("fused",
     * "parts"); NULL for the kind whose lines have none (one block), and for kinds the manifest
     * does not record. */
    const char *tag;
    /* What the kind asks of a spec beyond a target and a direction (tj_kernel_check). */
    tj_status_t (*check)(const tj_kernel_spec_t *spec);
    /* The kernel function's name in its source. */
    const char *(*function)(const tj_kernel_spec_t *spec);
    /* The exact CUDA source of a checked spec, blocks moved to start 0. */
    tj_status_t (*source)(const tj_kernel_spec_t *spec, char **source);
    /* The memory table's key of a checked spec: the same identity as its disk key text (what
     * else that text holds is fixed for the process), hashed from packed records so that a hit
     * formats no text. */
    tj_hash_t (*memo)(const tj_kernel_spec_t *spec);
    /* The manifest line, as snprintf; -1 for kernels the manifest does not record. NULL: none. */
    int (*line)(const tj_kernel_spec_t *spec, char *buf, size_t len);
    /* Read the rest of a manifest line (after the tag and its blank, or after "W=WORD " for the
     * untagged kind) into @p parsed, whose target, direction and word are set: TJ_ERR_PARSE for
     * anything malformed. NULL: the manifest has no lines of the kind. */
    tj_status_t (*parse)(const char *rest, tj_spec_line_t *parsed);
    /* The kernel in words for debug lines: "pack sm_90 W=16 start=0 extent=...". */
    void (*describe)(const tj_kernel_spec_t *spec, char *buf, size_t len);
    /* The kernel a disk key names, in one line (`typejit cache list`), from its manifest line
     * without the target: @p head ("DIRECTION W=WORD", @p hlen bytes) and what follows the tag
     * (@p tail, @p tlen bytes; the whole rest after "W=WORD " for the untagged kind); or, for a
     * kind the manifest does not record, from its function's name (@p head, @p hlen; @p tail
     * NULL). False when the text is not the kind's. */
    bool (*describe_key)(const char *head, size_t hlen, const char *tail, size_t tlen, char *buf,
                         size_t len);
    /* The geometry and arguments of a launch of a checked spec's kernel between @p dst and
     * @p src (the typed side already moved to object 0's first byte of the spec's blocks at 0,
     * or of the layout's frame element 0). TJ_ERR_UNSUPPORTED when the kernel cannot serve the
     * launch, TJ_ERR_INVALID for bad work. */
    tj_status_t (*geometry)(const tj_kernel_spec_t *spec, const tj_kind_work_t *work,
                            tj_kind_args_t *args);
} tj_kind_t;

/* The operations of @p kind; NULL for a kind that does not exist. */
const tj_kind_t *tj_kind_of(tj_kernel_kind_t kind);

#endif /* TJ_KERNELS_KIND_H */
