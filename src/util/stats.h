/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-process counters of what typejit did, printed at MPI_Finalize when TYPEJIT_STATS=1. */
#ifndef TJ_UTIL_STATS_H
#define TJ_UTIL_STATS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/state.h"

/* The counters (TJ_STATS_LIST, tj_stat_t) are in util/counters.h. */

/* Each thread counts in a block of its own, with plain stores (no locked instruction on a call's
 * path); a reader sums the blocks. A block of a thread that ended is kept for the next thread,
 * its counts moved to the process's total first. */
typedef struct tj_stats_block {
    _Atomic uint64_t v[TJ_STAT_COUNT];
    struct tj_stats_block *next;
} tj_stats_block_t;

tj_stats_block_t *tj_stats_block(void);

static inline void tj_stats_add(tj_stat_t which, uint64_t n)
{
    tj_stats_block_t *b = tj_util_thread.stats.mine;

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
