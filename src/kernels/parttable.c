/* SPDX-License-Identifier: BSD-3-Clause */
/* Device part tables (see parttable.h). A layout's record of its tables hangs from the layout's
 * device slot (tj_layout_device_t: the type layer declares the slot, this file defines what it
 * holds and registers the hook that frees it); a process-wide list of the records lets
 * MPI_Finalize free them while the layouts themselves live on (types not freed before
 * MPI_Finalize). The layout's release hook and MPI_Finalize take the list's lock, so a record is
 * freed exactly once. */
#include "kernels/parttable.h"

#include <pthread.h>
#include <stdlib.h>

#include "jit/parts.h"
#include "kernels/state.h"
#include "type/layout_runs.h"
#include "util/log.h"
#include "util/stats.h"

/* This module's part of the layer's state. */
static __typeof__(tj_kernels_state.parttable) *const parttable_state = &tj_kernels_state.parttable;

/* A table in one context. */
typedef struct table {
    tj_gpu_ctx_t ctx;
    unsigned gen; /* the context's instance (tj_gpu_generation) it was copied into */
    tj_devptr_t dev;
    struct table *next;
} table_t;

/* What a layout's device slot holds. */
typedef struct tj_layout_device record_t;

struct tj_layout_device {
    pthread_mutex_t lock; /* the tables and the runs layout */
    tj_layout_t *owner;   /* the layout whose record this is (no reference: it points here) */
    table_t *tables;
    tj_layout_t *runs;
    bool runs_failed;
    record_t *prev, *next; /* the list of every record */
};

static void free_tables(record_t *r)
{
    while (r->tables != NULL) {
        table_t *t = r->tables;
        tj_gpu_scope_t scope;
        r->tables = t->next;
        /* A table of a dead, destroyed or reset context went with it. */
        if (tj_gpu_enter_to_release(t->ctx, &scope) == TJ_OK) {
            if (tj_gpu_generation() == t->gen)
                tj_gpu_free(t->dev);
            tj_gpu_leave(&scope);
        }
        free(t);
    }
}

