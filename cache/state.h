/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel cache's mutable state: one structure for the process, one for each thread, a
 * sub-structure per module. */
#ifndef TJ_CACHE_STATE_H
#define TJ_CACHE_STATE_H

#include <stdatomic.h>

#include "util/common.h"

/* The layer's state for the process. */
typedef struct {
    struct {
        atomic_flag checked; /* tj_store_trim_if_needed has looked once */
    } trim;
} tj_cache_state_t;

extern TJ_LOCAL tj_cache_state_t tj_cache_state;

/* The layer's state for each thread. Not initial-exec, as the variables it replaced were not:
 * nothing reads it on a hot path, and its 512-byte message would take much of the static TLS a
 * library loaded with dlopen may use. */
typedef struct {
    /* What this thread's saves did, for callers that save through another layer (the warm tool
     * through the kernel provisioning) and must count what was not stored (entry.c). */
    struct {
        long saves_done, saves_failed;
    } entry;
    /* Why the last operation of the store failed (store.c, tj_store_last_problem). */
    struct {
        char last_problem[512];
    } store;
} tj_cache_thread_t;

extern _Thread_local TJ_LOCAL tj_cache_thread_t tj_cache_thread;

#endif
