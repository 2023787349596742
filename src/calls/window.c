/* SPDX-License-Identifier: BSD-3-Clause */
/* Windows in device memory in the separate memory model (see window.h). Three copies of the
 * window's bytes: the private copy (the application's device memory), the public copy (host
 * memory from MPI_Alloc_mem, which the system MPI's window is made on) and `seen`, what both held
 * when typejit last made them agree. A local store is a byte where the device differs from
 * `seen`, an update by another process one where the public copy does: publishing moves the
 * first kind into the public copy, absorbing the second into the device, and neither touches a
 * byte the other side changed, so that operations still arriving in the public copy (passive
 * target) are never overwritten. Publishing must read the whole device copy (typejit cannot see
 * the application's stores); absorbing compares host copies and moves only the blocks that
 * changed. One lock per window; the list of windows under one lock (windows are few). */
#include "calls/window.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cuda.h"
#include "move/staging.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_calls_state.window) *const window_state = &tj_calls_state.window;

/* Changes are looked for BLOCK bytes at a time; changed blocks closer than GAP bytes are moved
 * to the device by one copy (a copy costs microseconds, as much as tens of KiB of bytes), at
 * most RUNS copies a synchronisation (the blocks after the last one are covered by it). The
 * host side of the copies is staging of at most CHUNK bytes. */
#define BLOCK 256
#define GAP   (64 * 1024)
#define RUNS  64
#define CHUNK ((size_t)64 << 20)

struct tj_window {
    MPI_Win win;
    char *dev; /* the private copy */
    size_t size;
    tj_gpu_ptr_t at; /* its allocation */
    char *pub;       /* the public copy */
    char *seen;      /* what both copies held at the last synchronisation */
    int rank;        /* this process in the window's group */
    bool noput;      /* the last fence or post asserted MPI_MODE_NOPUT: no update until the next */
    pthread_mutex_t lock;
    struct tj_window *next;
};

static tj_devptr_t dev_at(const tj_window_t *w, size_t off)
{
    return (tj_devptr_t)(uintptr_t)(w->dev + off);
}

/* ---- moving bytes ---------------------------------------------------------------------------- */

/* The bytes of @p now that differ from @p seen (local stores) into the public copy and `seen`.
 * Byte by byte where they differ, so that bytes of the public copy another process is updating
 * beside them are left alone. */
static void take_stores(char *pub, char *seen, const char *now, size_t len)
{
    for (size_t at = 0; at < len; at += BLOCK) {
        size_t n = len - at < BLOCK ? len - at : BLOCK;
        if (memcmp(now + at, seen + at, n) == 0)
            continue;
        for (size_t k = at; k < at + n; k++)
            if (now[k] != seen[k]) {
                pub[k] = now[k];
                seen[k] = now[k];
            }
    }
}

/* One range of the device copy, read into @p dev: the updates of the public copy (bytes that
 * differ from `seen`) replace its bytes, and its own stores (bytes of @p dev that differ from
 * `seen` where the public copy does not) go to the public copy, as a publish would; `seen`
 * follows. @p dev is then what the device must hold. */
static void merge(char *dev, char *pub, char *seen, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        char p = pub[k]; /* once: another process may be writing it */
        if (p != seen[k])
            dev[k] = seen[k] = p;
        else if (dev[k] != seen[k])
            pub[k] = seen[k] = dev[k];
    }
}

