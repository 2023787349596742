/* SPDX-License-Identifier: BSD-3-Clause */
/* The staging pool. Buffers are sized in powers of two so that calls of similar sizes reuse
 * them; at most TJ_STAGE_IDLE idle buffers are kept, none larger than TJ_STAGE_KEEP_MAX, so the
 * pool stays bounded however large one call was. The lock covers the idle list only: no
 * allocation, copy or kernel runs under it. */
#include "move/staging.h"

#include <pthread.h>
#include <stdlib.h>

#include "move/state.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_move_state.staging) *const staging_state = &tj_move_state.staging;

#define TJ_STAGE_IDLE     8
#define TJ_STAGE_MIN      ((size_t)64 << 10)
#define TJ_STAGE_KEEP_MAX ((size_t)256 << 20)

/* Each thread keeps the last few buffers it gave back, for its next calls: a steady call takes
 * its staging without a lock. The caches are listed (under pool_lock, once per thread) so that
 * tj_staging_finalize frees them all; a thread that ends gives its buffers to the pool. */
#define CACHE_SLOTS 4
typedef struct tj_staging_cache {
    tj_stage_t *slot[CACHE_SLOTS];
    struct tj_staging_cache *next, **prev;
} cache_t;

static void give_to_pool(tj_stage_t *buf);

static void cache_drop(void *arg)
{
    cache_t *c = arg;

    pthread_mutex_lock(&staging_state->pool_lock);
    if (c->prev != NULL) {
        *c->prev = c->next;
        if (c->next != NULL)
            c->next->prev = c->prev;
    }
    pthread_mutex_unlock(&staging_state->pool_lock);
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (c->slot[i] != NULL)
            give_to_pool(c->slot[i]);
    free(c);
}

static void cache_key_init(void)
{
    pthread_key_create(&staging_state->cache_key, cache_drop);
}

/* This thread's cache, made on first use; NULL when out of memory. */
static cache_t *cache_here(void)
{
    cache_t *c = tj_move_thread.staging.mine;

    if (c != NULL)
        return c;
    pthread_once(&staging_state->cache_once, cache_key_init);
    if ((c = calloc(1, sizeof(*c))) == NULL)
        return NULL;
    pthread_mutex_lock(&staging_state->pool_lock);
    c->next = staging_state->caches;
    if (staging_state->caches != NULL)
        staging_state->caches->prev = &c->next;
    c->prev = &staging_state->caches;
    staging_state->caches = c;
    pthread_mutex_unlock(&staging_state->pool_lock);
    pthread_setspecific(staging_state->cache_key, c);
    tj_move_thread.staging.mine = c;
    return c;
}

static void release(tj_stage_t *b)
{
    tj_gpu_scope_t scope;
    if (b->kind == TJ_STAGE_PAGEABLE)
        free(b->host);
    /* A buffer of a dead, destroyed or reset context went with it. */
    else if (tj_gpu_enter_to_release(b->ctx, &scope) == TJ_OK) {
        if (tj_gpu_generation() != b->gen)
            ; /* freed by the reset */
        else if (b->kind == TJ_STAGE_DEVICE)
            tj_gpu_free(b->dev);
        else
            tj_gpu_free_host(b->host);
        tj_gpu_leave(&scope);
    }
    free(b);
}

/* Host staging where page-locked mapped memory could not be had (the failed driver call said
 * why, at debug level): pageable memory of exactly @p len bytes, which copies reach
 * synchronously and kernels not at all. Never pooled, so that each call tries page-locked
 * memory again. */
static tj_status_t pageable(tj_stage_t *b, size_t len)
{
    b->kind = TJ_STAGE_PAGEABLE;
    b->ctx = NULL;
    b->gen = 0;
    b->len = len ? len : 1;
    b->dev = 0;
    if ((b->host = malloc(b->len)) == NULL) {
        tj_log_error("out of memory: %zu bytes of host staging", b->len);
        return TJ_ERR_NOMEM;
    }
    tj_stats_inc(TJ_STAT_staging_pageable);
    tj_log_info_once("page-locked host memory for staging could not be allocated; staging through "
                     "pageable host memory with synchronous copies instead (slower)");
    return TJ_OK;
}

/* A pooled or new buffer of @p kind, device or page-locked memory only. */
static tj_status_t take(tj_stage_kind_t kind, size_t len, tj_stage_t **buf)
{
    unsigned gen;
    tj_gpu_ctx_t ctx = tj_gpu_current_instance(&gen);
    tj_stage_t **at, **best = NULL, *b, *stale = NULL;
    size_t want = TJ_STAGE_MIN;
    tj_status_t st;

    if (ctx == NULL)
        return TJ_ERR_INVALID;
    if (tj_move_thread.staging.mine != NULL)
        for (int i = 0; i < CACHE_SLOTS; i++) {
            b = tj_move_thread.staging.mine->slot[i];
            if (b != NULL && b->kind == kind && b->ctx == ctx && b->gen == gen && b->len >= len) {
                tj_move_thread.staging.mine->slot[i] = NULL;
                *buf = b;
                return TJ_OK;
            }
        }
    pthread_mutex_lock(&staging_state->pool_lock);
    for (at = &staging_state->idle; *at != NULL;) {
        if ((*at)->ctx == ctx && (*at)->gen != gen) {
            /* Left from an earlier instance of this context: gone with it. */
            b = *at;
            *at = b->next;
            staging_state->nidle--;
            b->next = stale;
            stale = b;
            continue;
        }
        if ((*at)->kind == kind && (*at)->ctx == ctx && (*at)->len >= len &&
            (best == NULL || (*at)->len < (*best)->len))
            best = at;
        at = &(*at)->next;
    }
    while (stale != NULL) {
        b = stale;
        stale = b->next;
        free(b);
    }
    if (best != NULL) {
        b = *best;
        *best = b->next;
        staging_state->nidle--;
        pthread_mutex_unlock(&staging_state->pool_lock);
        b->next = NULL;
        *buf = b;
        return TJ_OK;
    }
    pthread_mutex_unlock(&staging_state->pool_lock);

    while (want < len && want < ((size_t)1 << 62))
        want *= 2;
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return TJ_ERR_NOMEM;
    b->kind = kind;
    b->ctx = ctx;
    b->gen = gen;
    b->len = want;
    if (kind == TJ_STAGE_DEVICE)
        st = tj_gpu_alloc(want, &b->dev);
    else if ((st = tj_gpu_alloc_host(want, &b->host)) == TJ_OK &&
             (st = tj_gpu_host_devptr(b->host, &b->dev)) != TJ_OK)
        tj_gpu_free_host(b->host);
    if (st != TJ_OK) {
        free(b);
        return st;
    }
    *buf = b;
    return TJ_OK;
}

