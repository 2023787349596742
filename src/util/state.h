/* SPDX-License-Identifier: BSD-3-Clause */
/* The support layer's mutable state in one structure, a sub-structure per module. */
#ifndef TJ_UTIL_STATE_H
#define TJ_UTIL_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/common.h"
#include "util/counters.h"
#include "util/settings.h"


struct tj_stats_block;

/* Warnings about the settings held until the rank is known (config.c). */
#define TJ_CONFIG_MAX_DEFERRED 16
/* Texts this process has said once per job (their hashes); beyond this many, texts are said
 * again (log.c). */
#define TJ_LOG_MAX_SAID 256

typedef struct {
    /* The logging (log.c): the level every log macro reads, written once when the configuration
     * is loaded, and the rank shown in the prefix. */
    struct {
        int level;
        int rank;
        /* The once-per-job warnings already said, and the claims held for the job (their sockets
         * stay open until the process ends). */
        _Alignas(64) pthread_mutex_t claim_lock;
        uint64_t said[TJ_LOG_MAX_SAID];
        int nsaid, nclaims;
    } log;
    /* The settings (config.c), parsed once; read on the hot paths through tj_config(). */
    struct {
        _Alignas(64) atomic_bool ready;
        tj_config_t settings;
        pthread_once_t once;
        /* Warnings about the settings are kept, not printed, while the environment is parsed: the
         * library is loaded into every process of a job (mpirun, a shell's `ls`), and only MPI
         * processes should speak, once (tj_config_flush_warnings). */
        _Alignas(64) pthread_mutex_t deferred_lock;
        char deferred[TJ_CONFIG_MAX_DEFERRED][320];
        int ndeferred, ndropped;
    } config;
    /* The counters (stats.c): every block in use, the free ones (of threads that ended), and the
     * counts of those threads; the key whose destructor gives a thread's block back. */
    struct {
        _Alignas(64) pthread_mutex_t blocks_lock;
        struct tj_stats_block *in_use, *unused;
        uint64_t ended[TJ_STAT_COUNT];
        pthread_key_t block_key;
        pthread_once_t key_once;
    } stats;
} tj_util_state_t;

extern TJ_LOCAL tj_util_state_t tj_util_state;

/* The layer's state for each thread. Initial-exec: read on every count as one load (the library
 * is loaded at start). */
typedef struct {
    struct {
        struct tj_stats_block *mine; /* the block this thread counts in (stats.c) */
    } stats;
} tj_util_thread_t;

extern _Thread_local TJ_LOCAL tj_util_thread_t tj_util_thread
    __attribute__((tls_model("initial-exec")));

#endif /* TJ_UTIL_STATE_H */
