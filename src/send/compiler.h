/* Background compiles: kernels a commit needs are compiled by worker threads (at most
 * TYPEJIT_JIT_THREADS at once) instead of stalling MPI_Type_commit; until they are ready, device
 * calls of that type use the generic kernel. TYPEJIT_JIT_SYNC=1 compiles at commit instead. */
#ifndef TJ_SEND_COMPILER_H
#define TJ_SEND_COMPILER_H

#include <stdbool.h>

#include "jit/gen.h"
#include "type/block.h"

/* Queue the compile of the kernel (block, word, dir, target); returns at once. A NULL @p target
 * (a commit's request) is decided by the worker: device 0's, or the one without a device under
 * TYPEJIT_JIT=always, so that a commit starts neither the CUDA driver nor NVRTC. A kernel
 * already queued or being compiled is not queued twice; a full queue drops the request (the next
 * call that needs the kernel asks again). */
void tj_compiler_request(const tj_block_t *block, int word, tj_dir_t dir, const char *target);

/* Where the commit's request for kernel (block, word, dir) stands (tj_compiler_request with a
 * NULL target): waiting in the queue, being compiled, or neither (never asked, or done). */
typedef enum { TJ_COMPILE_IDLE, TJ_COMPILE_QUEUED, TJ_COMPILE_RUNNING } tj_compile_state_t;
tj_compile_state_t tj_compiler_state(const tj_block_t *block, int word, tj_dir_t dir);

/* True while compiles are queued or running (tests, finalize). */
bool tj_compiler_busy(void);

/* Wait up to @p seconds for the compiles queued or running to end, so that a job that ends
 * right after its commits still leaves its kernels in the disk cache for the next run
 * (MPI_Finalize, TYPEJIT_JIT_DRAIN). Returns at once when there are none. */
void tj_compiler_drain(int seconds);

/* Drop the compiles still queued and wait for the running ones, which still store their kernels
 * in the disk cache; the workers end (MPI_Finalize, after tj_compiler_drain). */
void tj_compiler_finalize(void);

#endif /* TJ_SEND_COMPILER_H */
