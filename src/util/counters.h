/* SPDX-License-Identifier: BSD-3-Clause */
/* The list of typejit's counters (TYPEJIT_STATS=1): apart from stats.h, which counts them, so
 * that the layer's state (state.h) can hold them by value. */
#ifndef TJ_UTIL_COUNTERS_H
#define TJ_UTIL_COUNTERS_H

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

#endif /* TJ_UTIL_COUNTERS_H */