tj_status_t tj_staging_get(tj_stage_kind_t kind, size_t len, tj_stage_t **buf)
{
    tj_stage_t *b;
    tj_status_t st;

    /* take refuses to work without a current context, as this does. */
    if ((st = take(kind, len, buf)) == TJ_OK || kind != TJ_STAGE_PINNED || st == TJ_ERR_INVALID)
        return st;
    if ((b = calloc(1, sizeof(*b))) == NULL)
        return TJ_ERR_NOMEM;
    if ((st = pageable(b, len)) != TJ_OK) {
        free(b);
        return st;
    }
    *buf = b;
    return TJ_OK;
}

tj_status_t tj_staging_get_reachable(size_t len, tj_stage_t **buf)
{
    tj_status_t st = take(TJ_STAGE_DEVICE, len, buf);

    if (st == TJ_OK || take(TJ_STAGE_PINNED, len, buf) != TJ_OK)
        return st;
    tj_stats_inc(TJ_STAT_staging_mapped);
    tj_log_info_once("device memory for staging could not be allocated; kernels pack into "
                     "page-locked host memory instead");
    return TJ_OK;
}

tj_status_t tj_staging_host(size_t len, tj_stage_t **buf)
{
    tj_stage_t *b = calloc(1, sizeof(*b));

    if (b == NULL || (b->host = calloc(1, len ? len : 1)) == NULL) {
        free(b);
        tj_log_error("out of memory: %zu bytes of host staging", len);
        return TJ_ERR_NOMEM;
    }
    b->kind = TJ_STAGE_PAGEABLE;
    b->len = len ? len : 1;
    *buf = b;
    return TJ_OK;
}

tj_gpu_ptr_t tj_staging_where(const tj_stage_t *buf, int device)
{
    switch (buf->kind) {
    case TJ_STAGE_DEVICE:
        return (tj_gpu_ptr_t){TJ_MEM_DEVICE, device, buf->ctx, (uintptr_t)buf->dev, buf->len, 0, 0};
    case TJ_STAGE_PINNED:
        return (tj_gpu_ptr_t){TJ_MEM_PINNED, device, buf->ctx, (uintptr_t)buf->host,
                              buf->len,      0,      buf->dev};
    case TJ_STAGE_PAGEABLE:
        break;
    }
    return (tj_gpu_ptr_t){TJ_MEM_HOST, -1, NULL, 0, 0, 0, 0};
}

void tj_staging_put(tj_stage_t *buf)
{
    cache_t *c;

    if (buf == NULL)
        return;
    if (buf->kind != TJ_STAGE_PAGEABLE && buf->len <= TJ_STAGE_KEEP_MAX &&
        (c = cache_here()) != NULL)
        for (int i = 0; i < CACHE_SLOTS; i++)
            if (c->slot[i] == NULL) {
                c->slot[i] = buf;
                return;
            }
    give_to_pool(buf);
}

/* Into the pool of idle buffers, or freed when it holds enough. */
static void give_to_pool(tj_stage_t *buf)
{
    pthread_mutex_lock(&staging_state->pool_lock);
    if (buf->kind != TJ_STAGE_PAGEABLE && staging_state->nidle < TJ_STAGE_IDLE &&
        buf->len <= TJ_STAGE_KEEP_MAX) {
        buf->next = staging_state->idle;
        staging_state->idle = buf;
        staging_state->nidle++;
        buf = NULL;
    }
    pthread_mutex_unlock(&staging_state->pool_lock);
    if (buf != NULL)
        release(buf);
}

void tj_staging_finalize(void)
{
    tj_stage_t *list;

    pthread_mutex_lock(&staging_state->pool_lock);
    /* No other thread is inside MPI at MPI_Finalize: every cache is still. */
    for (cache_t *c = staging_state->caches; c != NULL; c = c->next)
        for (int i = 0; i < CACHE_SLOTS; i++)
            if (c->slot[i] != NULL) {
                c->slot[i]->next = staging_state->idle;
                staging_state->idle = c->slot[i];
                c->slot[i] = NULL;
            }
    list = staging_state->idle;
    staging_state->idle = NULL;
    staging_state->nidle = 0;
    pthread_mutex_unlock(&staging_state->pool_lock);
    while (list != NULL) {
        tj_stage_t *next = list->next;
        release(list);
        list = next;
    }
}