/* Host staging of up to CHUNK bytes in the window's context (entered), for the copies. */
static int get_stage(const tj_window_t *w, tj_stage_t **stage)
{
    size_t len = w->size < CHUNK ? w->size : CHUNK;
    if (tj_staging_get(TJ_STAGE_PINNED, len, stage) != TJ_OK) {
        tj_log_error("out of memory staging %zu bytes of a window in device memory", len);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

static int dtoh(const tj_window_t *w, void *host, size_t off, size_t len)
{
    if (tj_gpu_copy_dtoh(host, dev_at(w, off), len) != TJ_OK)
        return MPI_ERR_INTERN; /* the driver call said why */
    tj_stats_add(TJ_STAT_window_dtoh_bytes, len);
    return MPI_SUCCESS;
}

static int htod(const tj_window_t *w, size_t off, const void *host, size_t len)
{
    if (tj_gpu_copy_htod(dev_at(w, off), host, len) != TJ_OK)
        return MPI_ERR_INTERN;
    tj_stats_add(TJ_STAT_window_htod_bytes, len);
    return MPI_SUCCESS;
}

/* Local stores into the public copy: the whole device copy is read. In the window's context. */
static int publish(tj_window_t *w)
{
    tj_stage_t *stage;
    int rc;

    if ((rc = get_stage(w, &stage)) != MPI_SUCCESS)
        return rc;
    for (size_t off = 0; off < w->size && rc == MPI_SUCCESS; off += stage->len) {
        size_t len = w->size - off < stage->len ? w->size - off : stage->len;
        if ((rc = dtoh(w, stage->host, off, len)) == MPI_SUCCESS)
            take_stores(w->pub + off, w->seen + off, stage->host, len);
    }
    tj_staging_put(stage);
    return rc;
}

typedef struct {
    size_t lo, hi;
} run_t;

/* The ranges of blocks where the public copy differs from `seen`; returns how many. */
static int changed_runs(const tj_window_t *w, run_t runs[RUNS])
{
    int n = 0;

    for (size_t at = 0; at < w->size; at += BLOCK) {
        size_t len = w->size - at < BLOCK ? w->size - at : BLOCK;
        if (memcmp(w->pub + at, w->seen + at, len) == 0)
            continue;
        if (n > 0 && (at - runs[n - 1].hi <= GAP || n == RUNS))
            runs[n - 1].hi = at + len;
        else
            runs[n++] = (run_t){at, at + len};
    }
    return n;
}

/* Updates of the public copy into the device. With @p dev_is_seen the device is known to hold
 * `seen` outside the public copy's updates (just published, or MPI_MODE_NOSTORE): the ranges are
 * only written; otherwise they are read first, so that a store the application made there since
 * the last synchronisation is kept (and published). In the window's context. */
static int absorb(tj_window_t *w, bool dev_is_seen)
{
    run_t runs[RUNS];
    tj_stage_t *stage;
    int n = changed_runs(w, runs), rc;

    if (n == 0)
        return MPI_SUCCESS;
    if ((rc = get_stage(w, &stage)) != MPI_SUCCESS)
        return rc;
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        for (size_t off = runs[r].lo; off < runs[r].hi && rc == MPI_SUCCESS; off += stage->len) {
            size_t len = runs[r].hi - off < stage->len ? runs[r].hi - off : stage->len;
            char *t = stage->host;
            if (dev_is_seen)
                memcpy(t, w->seen + off, len);
            else if ((rc = dtoh(w, t, off, len)) != MPI_SUCCESS)
                break;
            merge(t, w->pub + off, w->seen + off, len);
            rc = htod(w, off, t, len);
        }
    tj_staging_put(stage);
    return rc;
}

/* ---- windows --------------------------------------------------------------------------------- */

static void release(tj_window_t *w)
{
    if (w->pub != NULL)
        PMPI_Free_mem(w->pub);
    free(w->seen);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

int tj_window_make(const char *fn, void *base, MPI_Aint size, int rank, tj_window_t **out)
{
    tj_gpu_scope_t scope;
    tj_window_t *w;
    tj_gpu_ptr_t at;
    int rc;

    *out = NULL;
    if (tj_gpu_query(base, &at) != TJ_OK)
        return MPI_ERR_INTERN; /* the query said why */
    if (at.kind != TJ_MEM_DEVICE && at.kind != TJ_MEM_MANAGED)
        return MPI_SUCCESS;
    if (!tj_gpu_inside(&at, (uintptr_t)base, (uintptr_t)base + (uintptr_t)size)) {
        tj_log_error("%s: the window's %lld bytes at %p reach outside their device allocation; "
                     "MPI_ERR_BUFFER",
                     fn, (long long)size, base);
        return MPI_ERR_BUFFER;
    }
    if ((w = calloc(1, sizeof(*w))) == NULL || (w->seen = malloc((size_t)size)) == NULL ||
        PMPI_Alloc_mem(size, MPI_INFO_NULL, &w->pub) != MPI_SUCCESS) {
        tj_log_error("%s: out of memory making a host copy of a %lld-byte window in device memory",
                     fn, (long long)size);
        if (w != NULL) {
            w->pub = NULL;
            free(w->seen);
            free(w);
        }
        return MPI_ERR_NO_MEM;
    }
    pthread_mutex_init(&w->lock, NULL);
    w->dev = base;
    w->size = (size_t)size;
    w->at = at;
    w->rank = rank;
    w->win = MPI_WIN_NULL;
    if (tj_gpu_enter(at.ctx, &scope) != TJ_OK) {
        rc = MPI_ERR_INTERN;
    } else {
        rc = dtoh(w, w->pub, 0, w->size);
        tj_gpu_leave(&scope);
    }
    if (rc != MPI_SUCCESS) {
        release(w);
        return rc;
    }
    memcpy(w->seen, w->pub, w->size);
    *out = w;
    return MPI_SUCCESS;
}

void *tj_window_public(const tj_window_t *w)
{
    return w->pub;
}

void tj_window_created(tj_window_t *w, MPI_Win win)
{
    w->win = win;
    pthread_mutex_lock(&window_state->table_lock);
    w->next = window_state->table;
    window_state->table = w;
    atomic_fetch_add(&window_state->count, 1);
    pthread_mutex_unlock(&window_state->table_lock);
    tj_stats_inc(TJ_STAT_windows_separate);
}

void tj_window_discard(tj_window_t *w)
{
    release(w);
}

/* The window of @p win with its lock held, or NULL. */
static tj_window_t *find(MPI_Win win)
{
    tj_window_t *w;

    pthread_mutex_lock(&window_state->table_lock);
    for (w = window_state->table; w != NULL && w->win != win; w = w->next)
        ;
    if (w != NULL)
        pthread_mutex_lock(&w->lock);
    pthread_mutex_unlock(&window_state->table_lock);
    return w;
}

/* Publish and then absorb, as asked, in the window's context (with the window's lock). */
static int both(tj_window_t *w, bool do_publish, bool do_absorb, bool dev_is_seen)
{
    tj_gpu_scope_t scope;
    int rc = MPI_SUCCESS;

    if (!do_publish && !do_absorb)
        return MPI_SUCCESS;
    if (tj_gpu_enter(w->at.ctx, &scope) != TJ_OK)
        return MPI_ERR_INTERN;
    if (do_publish)
        rc = publish(w);
    if (rc == MPI_SUCCESS && do_absorb)
        rc = absorb(w, dev_is_seen || do_publish);
    tj_gpu_leave(&scope);
    return rc;
}

/* What each synchronisation makes visible, from the rules of the separate memory model (MPI 4.1,
 * section 12.7): before the MPI's call, local stores in the public copy (fence and post unless
 * MPI_MODE_NOSTORE, unlock of the own window, unlock_all, Win_sync, which also absorbs); after
 * it, the updates of others in the private copy (fence and wait unless the fence or post that
 * opened the epoch asserted MPI_MODE_NOPUT, lock of the own window, lock_all). */
static int before(tj_window_t *w, tj_window_sync_t sync, int asserts, int rank)
{
    bool store = !(asserts & MPI_MODE_NOSTORE);
    int rc;

    switch (sync) {
    case TJ_WINDOW_FENCE:
        return both(w, store, false, false);
    case TJ_WINDOW_POST:
        rc = both(w, store, false, false);
        w->noput = (asserts & MPI_MODE_NOPUT) != 0;
        return rc;
    case TJ_WINDOW_UNLOCK:
        return both(w, rank == w->rank, false, false);
    case TJ_WINDOW_UNLOCK_ALL:
        return both(w, true, false, false);
    case TJ_WINDOW_SYNC:
        return both(w, true, true, true);
    default:
        return MPI_SUCCESS;
    }
}

static int after(tj_window_t *w, tj_window_sync_t sync, int asserts, int rank)
{
    int rc;

    switch (sync) {
    case TJ_WINDOW_FENCE:
        /* The application is inside the fence: its stores were published before the MPI's
         * call, or MPI_MODE_NOSTORE says there were none. */
        rc = both(w, false, !w->noput, true);
        w->noput = (asserts & MPI_MODE_NOPUT) != 0;
        return rc;
    case TJ_WINDOW_WAIT:
        rc = both(w, false, !w->noput, false);
        w->noput = false;
        return rc;
    case TJ_WINDOW_LOCK:
        return both(w, false, rank == w->rank, false);
    case TJ_WINDOW_LOCK_ALL:
        return both(w, false, true, false);
    default:
        return MPI_SUCCESS;
    }
}

/* @p step on the window of @p win with its lock held; nothing when typejit holds no copy of it. */
static int with_window(MPI_Win win, int (*step)(tj_window_t *, tj_window_sync_t, int, int),
                       tj_window_sync_t sync, int asserts, int rank)
{
    tj_window_t *w = find(win);
    int rc;

    if (w == NULL)
        return MPI_SUCCESS;
    rc = step(w, sync, asserts, rank);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

int tj_window_before(MPI_Win win, tj_window_sync_t sync, int asserts, int rank)
{
    return with_window(win, before, sync, asserts, rank);
}

int tj_window_after(MPI_Win win, tj_window_sync_t sync, int asserts, int rank)
{
    return with_window(win, after, sync, asserts, rank);
}

int tj_window_freed(MPI_Win win)
{
    tj_window_t **at, *w;
    int rc;

    pthread_mutex_lock(&window_state->table_lock);
    for (at = &window_state->table; (w = *at) != NULL && w->win != win; at = &w->next)
        ;
    if (w != NULL) {
        *at = w->next;
        atomic_fetch_sub(&window_state->count, 1);
    }
    pthread_mutex_unlock(&window_state->table_lock);
    if (w == NULL)
        return MPI_SUCCESS;
    /* No process can reach the public copy any more: what others wrote there since the last
     * synchronisation is the window's last state. */
    pthread_mutex_lock(&w->lock);
    rc = both(w, false, true, false);
    pthread_mutex_unlock(&w->lock);
    release(w);
    return rc;
}

void *tj_window_base(MPI_Win win)
{
    tj_window_t *w = find(win);
    void *base = NULL;

    if (w != NULL) {
        base = w->dev;
        pthread_mutex_unlock(&w->lock);
    }
    return base;
}

void tj_window_finalize(void)
{
    tj_window_t *w;

    pthread_mutex_lock(&window_state->table_lock);
    while ((w = window_state->table) != NULL) {
        window_state->table = w->next;
        atomic_fetch_sub(&window_state->count, 1);
        /* The system MPI's window still holds the public copy: it goes with the process. */
        w->pub = NULL;
        release(w);
    }
    pthread_mutex_unlock(&window_state->table_lock);
}
