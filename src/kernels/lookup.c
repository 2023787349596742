/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel lookup. The memory table answers repeated requests without touching the disk;
 * the disk store answers requests from earlier runs and other ranks; NVRTC compiles the rest, and
 * every compiled image is stored for them. A process uses the bytes it compiled itself and never
 * re-reads them. Every kind of kernel takes this one path. */
#include "kernels/lookup.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/entry.h"
#include "cache/lock.h"
#include "cache/manifest.h"
#include "cache/memo.h"
#include "cache/set.h"
#include "cache/store.h"
#include "cache/trim.h"
#include "jit/nvrtc.h"
#include "kernels/key.h"
#include "kernels/kind.h"
#include "kernels/state.h"
#include "kernels/target.h"
#include "util/clock.h"
#include "util/config.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_kernels_state.lookup) *const lookup_state = &tj_kernels_state.lookup;

/* Waits for another process's compile of a kernel are cut into slices of this many ms, so that
 * a wait notices tj_lookup_give_up_waits soon. */
#define WAIT_SLICE_MS 250

/* The disk caches a request reads and writes. tj_lookup_set_store and tj_lookup_finalize swap
 * them as a whole under setup_lock; a request uses them through a reference taken under it
 * (setup), so that a swap never closes a store that a request, a compile or a wait for another
 * process's compile is still using: the last reference closes it. */
typedef struct tj_lookup_disk {
    atomic_int refs;
    tj_store_t *store;      /* the user's cache, or NULL (none, untrusted, unwritable) */
    tj_store_set_t *caches; /* the store, then the read-only caches of TYPEJIT_CACHE_PATH */
    bool rw;                /* entries and manifest lines may be written */
} disk_t;

static void disk_release(disk_t *d)
{
    if (d == NULL || atomic_fetch_sub(&d->refs, 1) != 1)
        return;
    tj_store_set_close(d->caches);
    if (d->store != NULL)
        tj_store_close(d->store);
    free(d);
}

/* The disk caches as the settings (or the override) name them; a store that cannot be opened
 * leaves the process with the memory table alone. NULL when out of memory. */
static disk_t *disk_open(void)
{
    const tj_config_t *cfg = tj_config();
    const char *dir =
        lookup_state->store_dir_override[0] ? lookup_state->store_dir_override : cfg->cache_dir;
    bool ro = lookup_state->store_ro_override >= 0 ? lookup_state->store_ro_override
                                                   : cfg->cache == TJ_CACHE_RO;
    disk_t *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return NULL;
    atomic_init(&d->refs, 1);
    if ((lookup_state->store_dir_override[0] || cfg->cache != TJ_CACHE_OFF) && dir[0] != '\0' &&
        tj_store_open(dir, ro ? TJ_STORE_RO : TJ_STORE_RW, &d->store) != TJ_OK)
        d->store = NULL;
    d->rw = d->store != NULL && !ro;
    /* The shared caches serve the application, not the tools' own cache directory. */
    if (tj_store_set_open(d->store, lookup_state->store_dir_override[0] ? NULL : cfg->cache_path,
                          &d->caches) != TJ_OK)
        d->caches = NULL;
    return d;
}

void tj_lookup_set_store(const char *dir, int read_only)
{
    disk_t *old;

    pthread_mutex_lock(&lookup_state->setup_lock);
    snprintf(lookup_state->store_dir_override, sizeof(lookup_state->store_dir_override), "%s",
             dir ? dir : "");
    lookup_state->store_ro_override = read_only;
    old = lookup_state->disk;
    lookup_state->disk = NULL;
    pthread_mutex_unlock(&lookup_state->setup_lock);
    disk_release(old);
    tj_target_forget();
}

/* The memory table and the disk caches, set up on first use: a reference to the disk caches in
 * *@p d (disk_release). */