/* Free a record taken off the list. */
static void record_free(record_t *r)
{
    free_tables(r);
    tj_layout_release(r->runs);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static void unlink_record(record_t *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        parttable_state->records = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
}

/* The layout's last reference went: its record goes too, unless MPI_Finalize took it. */
static void on_release(tj_layout_t *l)
{
    record_t *r;

    pthread_mutex_lock(&parttable_state->list_lock);
    r = tj_layout_device_detach(l);
    if (r != NULL)
        unlink_record(r);
    pthread_mutex_unlock(&parttable_state->list_lock);
    if (r != NULL)
        record_free(r);
}

static const tj_layout_hooks_t hooks = {.release = on_release};

static void set_hooks(void)
{
    tj_layout_set_hooks(&hooks);
}

/* The record of @p l, made on first use. */
static record_t *record_of(tj_layout_t *l)
{
    record_t *r = tj_layout_device(l), *mine;

    if (r != NULL)
        return r;
    pthread_once(&parttable_state->hook_once, set_hooks);
    if ((mine = calloc(1, sizeof(*mine))) == NULL)
        return NULL;
    pthread_mutex_init(&mine->lock, NULL);
    mine->owner = l;
    pthread_mutex_lock(&parttable_state->list_lock);
    if (tj_layout_device_attach(l, mine, &r)) {
        mine->next = parttable_state->records;
        if (parttable_state->records != NULL)
            parttable_state->records->prev = mine;
        parttable_state->records = mine;
        mine = NULL;
    } /* else r is another thread's, made meanwhile */
    pthread_mutex_unlock(&parttable_state->list_lock);
    if (mine != NULL) {
        pthread_mutex_destroy(&mine->lock);
        free(mine);
    }
    return r;
}

/* The table of @p r in context @p ctx of instance @p gen: its device address, or 0. Dropped along
 * the way: tables of earlier instances of that context (gone with them). Under r->lock. */
static tj_devptr_t table_find(record_t *r, tj_gpu_ctx_t ctx, unsigned gen)
{
    table_t *t, **at;

    for (at = &r->tables; (t = *at) != NULL;) {
        if (t->ctx == ctx && t->gen == gen)
            return t->dev;
        if (t->ctx == ctx) { /* of an earlier instance of this context: gone with it */
            *at = t->next;
            free(t);
            continue;
        }
        at = &t->next;
    }
    return 0;
}

tj_status_t tj_parttable_get(tj_layout_t *l, tj_devptr_t *table)
{
    tj_gpu_ctx_t ctx = tj_gpu_current();
    unsigned gen = tj_gpu_generation();
    record_t *r = record_of(l);
    table_t *t = NULL;
    size_t bytes = tj_gen_parts_table_bytes(l);
    void *image = NULL;
    tj_devptr_t dev, found;
    tj_status_t st = TJ_OK;

    if (r == NULL)
        return TJ_ERR_NOMEM;
    if (ctx == NULL)
        return TJ_ERR_INVALID;
    pthread_mutex_lock(&r->lock);
    dev = table_find(r, ctx, gen);
    pthread_mutex_unlock(&r->lock);
    if (dev != 0) {
        *table = dev;
        return TJ_OK;
    }
    /* First use in this context: copy the table there, without the record's lock (no driver
     * call is made under it). Two threads of one layout may both copy it; the first one kept
     * wins and the other frees its copy. */
    if ((t = calloc(1, sizeof(*t))) == NULL || (image = malloc(bytes)) == NULL) {
        st = TJ_ERR_NOMEM;
        goto out_free;
    }
    tj_gen_parts_table(l, image);
    if ((st = tj_gpu_alloc(bytes, &t->dev)) != TJ_OK)
        goto out_free;
    if ((st = tj_gpu_copy_htod(t->dev, image, bytes)) != TJ_OK) {
        tj_gpu_free(t->dev);
        goto out_free;
    }
    t->ctx = ctx;
    t->gen = gen;
    pthread_mutex_lock(&r->lock);
    if ((found = table_find(r, ctx, gen)) == 0) {
        t->next = r->tables;
        r->tables = t;
        found = t->dev;
        t = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    if (t != NULL) {
        tj_gpu_free(t->dev); /* another thread's copy was kept */
    } else {
        tj_stats_inc(TJ_STAT_layout_tables);
        tj_log_debug("part table of %lld parts (%zu bytes) copied to the device",
                     (long long)l->nparts, bytes);
    }
    *table = found;
out_free:
    free(image);
    free(t);
    return st;
}

tj_status_t tj_parttable_runs(tj_layout_t *l, tj_layout_t **runs)
{
    record_t *r = record_of(l);
    tj_status_t st = TJ_OK;

    if (r == NULL)
        return TJ_ERR_NOMEM;
    pthread_mutex_lock(&r->lock);
    if (r->runs == NULL && !r->runs_failed) {
        st = tj_layout_runs_make(l, &r->runs);
        r->runs_failed = st != TJ_OK;
    } else if (r->runs_failed) {
        st = TJ_ERR_NOT_STRIDED;
    }
    *runs = r->runs;
    pthread_mutex_unlock(&r->lock);
    return st;
}

void tj_parttable_finalize(void)
{
    record_t *list;

    pthread_mutex_lock(&parttable_state->list_lock);
    list = parttable_state->records;
    parttable_state->records = NULL;
    /* Detached from their layouts, which may live on: their release then finds no record. */
    for (record_t *r = list; r != NULL; r = r->next)
        tj_layout_device_detach(r->owner);
    pthread_mutex_unlock(&parttable_state->list_lock);
    while (list != NULL) {
        record_t *next = list->next;
        record_free(list);
        list = next;
    }
}
