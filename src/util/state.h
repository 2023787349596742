/* SPDX-License-Identifier: BSD-3-Clause */
/* The support layer's mutable state in one structure, a sub-structure per module, with the types
 * it holds by value: the log levels, the settings, the counters. */
#ifndef TJ_UTIL_STATE_H
#define TJ_UTIL_STATE_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/common.h"

typedef enum {
    TJ_LOG_OFF = 0,
    TJ_LOG_ERROR = 1,
    TJ_LOG_WARN = 2,
    TJ_LOG_INFO = 3,
    TJ_LOG_DEBUG = 4,
} tj_log_level_t;

typedef enum { TJ_HOST_AUTO, TJ_HOST_SYSTEM, TJ_HOST_ENGINE } tj_host_mode_t;
typedef enum { TJ_JIT_OFF, TJ_JIT_AUTO, TJ_JIT_ALWAYS } tj_jit_mode_t;
typedef enum { TJ_CACHE_RW, TJ_CACHE_RO, TJ_CACHE_OFF } tj_cache_mode_t;
/* auto / yes / no settings. */
typedef enum { TJ_TRI_AUTO, TJ_TRI_YES, TJ_TRI_NO } tj_tristate_t;
/* A send method forced, in the order of tj_method_t (src/move/model.h). */
typedef enum {
    TJ_FORCE_AUTO,
    TJ_FORCE_DEVICE,
    TJ_FORCE_ONESHOT,
    TJ_FORCE_STAGED
} tj_method_setting_t;
/* When deferred device sends reach the system MPI. */
typedef enum {
    TJ_PROGRESS_OFF,   /* no deferral: a send waits for its pack inside the call */
    TJ_PROGRESS_CALLS, /* handed over at the MPI calls the application makes */
    TJ_PROGRESS_THREAD /* and by a progress thread under MPI_THREAD_MULTIPLE */
} tj_progress_mode_t;

/* The parsed settings; each field is filled by one entry of tj_config_table, which names its
 * variable. */
typedef struct {
    bool disable;                   /* pass every call straight to the system MPI */
    tj_log_level_t log_level;       /* what is written to stderr */
    bool stats;                     /* counters printed at MPI_Finalize */
    tj_host_mode_t host;            /* who packs host buffers */
    tj_jit_mode_t jit;              /* which kernels are compiled, and when */
    char arch[32];                  /* "sm_90", "compute_90"; empty means the device's */
    tj_cache_mode_t cache;          /* how the disk cache is used */
    char cache_dir[PATH_MAX];       /* the disk cache, or the XDG default; empty if none is known */
    bool save_source;               /* keep the .cu beside each cache entry */
    tj_method_setting_t method;     /* a send method forced */
    tj_tristate_t cuda_aware;       /* does the system MPI take device memory */
    tj_tristate_t stage_contiguous; /* stage contiguous device sends */
    char system_table[PATH_MAX];    /* the measured table; empty: its place in the cache */
    bool jit_sync;                  /* compile at commit, not in the background */
    int jit_threads;                /* background compiles at once */
    int jit_drain_s;                /* how long MPI_Finalize waits for compiles, in seconds */
    char cache_path[PATH_MAX];      /* shared read-only caches, "dir:dir" */
    long long cache_max_size;       /* in bytes; 0: no automatic trim */
    tj_progress_mode_t progress;    /* when deferred sends reach the system MPI */
} tj_config_t;

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
