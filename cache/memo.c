/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-memory kernel table: a uthash table keyed by the 128-bit key hash under a rwlock, so
 * that the many lookups of a running program proceed in parallel and inserts are rare. */
#include "cache/memo.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

/* uthash must never exit() inside the library: a failed allocation sets the `oom` flag that
 * tj_memo_put declares, and the element is simply not added. */
#define HASH_NONFATAL_OOM         1
#define uthash_nonfatal_oom(_elt) (oom = true)
#include <uthash.h>

#include "util/log.h"

typedef struct {
    tj_hash_t key;
    void *value;
    UT_hash_handle hh;
} memo_entry_t;

struct tj_memo {
    pthread_rwlock_t lock;
    memo_entry_t *table;
};

/* Zeroed memory of @p size bytes; NULL after logging the failure. */
static void *memo_alloc(size_t size)
{
    void *p = calloc(1, size);

    if (p == NULL)
        tj_log_error("memo: out of memory");
    return p;
}

tj_status_t tj_memo_create(tj_memo_t **memo)
{
    tj_memo_t *m;

    if (memo == NULL)
        return TJ_ERR_INVALID;
    if ((m = memo_alloc(sizeof(*m))) == NULL)
        return TJ_ERR_NOMEM;
    if (pthread_rwlock_init(&m->lock, NULL) != 0) {
        tj_log_error("memo: cannot create a rwlock");
        free(m);
        return TJ_ERR_NOMEM;
    }
    *memo = m;
    return TJ_OK;
}

void tj_memo_destroy(tj_memo_t *memo, void (*free_value)(void *value))
{
    memo_entry_t *e, *tmp;

    if (memo == NULL)
        return;
    HASH_ITER(hh, memo->table, e, tmp)
    {
        HASH_DEL(memo->table, e);
        if (free_value != NULL)
            free_value(e->value);
        free(e);
    }
    pthread_rwlock_destroy(&memo->lock);
    free(memo);
}

void *tj_memo_get(tj_memo_t *memo, tj_hash_t key)
{
    memo_entry_t *e;
    void *value = NULL;

    pthread_rwlock_rdlock(&memo->lock);
    HASH_FIND(hh, memo->table, &key, sizeof(key), e);
    if (e != NULL)
        value = e->value;
    pthread_rwlock_unlock(&memo->lock);
    return value;
}

void *tj_memo_put(tj_memo_t *memo, tj_hash_t key, void *value)
{
    memo_entry_t *e, *fresh;
    bool oom = false;

    if (value == NULL)
        return NULL;
    /* Allocated before taking the lock, so that no thread waits on malloc. */
    if ((fresh = memo_alloc(sizeof(*fresh))) == NULL)
        return NULL;
    fresh->key = key;
    fresh->value = value;

    pthread_rwlock_wrlock(&memo->lock);
    HASH_FIND(hh, memo->table, &key, sizeof(key), e);
    if (e != NULL) {
        value = e->value;
    } else {
        HASH_ADD(hh, memo->table, key, sizeof(fresh->key), fresh);
        if (!oom)
            fresh = NULL; /* the table owns it now */
        else
            value = NULL;
    }
    pthread_rwlock_unlock(&memo->lock);

    free(fresh);
    if (oom)
        tj_log_error("memo: out of memory");
    return value;
}