static tj_status_t setup(disk_t **d)
{
    tj_status_t st = TJ_OK;

    pthread_mutex_lock(&lookup_state->setup_lock);
    if (lookup_state->memo == NULL && (st = tj_memo_create(&lookup_state->memo)) != TJ_OK)
        goto out_unlock;
    atomic_store_explicit(&lookup_state->memo_ready, true, memory_order_release);
    if (lookup_state->disk == NULL && (lookup_state->disk = disk_open()) == NULL) {
        st = TJ_ERR_NOMEM;
        goto out_unlock;
    }
    atomic_fetch_add(&lookup_state->disk->refs, 1);
    *d = lookup_state->disk;
out_unlock:
    pthread_mutex_unlock(&lookup_state->setup_lock);
    return st;
}

static void kernel_free(void *value)
{
    tj_kernel_free(value);
}

/* What a kernel is, for debug lines: "pack sm_90 W=16 start=0 extent=... counts=... strides=..."
 * (the layout its kernel is made for, as the commit lines name it), "fused unpack sm_90 W=8 of 3
 * blocks", "generic pack sm_90 W=8" (its kind's words: kernels/kind.h). Formatted only when a
 * line at info level or above may show it (the path it is used on reads the disk at least). */
static void describe(const tj_kernel_spec_t *spec, char *buf, size_t len)
{
    buf[0] = '\0';
    if (tj_log_level() < TJ_LOG_INFO)
        return;
    tj_kind_of(spec->kind)->describe(spec, buf, len);
}

/* Compile @p source into @p k and store the image. */
static tj_status_t compile(disk_t *d, const tj_kernel_spec_t *spec, const char *source,
                           const char *key, const char *toolchain, tj_kernel_t *k)
{
    double t0 = tj_clock_seconds();
    char what[1200];
    tj_status_t st;

    st = tj_nvrtc_compile(source, tj_kernel_name(spec), spec->target, &k->image, &k->len);
    if (st != TJ_OK) {
        tj_stats_inc(TJ_STAT_jit_failures);
        return st;
    }
    tj_stats_inc(TJ_STAT_jit_compiles);
    describe(spec, what, sizeof(what));
    tj_log_debug("kernel %s: compiled in %.1f ms (%zu bytes)", what,
                 (tj_clock_seconds() - t0) * 1e3, k->len);
    if (d->rw) {
        tj_store_save(d->store, toolchain, spec->target, key, k->image, k->len,
                      tj_config()->save_source ? source : NULL);
        tj_store_trim_if_needed(d->store); /* TYPEJIT_CACHE_MAX_SIZE, once per process */
    }
    return TJ_OK;
}

void tj_lookup_give_up_waits(long long at_ms)
{
    atomic_store(&lookup_state->give_up_at, at_ms);
}

/* Wait for the entry of @p key that another process is compiling, as tj_store_wait does, in
 * slices: TJ_OK (loaded into @p k), TJ_ERR_NOT_FOUND (the holder gave up or died), TJ_ERR_BUSY
 * after TJ_STORE_WAIT_DEFAULT_MS (compile without the lock), or TJ_ERR_BUSY with @p gave_up set
 * when tj_lookup_give_up_waits said to stop first. */
static tj_status_t wait_entry(disk_t *d, const char *key, const char *toolchain, const char *target,
                              tj_kernel_t *k, bool *gave_up)
{
    long long until = tj_clock_ms() + TJ_STORE_WAIT_DEFAULT_MS;
    tj_status_t st;

    for (;;) {
        long long now = tj_clock_ms(), stop = atomic_load(&lookup_state->give_up_at);
        long long slice = until - now < WAIT_SLICE_MS ? until - now : WAIT_SLICE_MS;
        if (now >= stop) {
            *gave_up = true;
            return TJ_ERR_BUSY;
        }
        if (stop - now < slice)
            slice = stop - now;
        if (slice <= 0)
            return TJ_ERR_BUSY;
        st = tj_store_wait(d->store, toolchain, target, key, (long)slice, &k->image, &k->len);
        if (st != TJ_ERR_BUSY)
            return st;
    }
}

