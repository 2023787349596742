/* SPDX-License-Identifier: BSD-3-Clause */
/* Background compiles: kernels a commit needs are compiled by worker threads (at most
 * TYPEJIT_JIT_THREADS at once) instead of stalling MPI_Type_commit; until they are ready, device
 * calls of that type use the generic kernel. TYPEJIT_JIT_SYNC=1 compiles at commit instead. */
#ifndef TJ_KERNELS_COMPILER_H
#define TJ_KERNELS_COMPILER_H

#include <stdbool.h>

#include "jit/gen.h"
#include "type/block.h"
#include "type/layout.h"

/* Queue the compile of the kernel (block, words, dir, target); returns at once. A NULL @p target
 * (a commit's request) is decided by the worker: device 0's, or the one without a device under
 * TYPEJIT_JIT=always, so that a commit starts neither the CUDA driver nor NVRTC. A kernel
 * already queued or being compiled is not queued twice; a full queue drops the request (the next
 * call that needs the kernel asks again). */
void tj_compiler_request(const tj_block_t *block, tj_words_t words, tj_dir_t dir,
                         const char *target);

/* The same for the parts kernel (@p word, @p one_object) of the finished layout @p layout (kept
 * alive while queued). */
void tj_compiler_request_parts(const tj_layout_t *layout, int word, bool one_object, tj_dir_t dir,
                               bool serial, const char *target);

/* Where the commit's request for kernel (block, words, dir) stands (tj_compiler_request with a
 * NULL target): waiting in the queue, being compiled, or neither (never asked, or done). */
typedef enum { TJ_COMPILE_IDLE, TJ_COMPILE_QUEUED, TJ_COMPILE_RUNNING } tj_compile_state_t;
tj_compile_state_t tj_compiler_state(const tj_block_t *block, tj_words_t words, tj_dir_t dir);
tj_compile_state_t tj_compiler_state_parts(const tj_layout_t *layout, int word, bool one_object,
                                           tj_dir_t dir, bool serial);

/* Wait up to @p seconds for the compiles queued or running to end, so that a job that ends
 * right after its commits still leaves its kernels in the disk cache for the next run
 * (MPI_Finalize, TYPEJIT_JIT_DRAIN). Returns at once when there are none; a worker waiting for
 * another process's compile of a kernel gives up at the same time. */
void tj_compiler_drain(int seconds);

/* Drop the compiles still queued, make waits for other processes' compiles give up, and wait
 * for the workers to end: each finishes the compile it is inside of (one NVRTC compile, which
 * cannot be interrupted; its kernel is stored), so MPI_Finalize waits at most
 * TYPEJIT_JIT_DRAIN seconds plus one compile per worker (MPI_Finalize, after
 * tj_compiler_drain). The same stop runs at exit when MPI_Finalize did not. */
void tj_compiler_finalize(void);

/* How many background compiles have ended so far (one load): a launch that asked for a kernel
 * need not look for it again until this has grown. */
unsigned tj_compiler_finished(void);

#endif /* TJ_KERNELS_COMPILER_H */
