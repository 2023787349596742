/* Kernel provisioning: the compiled kernel for (block, W, direction, target), from the memory
 * table, else the disk cache, else NVRTC (then stored), and its function on a device. */
#ifndef TJ_SEND_KERNELS_H
#define TJ_SEND_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/cuda.h"
#include "jit/gen.h"
#include "type/block.h"

/* Where a kernel came from, for the counters and the warm tool's summary. */
typedef enum { TJ_FROM_MEMORY, TJ_FROM_DISK, TJ_FROM_COMPILE } tj_origin_t;

typedef struct tj_kernel tj_kernel_t;

/* The full cache key text of a kernel: everything that changes its binary. Returns the length
 * needed, as snprintf; TJ_ERR_NO_NVRTC is reported as -1. */
int tj_kernels_key(const tj_block_t *block, int word, tj_dir_t dir, const char *target, char *buf,
                   size_t len);

/* The compile target for @p device: TYPEJIT_ARCH, else the device's sm through
 * tj_nvrtc_target (computed once per device), else (no device, or -1) "sm_90". */
tj_status_t tj_kernels_target(int device, char *target, size_t len);

/* TJ_OK when the driver can load what the loaded NVRTC produces (NVRTC's major version is not
 * newer than the driver's); else TJ_ERR_UNSUPPORTED, warned once, and device buffers are
 * staged. */
tj_status_t tj_kernels_loadable(void);

/* The kernel for (block, word, dir, target), compiled once per process at most and cached on
 * disk; @p origin says where it came from (may be NULL). A failed compile is remembered: later
 * requests return its status at once, without logging again. Kernels live until
 * tj_kernels_finalize. */
tj_status_t tj_kernels_get(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                           tj_kernel_t **kernel, tj_origin_t *origin);

/* As tj_kernels_get, but never compiles: the kernel from the memory table or the disk cache,
 * else TJ_ERR_NOT_FOUND (nothing is counted as a miss): a hash lookup, and a file probe until
 * the kernel is in the memory table. */
tj_status_t tj_kernels_cached(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                              tj_kernel_t **kernel);

/* The kernel for (block, word, dir) on @p device (negative: for no device, TYPEJIT_JIT=always)
 * when it is already in this process's memory table, else TJ_ERR_NOT_FOUND: no NVRTC, no disk,
 * no driver call, so a commit may ask. A NULL @p kernel only asks whether it is there (a type's
 * description), which does not count as a cache hit. */
tj_status_t tj_kernels_ready(const tj_block_t *block, int word, tj_dir_t dir, int device,
                             tj_kernel_t **kernel);

/* The fused kernel of the @p n blocks (1 to TJ_FUSED_MAX, in this order) for (word, dir,
 * target): templates/fused.cu through tj_gen_fused_source. Provided as tj_kernels_get
 * provides a kernel (memory table keyed by a hash of every block, disk cache keyed by a text
 * holding every block's text and a "fused" marker; no manifest line), compiled synchronously
 * when neither has it; a failed compile is remembered. */
tj_status_t tj_kernels_get_fused(const tj_block_t *blocks, int n, int word, tj_dir_t dir,
                                 const char *target, tj_kernel_t **kernel);

/* A kernel given by its exact CUDA source and the name of its function (kernels a caller
 * generates itself: MPI_Reduce_local's), provided as the fused kernels are: memory table keyed
 * by a hash of the source, function and target, disk cache keyed by a text holding them (no
 * manifest line), compiled synchronously when neither has it; a failed compile is remembered. */
tj_status_t tj_kernels_get_source(const char *source, const char *name, const char *target,
                                  tj_kernel_t **kernel);

/* The generic kernel of one direction (layout as run-time arguments, tj_generic_params_t), for
 * TYPEJIT_JIT=off and as the benchmarks' baseline; cached like the others. */
tj_status_t tj_kernels_generic(tj_dir_t dir, const char *target, tj_kernel_t **kernel);

/* The loaded function of @p kernel in the current context (a tj_gpu_enter scope, or the
 * caller's current context), loading its module there on first use. A failed load is
 * remembered per context: TJ_ERR_CUDA at once, logged only the first time. */
tj_status_t tj_kernels_function(tj_kernel_t *kernel, tj_gpu_function_t *fn);

/* Everything a kernel was built for. */
const tj_block_t *tj_kernels_block(const tj_kernel_t *kernel);
int tj_kernels_word(const tj_kernel_t *kernel);
const char *tj_kernels_target_of(const tj_kernel_t *kernel);

/* The line the manifest records for a kernel, and its parser (for `typejit warm`). */
int tj_kernels_manifest_line(const tj_block_t *block, int word, tj_dir_t dir, const char *target,
                             char *buf, size_t len);
tj_status_t tj_kernels_manifest_parse(const char *line, tj_block_t *block, int *word, tj_dir_t *dir,
                                      char *target, size_t target_len);

/* Use @p dir as the disk cache with @p mode instead of the TYPEJIT_CACHE settings (tools). */
void tj_kernels_set_store(const char *dir, int read_only);

/* Drop every kernel and module and close the disk cache (MPI_Finalize). */
void tj_kernels_finalize(void);

#endif /* TJ_SEND_KERNELS_H */