/* Before compiling a kernel the disk cache lacks: take its lock in the cache, so that of all
 * the processes sharing the cache one compiles and the others wait for its entry (bounded:
 * after TJ_STORE_WAIT_DEFAULT_MS the waiter compiles too, and a holder that died is detected
 * and its lock broken). TJ_OK: the entry arrived and is loaded into @p k. TJ_ERR_BUSY: the wait
 * was given up (tj_lookup_give_up_waits): nothing is to be compiled. Otherwise the caller
 * compiles, holding *lock when one was taken (NULL otherwise; locks decide who compiles, they
 * are never needed for a correct entry). */
static tj_status_t locked_load(disk_t *d, const char *key, const char *toolchain,
                               const char *target, tj_kernel_t *k, tj_store_lock_t **lock)
{
    bool gave_up = false;
    tj_status_t st = TJ_ERR_UNSUPPORTED;

    *lock = NULL;
    for (int attempt = 0; d->rw && attempt < 3; attempt++) {
        st = tj_store_lock(d->store, toolchain, target, key, lock);
        if (st == TJ_ERR_BUSY) {
            st = wait_entry(d, key, toolchain, target, k, &gave_up);
            if (st == TJ_OK)
                return TJ_OK;
            if (gave_up)
                return TJ_ERR_BUSY;
            if (st == TJ_ERR_NOT_FOUND)
                continue; /* the holder gave up or died: try to take the lock */
            break;        /* timed out: compile without the lock */
        }
        /* Holding the lock: another process may have stored the entry just before. */
        if (st == TJ_OK &&
            tj_store_load(d->store, toolchain, target, key, &k->image, &k->len) == TJ_OK) {
            tj_store_unlock(*lock);
            *lock = NULL;
            return TJ_OK;
        }
        break;
    }
    return TJ_ERR_NOT_FOUND;
}

/* A kernel this process has in its memory table: TJ_OK or the failure remembered, with the
 * kernel in *kernel; TJ_ERR_NOT_FOUND when the table has none. @p count: a use of the kernel
 * (a hit for the counters), not a question whether the process has it. */
static tj_status_t from_memory(tj_hash_t hash, bool count, tj_kernel_t **kernel)
{
    tj_kernel_t *k;

    if (!atomic_load_explicit(&lookup_state->memo_ready, memory_order_acquire) ||
        (k = tj_memo_get(lookup_state->memo, hash)) == NULL)
        return TJ_ERR_NOT_FOUND;
    if (k->failed == TJ_OK && count)
        tj_stats_inc(TJ_STAT_cache_hits_memory);
    *kernel = k;
    return k->failed;
}

/* The kernel from the disk caches, else (when @p mode allows) compiled; TJ_ERR_NOT_FOUND when it
 * would need a compile that is not allowed. A compile that fails is kept in *kernel as a
 * failure (TJ_OK returned), so that the next request answers at once. */
