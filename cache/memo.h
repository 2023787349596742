/* SPDX-License-Identifier: BSD-3-Clause */
/* The in-memory kernel table in front of the disk store: hash -> value, safe across threads. */
#ifndef TJ_CACHE_MEMO_H
#define TJ_CACHE_MEMO_H

#include "cache/hash.h"
#include "typejit.h"

typedef struct tj_memo tj_memo_t;

tj_status_t tj_memo_create(tj_memo_t **memo);

/* Free the table; @p free_value (may be NULL) is called once on each value it holds. */
void tj_memo_destroy(tj_memo_t *memo, void (*free_value)(void *value));

/* The value stored under @p key, or NULL. */
void *tj_memo_get(tj_memo_t *memo, tj_hash_t key);

/* Insert @p value (not NULL) unless @p key is present. Returns the value now in the table: the
 * existing one when another thread won, and the caller then frees its own. NULL only when out of
 * memory (or @p value is NULL), and then the table is unchanged. */
void *tj_memo_put(tj_memo_t *memo, tj_hash_t key, void *value);

#endif /* TJ_CACHE_MEMO_H */
