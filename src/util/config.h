/* SPDX-License-Identifier: BSD-3-Clause */
/* Every TYPEJIT_* setting, parsed once from the environment into one struct. */
#ifndef TJ_UTIL_CONFIG_H
#define TJ_UTIL_CONFIG_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "util/log.h"

typedef enum { TJ_HOST_AUTO, TJ_HOST_SYSTEM, TJ_HOST_ENGINE } tj_host_mode_t;
typedef enum { TJ_JIT_OFF, TJ_JIT_AUTO, TJ_JIT_ALWAYS } tj_jit_mode_t;
typedef enum { TJ_CACHE_RW, TJ_CACHE_RO, TJ_CACHE_OFF } tj_cache_mode_t;
/* auto / yes / no settings. */
typedef enum { TJ_TRI_AUTO, TJ_TRI_YES, TJ_TRI_NO } tj_tristate_t;
/* TYPEJIT_METHOD, in the order of tj_method_t (src/move/model.h). */
typedef enum {
    TJ_FORCE_AUTO,
    TJ_FORCE_DEVICE,
    TJ_FORCE_ONESHOT,
    TJ_FORCE_STAGED
} tj_method_setting_t;

typedef struct {
    bool disable;               /* TYPEJIT_DISABLE: pass every call straight to the system MPI */
    tj_log_level_t log_level;   /* TYPEJIT_LOG */
    bool stats;                 /* TYPEJIT_STATS: counters printed at MPI_Finalize */
    tj_host_mode_t host;        /* TYPEJIT_HOST: who packs host buffers */
    tj_jit_mode_t jit;          /* TYPEJIT_JIT */
    char arch[32];              /* TYPEJIT_ARCH: "sm_90", "compute_90"; empty means the device's */
    tj_cache_mode_t cache;      /* TYPEJIT_CACHE */
    char cache_dir[PATH_MAX];   /* TYPEJIT_CACHE_DIR, or the XDG default; empty if none is known */
    bool save_source;           /* TYPEJIT_CACHE_SAVE_SOURCE: keep the .cu beside each entry */
    tj_method_setting_t method; /* TYPEJIT_METHOD: force a send method */
    tj_tristate_t cuda_aware;   /* TYPEJIT_CUDA_AWARE: does the system MPI take device memory */
    tj_tristate_t stage_contiguous; /* TYPEJIT_STAGE_CONTIGUOUS: stage contiguous device sends */
    char system_table[PATH_MAX];    /* TYPEJIT_SYSTEM_TABLE: the measured table; empty: default */
    bool jit_sync;                  /* TYPEJIT_JIT_SYNC: compile at commit, not in the background */
    int jit_threads;                /* TYPEJIT_JIT_THREADS: background compiles at once */
    int jit_drain_s;                /* TYPEJIT_JIT_DRAIN: MPI_Finalize waits for compiles */
    char cache_path[PATH_MAX];      /* TYPEJIT_CACHE_PATH: shared read-only caches, "dir:dir" */
    long long cache_max_size;       /* TYPEJIT_CACHE_MAX_SIZE in bytes; 0: no automatic trim */
} tj_config_t;

/* Parse the environment into @p cfg; malformed values get a warning and the default. */
void tj_config_parse(tj_config_t *cfg);

/* The process-wide configuration, parsed on first use. */
const tj_config_t *tj_config_read(void);
/* The settings once read (one load after the first call). */
extern tj_config_t tj_config_settings;
extern atomic_bool tj_config_ready;
static inline const tj_config_t *tj_config(void)
{
    return atomic_load_explicit(&tj_config_ready, memory_order_acquire) ? &tj_config_settings
                                                                        : tj_config_read();
}

/* Replace the process-wide configuration (tools apply their command-line flags this way). */
void tj_config_set(const tj_config_t *cfg);

/* Print the warnings about malformed TYPEJIT_* values that parsing collected (parsing itself
 * prints nothing: the library is loaded into every process of a job, launchers and shell
 * commands included). Rank 0 or a negative rank (tools, singletons) prints them as warnings,
 * other ranks at debug level; each warning is flushed once. The MPI_Init wrappers call this
 * after the rank is known. */
void tj_config_flush_warnings(int rank);

/* True for a compile target written sm_XX or compute_XX: two or three digits (the compute
 * capability, not starting with 0) and an optional "a" or "f" feature suffix. */
bool tj_config_arch_valid(const char *arch);

/* Parse all of @p text as a decimal integer in [min, max]: no blanks, no trailing characters,
 * no overflow. False (and *out untouched) otherwise. */
bool tj_config_parse_long(const char *text, long min, long max, long *out);

/* Parse all of @p text as a size in bytes: a whole decimal number, optionally followed by K, M,
 * G or T (either case; powers of 1024), e.g. 500M or 2G. False (and *out untouched) for
 * anything else, or a size of 2^62 bytes or more. */
bool tj_config_parse_size(const char *text, long long *out);

#endif /* TJ_UTIL_CONFIG_H */
