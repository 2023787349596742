/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel caches a process reads: the user's own store first, then the shared read-only
 * caches of TYPEJIT_CACHE_PATH (a site-wide cache warmed ahead of jobs), in order. */
#ifndef TJ_CACHE_SET_H
#define TJ_CACHE_SET_H

#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;
typedef struct tj_store_set tj_store_set_t;

/* Open a set of @p own (may be NULL: no cache of one's own; borrowed, it must outlive the set)
 * and the folders of @p path (':'-separated absolute paths; NULL or "" for none), each opened
 * TJ_STORE_SHARED: read only, trusting what the user or root owns and nobody else can write. A
 * folder that does not exist is skipped (info level), one that is refused is skipped after one
 * warning that says why, a folder listed twice or the user's own is searched once. Fails only
 * for lack of memory. */
tj_status_t tj_store_set_open(tj_store_t *own, const char *path, tj_store_set_t **set);
void tj_store_set_close(tj_store_set_t *set);

/* The shared stores opened (those of the path that are used). */
int tj_store_set_shared(const tj_store_set_t *set);

/* Load the entry of @p key as tj_store_load does, from the first store of the set (own, then
 * the path in order) that holds a valid one; entries that fail validation or trust are misses
 * there and the search goes on. TJ_OK: *image (malloc'd) and *len are set. Otherwise the own
 * store's status (TJ_ERR_NOT_FOUND, or TJ_ERR_CORRUPT for an invalid entry that a save would
 * replace), or TJ_ERR_NOT_FOUND without an own store. */
tj_status_t tj_store_set_load(tj_store_set_t *set, const char *toolchain, const char *arch,
                              const char *key, void **image, size_t *len);

#endif /* TJ_CACHE_SET_H */
