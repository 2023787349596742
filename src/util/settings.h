/* SPDX-License-Identifier: BSD-3-Clause */
/* The parsed TYPEJIT_* settings (tj_config_t) and the types of their fields, the log levels
 * among them: apart from config.h, which reads them, so that the layer's state (state.h) can hold
 * them by value. */
#ifndef TJ_UTIL_SETTINGS_H
#define TJ_UTIL_SETTINGS_H

#include <limits.h>
#include <stdbool.h>

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

#endif /* TJ_UTIL_SETTINGS_H */
