/* SPDX-License-Identifier: BSD-3-Clause */
/* A set of 128-bit hashes on uthash. */
#include "cache/hashset.h"

#include <stdlib.h>

/* uthash must never exit() inside the library: a failed allocation sets the `oom` flag that each
 * function adding to a table declares, and the element is simply not added. */
#define HASH_NONFATAL_OOM         1
#define uthash_nonfatal_oom(_elt) (oom = true)
#include <uthash.h>

#include "util/log.h"

struct tj_hashset_entry {
    tj_hash_t hash;
    UT_hash_handle hh;
};

tj_status_t tj_hashset_add(tj_hashset_t *set, tj_hash_t hash, bool *added)
{
    struct tj_hashset_entry *e;
    bool oom = false;

    HASH_FIND(hh, set->head, &hash, sizeof(hash), e);
    if (e != NULL) {
        if (added != NULL)
            *added = false;
        return TJ_OK;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        goto out_oom;
    e->hash = hash;
    HASH_ADD(hh, set->head, hash, sizeof(e->hash), e);
    if (oom) {
        free(e);
        goto out_oom;
    }
    if (added != NULL)
        *added = true;
    return TJ_OK;

out_oom:
    tj_log_error("cache: out of memory for a set of manifest lines");
    return TJ_ERR_NOMEM;
}

bool tj_hashset_has(const tj_hashset_t *set, tj_hash_t hash)
{
    struct tj_hashset_entry *e;
    HASH_FIND(hh, set->head, &hash, sizeof(hash), e);
    return e != NULL;
}

void tj_hashset_remove(tj_hashset_t *set, tj_hash_t hash)
{
    struct tj_hashset_entry *e;
    HASH_FIND(hh, set->head, &hash, sizeof(hash), e);
    if (e != NULL) {
        HASH_DEL(set->head, e);
        free(e);
    }
}

long tj_hashset_count(const tj_hashset_t *set)
{
    return (long)HASH_COUNT(set->head);
}

void tj_hashset_clear(tj_hashset_t *set)
{
    struct tj_hashset_entry *e, *tmp;

    HASH_ITER(hh, set->head, e, tmp)
    {
        HASH_DEL(set->head, e);
        free(e);
    }
}
