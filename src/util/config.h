/* Every TYPEJIT_* setting, parsed once from the environment into one struct. */
#ifndef TJ_UTIL_CONFIG_H
#define TJ_UTIL_CONFIG_H

#include <limits.h>
#include <stdbool.h>

#include "util/log.h"

typedef enum { TJ_HOST_SYSTEM, TJ_HOST_ENGINE } tj_host_mode_t;
typedef enum { TJ_JIT_OFF, TJ_JIT_AUTO, TJ_JIT_ALWAYS } tj_jit_mode_t;
typedef enum { TJ_CACHE_RW, TJ_CACHE_RO, TJ_CACHE_OFF } tj_cache_mode_t;

typedef struct {
    bool disable;             /* TYPEJIT_DISABLE: pass every call straight to the system MPI */
    tj_log_level_t log_level; /* TYPEJIT_LOG */
    bool stats;               /* TYPEJIT_STATS: counters printed at MPI_Finalize */
    tj_host_mode_t host;      /* TYPEJIT_HOST: who packs host buffers */
    tj_jit_mode_t jit;        /* TYPEJIT_JIT */
    char arch[32];            /* TYPEJIT_ARCH: "sm_90", "compute_90"; empty means the device's */
    tj_cache_mode_t cache;    /* TYPEJIT_CACHE */
    char cache_dir[PATH_MAX]; /* TYPEJIT_CACHE_DIR, or the XDG default; empty if none is known */
    bool save_source;         /* TYPEJIT_CACHE_SAVE_SOURCE: keep the .cu beside each entry */
} tj_config_t;

/* Parse the environment into @p cfg; malformed values get a warning and the default. */
void tj_config_parse(tj_config_t *cfg);

/* The process-wide configuration, parsed on first use. */
const tj_config_t *tj_config(void);

/* Replace the process-wide configuration (tools apply their command-line flags this way). */
void tj_config_set(const tj_config_t *cfg);

#endif /* TJ_UTIL_CONFIG_H */
