/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters and their "key=value" text. */
#include "util/stats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "typejit.h"

/* This module's part of the layer's state. */
static __typeof__(tj_util_state.stats) *const stats_state = &tj_util_state.stats;

/* A thread ends: its counts go to `ended`, its block to the free ones. */
static void block_drop(void *arg)
{
    tj_stats_block_t *b = arg, **at;

    pthread_mutex_lock(&stats_state->blocks_lock);
    for (at = &stats_state->in_use; *at != NULL && *at != b; at = &(*at)->next)
        ;
    if (*at == b) {
        *at = b->next;
        for (int i = 0; i < TJ_STAT_COUNT; i++) {
            stats_state->ended[i] += atomic_load_explicit(&b->v[i], memory_order_relaxed);
            atomic_store_explicit(&b->v[i], 0, memory_order_relaxed);
        }
        b->next = stats_state->unused;
        stats_state->unused = b;
    }
    pthread_mutex_unlock(&stats_state->blocks_lock);
}

static void key_init(void)
{
    pthread_key_create(&stats_state->block_key, block_drop);
}

tj_stats_block_t *tj_stats_block(void)
{
    tj_stats_block_t *b;

    pthread_once(&stats_state->key_once, key_init);
    pthread_mutex_lock(&stats_state->blocks_lock);
    if ((b = stats_state->unused) != NULL)
        stats_state->unused = b->next;
    else
        b = calloc(1, sizeof(*b));
    if (b != NULL) {
        b->next = stats_state->in_use;
        stats_state->in_use = b;
    }
    pthread_mutex_unlock(&stats_state->blocks_lock);
    if (b != NULL) {
        pthread_setspecific(stats_state->block_key, b);
        tj_util_thread.stats.mine = b;
    }
    return b;
}

static const char *const stat_names[TJ_STAT_COUNT] = {
#define TJ_STAT_NAME(_name) #_name,
    TJ_STATS_LIST(TJ_STAT_NAME)
#undef TJ_STAT_NAME
};

uint64_t tj_stats_get(tj_stat_t which)
{
    uint64_t sum;

    pthread_mutex_lock(&stats_state->blocks_lock);
    sum = stats_state->ended[which];
    for (tj_stats_block_t *b = stats_state->in_use; b != NULL; b = b->next)
        sum += atomic_load_explicit(&b->v[which], memory_order_relaxed);
    pthread_mutex_unlock(&stats_state->blocks_lock);
    return sum;
}

void tj_stats_reset(void)
{
    pthread_mutex_lock(&stats_state->blocks_lock);
    for (int i = 0; i < TJ_STAT_COUNT; i++) {
        stats_state->ended[i] = 0;
        for (tj_stats_block_t *b = stats_state->in_use; b != NULL; b = b->next)
            atomic_store_explicit(&b->v[i], 0, memory_order_relaxed);
    }
    pthread_mutex_unlock(&stats_state->blocks_lock);
}

int tj_stats_format(char *buf, size_t len)
{
    size_t used = 0;
    int total = 0;

    if (len > 0)
        buf[0] = '\0';
    for (int i = 0; i < TJ_STAT_COUNT; i++) {
        int n = snprintf(len > used ? buf + used : NULL, len > used ? len - used : 0, "%s%s=%llu",
                         i ? " " : "", stat_names[i], (unsigned long long)tj_stats_get(i));
        if (n < 0)
            return n;
        total += n;
        used += (size_t)n;
    }
    return total;
}