static tj_status_t from_disk_or_compile(disk_t *d, const tj_kernel_spec_t *spec,
                                        tj_lookup_mode_t mode, tj_kernel_t **kernel,
                                        tj_origin_t *from)
{
    char toolchain[64], what[1200], line[TJ_STORE_LINE_MAX + 1];
    char *source = NULL, *key = NULL;
    tj_store_lock_t *lock = NULL;
    tj_kernel_t *k = NULL;
    tj_status_t st, loaded = TJ_ERR_NOT_FOUND;

    if ((st = tj_kernel_source(spec, &source)) != TJ_OK)
        return st;
    if ((key = tj_key_text(spec, source)) == NULL) {
        st = TJ_ERR_NOMEM;
        goto out_free;
    }
    if ((st = tj_kernel_new(spec, &k)) != TJ_OK)
        goto out_free;
    describe(spec, what, sizeof(what));
    tj_key_toolchain(toolchain, sizeof(toolchain));
    if (d->caches != NULL && (loaded = tj_store_set_load(d->caches, toolchain, spec->target, key,
                                                         &k->image, &k->len)) == TJ_OK) {
        tj_stats_inc(TJ_STAT_cache_hits_disk);
        tj_log_debug("kernel %s: from the disk cache", what);
        *from = TJ_FROM_DISK;
    } else if (mode != TJ_LOOKUP_COMPILE) {
        st = TJ_ERR_NOT_FOUND;
        goto out_free;
    } else {
        tj_stats_inc(TJ_STAT_cache_misses);
        tj_log_debug("kernel %s: not cached%s", what,
                     loaded == TJ_ERR_CORRUPT ? " (an invalid entry is replaced)" : "");
        *from = TJ_FROM_COMPILE;
        if ((st = locked_load(d, key, toolchain, spec->target, k, &lock)) == TJ_OK) {
            *from = TJ_FROM_DISK; /* another process compiled it meanwhile */
        } else if (st == TJ_ERR_BUSY) {
            tj_log_info("kernel %s: not compiled: the process is ending while another one "
                        "holds its compile lock",
                        what);
            goto out_free;
        } else if ((st = compile(d, spec, source, key, toolchain, k)) != TJ_OK) {
            tj_store_unlock(lock);
            if (st != TJ_ERR_JIT)
                goto out_free;
            /* Kept in the table as a failure: the next request answers at once. */
            k->failed = st;
            st = TJ_OK;
        } else {
            tj_store_unlock(lock);
        }
    }
    if (k->failed == TJ_OK && d->rw) {
        int n = tj_key_manifest_line(spec, line, sizeof(line));
        if (n > 0 && (size_t)n < sizeof(line))
            tj_store_manifest_add(d->store, line);
    }
    *kernel = k;
    k = NULL;
out_free:
    tj_kernel_free(k);
    free(key);
    free(source);
    return st;
}

tj_status_t tj_lookup_kernel(const tj_kernel_spec_t *spec, tj_lookup_mode_t mode,
                             tj_kernel_t **kernel, tj_origin_t *origin)
{
    tj_kernel_t *k = NULL, *won;
    tj_origin_t from = TJ_FROM_MEMORY;
    disk_t *d = NULL;
    tj_hash_t hash;
    tj_status_t st;

    if ((st = tj_kernel_check(spec)) != TJ_OK)
        return st;
    hash = tj_kind_of(spec->kind)->memo(spec);
    if ((st = from_memory(hash, mode != TJ_LOOKUP_MEMORY, &k)) != TJ_ERR_NOT_FOUND ||
        mode == TJ_LOOKUP_MEMORY)
        goto out_found;
    if ((st = tj_nvrtc_load()) != TJ_OK || (st = setup(&d)) != TJ_OK)
        return st;
    st = from_disk_or_compile(d, spec, mode, &k, &from);
    disk_release(d);
    if (st != TJ_OK)
        return st;
    /* Two threads may build the same kernel at once; the first one in the table wins. */
    won = tj_memo_put(lookup_state->memo, hash, k);
    if (won != k)
        tj_kernel_free(k);
    if (won == NULL)
        return TJ_ERR_NOMEM;
    k = won;
    st = k->failed;
out_found:
    if (st != TJ_OK)
        return st;
    *kernel = k;
    if (origin != NULL)
        *origin = from;
    return TJ_OK;
}

void tj_lookup_finalize(void)
{
    tj_memo_t *old_memo;
    disk_t *old_disk;

    /* The kernels (and their modules, unloaded in their contexts) go after the lock: a driver
     * call is never made under it. Every request has ended (the background compiler first). */
    pthread_mutex_lock(&lookup_state->setup_lock);
    atomic_store_explicit(&lookup_state->memo_ready, false, memory_order_release);
    old_memo = lookup_state->memo;
    lookup_state->memo = NULL;
    old_disk = lookup_state->disk;
    lookup_state->disk = NULL;
    pthread_mutex_unlock(&lookup_state->setup_lock);
    if (old_memo != NULL)
        tj_memo_destroy(old_memo, kernel_free);
    disk_release(old_disk);
    tj_target_forget();
}
