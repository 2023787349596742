/* SPDX-License-Identifier: BSD-3-Clause */
/* The launch path: the one path from what a launch moves (a launch descriptor) to a kernel
 * running on the device, shared by MPI_Pack and the send paths, fused sets, MPI_Reduce_local,
 * external32 and `typejit measure`. It takes the kernel from the kernel lookup (or asks the
 * background compiler and runs the generic kernel meanwhile), works out the launch's words,
 * geometry and arguments through the kind's operations (kernels/kind.h), puts a layout's part table
 * on the device, launches, counts, and waits or leaves the wait to the call's batch. The callers
 * keep what only they know: whether the call is theirs, its buffers' contexts, the alignment the
 * elements need, and the scope (tj_gpu_enter) the launch runs in. */
#ifndef TJ_KERNELS_LAUNCH_H
#define TJ_KERNELS_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/batch.h"
#include "gpu/cuda.h"
#include "kernels/kernel.h"
#include "kernels/kind.h"
#include "kernels/target.h"
#include "type/table.h"

/* How a launch finds its kernel. */
typedef enum {
    /* As TYPEJIT_JIT and TYPEJIT_JIT_SYNC say (the pack and unpack paths): the kernel from the
     * memory table or the disk caches; else compiled now (TYPEJIT_JIT_SYNC=1), or asked of the
     * background compiler while the generic kernel (the layout's runs, for a layout) runs; the
     * generic kernel alone with TYPEJIT_JIT=off. */
    TJ_LAUNCH_AS_SET,
    /* The kernel from the kernel lookup, compiled now when no cache has it. */
    TJ_LAUNCH_COMPILE,
} tj_launch_policy_t;

/* One member of a fused launch: @p count objects of @p block (strided), object 0 at byte @p typed
 * from the typed pointer (the block's start is added on top), its packed bytes at byte @p packed
 * from the packed pointer (either may be negative). */
typedef struct {
    const tj_block_t *block;
    int64_t typed, packed, count;
    /* The serial of the record the block is of (tj_type_info_t.serial), for the kernel layer to
     * find the launch of a set it made before; 0: none. */
    uint64_t serial;
} tj_launch_member_t;

/* What one launch moves. Exactly one of block, layout and members. */
typedef struct {
    const tj_block_t *block; /* count objects of one strided block, object 0 at its start */
    tj_layout_t *layout;     /* count objects of a finished layout, frame element 0 at its start */
    /* The plan of the type whose block or layout this is (its record's: type/table.h), where
     * the launch keeps the kernel it found, so that the type's next launch of the same words
     * finds it by index; NULL: none. */
    tj_type_plan_t *plan;
    const tj_launch_member_t *members; /* a fused set: 2 to TJ_FUSED_MAX members */
    int nmembers;
    int64_t count;
    /* A block's kernel: what it does with each word (tj_kernel_op_t), words of op_size bytes
     * for SWAP and REDUCE (the element's size: the caller has checked that both sides allow
     * it); MOVE: the widest words the addresses allow (tj_block_words). */
    tj_kernel_op_t op;
    int op_size;
    tj_dir_t dir;
    bool serial; /* a layout, UNPACK: one thread, in typemap order (its bytes overlap) */
    /* The typed buffer argument and the packed bytes, device addresses in the current scope's
     * context. REDUCE: typed is the inout buffer argument, packed the input buffer's object 0
     * (its argument plus the block's start). */
    tj_devptr_t typed, packed;
    int device; /* the ordinal of the current scope's device: the compile target's */
    tj_launch_policy_t policy;
    /* After the launch: wait (through @p batch, which keeps the wait for the call's one wait; NULL:
     * now). Without @p wait the caller queues more work on the stream and waits itself. */
    bool wait;
    tj_batch_t *batch;
} tj_launch_desc_t;

/* A launch made ready: its kernel's function, geometry and arguments (pointing into the
 * structure, which therefore stays where tj_launch_prepare filled it). */
typedef struct {
    tj_gpu_function_t fn;
    tj_kind_args_t args;
    bool jit;    /* the kernel made for the launch (not the generic one standing in) */
    bool edges;  /* a kernel with edges */
    bool serial; /* a one-thread unpack */
    bool fused;  /* a fused set, */
    int shapes;  /* of this many distinct blocks */
} tj_launch_ready_t;

/* Whether this process can launch the kernels its NVRTC compiles at all: TJ_ERR_UNSUPPORTED when
 * the driver is older than NVRTC (said once). */
static inline tj_status_t tj_launch_possible(void)
{
    return tj_target_loadable();
}

/* Everything before the launch of @p d, in the current scope's context: the kernel, the words,
 * geometry and arguments, a layout's part table on the device. TJ_ERR_NOT_FOUND never (the
 * generic kernel stands in); TJ_ERR_UNSUPPORTED when no kernel can serve the launch (the caller
 * stages it); other errors as the kernel lookup and the driver report them. */
tj_status_t tj_launch_prepare(const tj_launch_desc_t *d, tj_launch_ready_t *r);

/* The launch itself, on typejit's stream in the current scope's context, counted; not waited
 * for. Every kernel typejit runs is launched here. */
tj_status_t tj_launch_go(tj_launch_ready_t *r);

/* tj_launch_prepare, tj_launch_go, then the wait @p d asks for. */
tj_status_t tj_launch_run(const tj_launch_desc_t *d);

#endif /* TJ_KERNELS_LAUNCH_H */
