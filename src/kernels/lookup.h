/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel lookup: the one path from a kernel spec (kernels/spec.h: every kind) to a compiled
 * kernel. The memory table answers repeated requests of the process; the
 * disk caches answer requests from earlier runs and other ranks; of the processes that miss a
 * kernel, the one holding its compile lock in the cache compiles it with NVRTC and stores it,
 * and the others wait for its entry. */
#ifndef TJ_KERNELS_LOOKUP_H
#define TJ_KERNELS_LOOKUP_H

#include "kernels/kernel.h"

/* How far a request may go. */
typedef enum {
    TJ_LOOKUP_MEMORY,  /* whether this process has it in its memory table: no NVRTC, disk or
                          driver call (a commit may ask), and not counted as a hit */
    TJ_LOOKUP_CACHED,  /* the memory table, then the disk caches; never compiles */
    TJ_LOOKUP_COMPILE, /* the memory table, the disk caches, then a compile (stored) */
} tj_lookup_mode_t;

/* Where a kernel came from, for the counters and the warm tool's summary. */
typedef enum { TJ_FROM_MEMORY, TJ_FROM_DISK, TJ_FROM_COMPILE } tj_origin_t;

/* The kernel of @p spec, as far as @p mode allows: TJ_ERR_NOT_FOUND when it would have to go
 * further (nothing is counted as a miss then), TJ_ERR_BUSY when a wait for another process's
 * compile of it was given up (tj_lookup_give_up_waits). A kernel is compiled once per process at
 * most; a failed compile is remembered, and later requests return its status at once without
 * logging again. @p origin (may be NULL) says where it came from. Kernels live until
 * tj_lookup_finalize. */
tj_status_t tj_lookup_kernel(const tj_kernel_spec_t *spec, tj_lookup_mode_t mode,
                             tj_kernel_t **kernel, tj_origin_t *origin);

/* Waits for another process's compile of a kernel give up at @p at_ms (tj_clock_ms; LLONG_MAX:
 * never): the request then returns TJ_ERR_BUSY and nothing is compiled or remembered. The
 * background compiler's bound on MPI_Finalize and on exit. */
void tj_lookup_give_up_waits(long long at_ms);

/* Use @p dir as the disk cache with @p read_only instead of the TYPEJIT_CACHE settings, and
 * without the shared caches of TYPEJIT_CACHE_PATH. The interface of the `typejit` command:
 * `typejit warm` fills the cache it names, `typejit measure` reads the user's; benchmarks and
 * tests use it as the command does. The runtime itself never calls it. */
void tj_lookup_set_store(const char *dir, int read_only);

/* Drop every kernel and module and close the disk caches (MPI_Finalize). */
void tj_lookup_finalize(void);

#endif /* TJ_KERNELS_LOOKUP_H */
