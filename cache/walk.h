/* SPDX-License-Identifier: BSD-3-Clause */
/* Maintenance walks over the kernel cache: statistics, verification, clearing. */
#ifndef TJ_CACHE_WALK_H
#define TJ_CACHE_WALK_H

#include <stdbool.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;

typedef struct {
    long entries; /* entries that validate */
    long bytes;   /* on-disk bytes of those entries and of the sources */
    long invalid; /* entries that fail validation (deleted when asked to) */
    long sources; /* saved .cu sources */
    long removed; /* invalid entries deleted (remove_invalid) */
    long skipped; /* folders of the layout refused (not yours, writable by others, unreadable):
                     whatever they hold is not counted */
} tj_store_stats_t;

/* Walk every entry; with @p remove_invalid (RW stores only) delete those that fail validation.
 * @p stats is filled even when the walk fails: TJ_ERR_UNTRUSTED or TJ_ERR_IO say that some
 * folder was refused (stats->skipped) or some invalid entry could not be deleted, after one
 * warning that says why (tj_store_last_problem repeats it). */
tj_status_t tj_store_stats(tj_store_t *store, bool remove_invalid, tj_store_stats_t *stats);

/* One entry of the store, as tj_store_list reports it. */
typedef struct {
    const char *folder;  /* DIR/TOOLCHAIN/ARCH */
    const char *name;    /* HASH.bin */
    long long bytes;     /* the entry file's size */
    bool source;         /* its saved .cu is beside it */
    long long last_use;  /* the later of its access and modification times, seconds since 1970 */
    const char *key;     /* the key text of an entry that validates, else NULL */
    const char *invalid; /* why the entry fails validation, in words, else NULL */
} tj_store_item_t;

/* Call @p fn for every entry of @p store, valid or not, folder by folder, reading entries as
 * tj_store_stats does (without updating their access times). Refused folders are counted in
 * *skipped and make the status TJ_ERR_UNTRUSTED (after one warning), as for tj_store_stats. */
tj_status_t tj_store_list(tj_store_t *store, void (*fn)(const tj_store_item_t *item, void *arg),
                          void *arg, long *skipped);

/* Remove every entry, source, temporary file and the manifest; keep the root directory.
 * TJ_ERR_UNTRUSTED when a refused folder kept what it holds, TJ_ERR_IO when a file could not be
 * removed; either comes after one warning that says why. */
tj_status_t tj_store_clear(tj_store_t *store);

#endif /* TJ_CACHE_WALK_H */
