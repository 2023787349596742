/* SPDX-License-Identifier: BSD-3-Clause */
/* A set of 128-bit hashes: the manifest lines a store has seen, the lines trimming drops. */
#ifndef TJ_CACHE_HASHSET_H
#define TJ_CACHE_HASHSET_H

#include <stdbool.h>

#include "cache/hash.h"
#include "typejit.h"

struct tj_hashset_entry;

/* Zero-initialised is empty. Not locked: its owner serialises the calls. */
typedef struct {
    struct tj_hashset_entry *head;
} tj_hashset_t;

/* Add @p hash; *added (may be NULL) tells whether it was new. TJ_ERR_NOMEM, logged, leaves the
 * set as it was. */
tj_status_t tj_hashset_add(tj_hashset_t *set, tj_hash_t hash, bool *added);

bool tj_hashset_has(const tj_hashset_t *set, tj_hash_t hash);

/* Remove @p hash when present. */
void tj_hashset_remove(tj_hashset_t *set, tj_hash_t hash);

long tj_hashset_count(const tj_hashset_t *set);

/* Remove everything; the set is empty again. */
void tj_hashset_clear(tj_hashset_t *set);

#endif /* TJ_CACHE_HASHSET_H */
