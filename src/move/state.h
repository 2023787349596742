/* SPDX-License-Identifier: BSD-3-Clause */
/* The byte movement layer's mutable state: one structure for the process, one for each thread,
 * a sub-structure per module (defined in state.c). */
#ifndef TJ_MOVE_STATE_H
#define TJ_MOVE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "cache/hash.h"
#include "move/systable.h"
#include "util/common.h"

/* Sets of fused members whose disjointness fused.c remembers. */
#define TJ_FUSED_CHECK_MEMORY 64

struct tj_model_memo;
struct tj_stage;
struct tj_staging_cache;

typedef struct {
    /* Which sets of fused members were found disjoint (fused.c), by a hash of the members'
     * layouts, offsets and counts; the oldest answer is replaced first. */
    struct {
        pthread_mutex_t checked_lock;
        struct {
            tj_hash_t key;
            bool used, disjoint;
        } checked[TJ_FUSED_CHECK_MEMORY];
        unsigned checked_next;
    } fused;
    /* The method model (model.c): the system MPI's CUDA-awareness, the system table of this
     * machine, and the choices remembered. */
    struct {
        pthread_once_t aware_once;
        bool aware_detected;
        const char *aware_query; /* the function that answered; NULL when there was none */
        pthread_mutex_t table_lock;
        atomic_bool table_loaded;
        tj_systable_t *table; /* NULL: the defaults decide */
        pthread_mutex_t memo_lock;
        struct tj_model_memo *memo;
        int memo_used;
    } model;
    /* The staging pool (staging.c): its idle buffers and the list of the threads' caches. */
    struct {
        pthread_mutex_t pool_lock;
        struct tj_stage *idle;
        int nidle;
        struct tj_staging_cache *caches;
        pthread_key_t cache_key; /* gives a thread's buffers to the pool when it ends */
        pthread_once_t cache_once;
    } staging;
} tj_move_state_t;

extern TJ_LOCAL tj_move_state_t tj_move_state;

/* The layer's state for each thread: its staging cache (staging.c), made on first use.
 * Initial-exec: read on every staged call as one load (the library is loaded at start). */
typedef struct {
    struct {
        struct tj_staging_cache *mine;
    } staging;
} tj_move_thread_t;

extern _Thread_local TJ_LOCAL tj_move_thread_t tj_move_thread
    __attribute__((tls_model("initial-exec")));

#endif /* TJ_MOVE_STATE_H */
