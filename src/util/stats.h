/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-process counters of what typejit did, printed at MPI_Finalize when TYPEJIT_STATS=1. */
#ifndef TJ_UTIL_STATS_H
#define TJ_UTIL_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* The printed key of each counter is its name. */
#define TJ_STATS_LIST(_X)                                                                          \
    _X(commits)                                                                                    \
    _X(strided)                                                                                    \
    _X(deferred)                                                                                   \
    _X(fallback)                                                                                   \
    _X(layouts)                                                                                    \
    _X(packs_engine)                                                                               \
    _X(packs_system)                                                                               \
    _X(unpacks_engine)                                                                             \
    _X(unpacks_system)                                                                             \
    _X(packs_gpu)                                                                                  \
    _X(unpacks_gpu)                                                                                \
    _X(gpu_fallbacks)                                                                              \
    _X(kernel_launches)                                                                            \
    _X(fused_launches)                                                                             \
    _X(edge_launches)                                                                              \
    _X(gpu_waits)                                                                                  \
    _X(gpu_wait_us)                                                                                \
    _X(sends_gpu)                                                                                  \
    _X(recvs_gpu)                                                                                  \
    _X(sends_queued)                                                                               \
    _X(queue_waits)                                                                                \
    _X(queue_wait_us)                                                                              \
    _X(unpacks_async)                                                                              \
    _X(method_device)                                                                              \
    _X(method_oneshot)                                                                             \
    _X(method_staged)                                                                              \
    _X(staging_pageable)                                                                           \
    _X(staging_mapped)                                                                             \
    _X(jit_compiles)                                                                               \
    _X(jit_failures)                                                                               \
    _X(jit_background)                                                                             \
    _X(packs_generic_while_compiling)                                                              \
    _X(unpacks_serial)                                                                             \
    _X(layout_tables)                                                                              \
    _X(cache_hits_memory)                                                                          \
    _X(cache_hits_disk)                                                                            \
    _X(cache_misses)                                                                               \
    _X(commits_via_contents)                                                                       \
    _X(calls_staged)                                                                               \
    _X(calls_refused)                                                                              \
    _X(windows_separate)                                                                           \
    _X(window_dtoh_bytes)                                                                          \
    _X(window_htod_bytes)

typedef enum {
#define TJ_STAT_ENUM(_name) TJ_STAT_##_name,
    TJ_STATS_LIST(TJ_STAT_ENUM)
#undef TJ_STAT_ENUM
        TJ_STAT_COUNT
} tj_stat_t;

/* Each thread counts in a block of its own, with plain stores (no locked instruction on a call's
 * path); a reader sums the blocks. A block of a thread that ended is kept for the next thread,
 * its counts moved to the process's total first. */
typedef struct tj_stats_block {
    _Atomic uint64_t v[TJ_STAT_COUNT];
    struct tj_stats_block *next;
} tj_stats_block_t;

extern _Thread_local tj_stats_block_t *tj_stats_mine __attribute__((tls_model("initial-exec")));
tj_stats_block_t *tj_stats_block(void);

static inline void tj_stats_add(tj_stat_t which, uint64_t n)
{
    tj_stats_block_t *b = tj_stats_mine;

    if (b == NULL && (b = tj_stats_block()) == NULL)
        return;
    /* Only this thread writes its block: a load and a store, which readers see whole. */
    atomic_store_explicit(&b->v[which],
                          atomic_load_explicit(&b->v[which], memory_order_relaxed) + n,
                          memory_order_relaxed);
}

#define tj_stats_inc(_which) tj_stats_add((_which), 1)

uint64_t tj_stats_get(tj_stat_t which);
void tj_stats_reset(void);

#endif /* TJ_UTIL_STATS_H */
