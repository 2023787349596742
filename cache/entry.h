/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernel cache entries: load with full validation, save through tmp/ and rename. */
#ifndef TJ_CACHE_ENTRY_H
#define TJ_CACHE_ENTRY_H

#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;

/* Version of the entry layout; entries of any other version are misses. */
#define TJ_STORE_FORMAT_VERSION 1

/* Load the entry for the full key text @p key from DIR/<toolchain>/<arch>/<hash of key>.bin.
 * An entry that fails validation is a miss: TJ_ERR_NOT_FOUND when absent, TJ_ERR_CORRUPT or
 * TJ_ERR_UNTRUSTED when invalid (logged at info level: the caller recompiles and saves, which
 * replaces it). Toolchain and arch may hold only [A-Za-z0-9._-] (else TJ_ERR_INVALID). On
 * success *image is malloc'd and the caller frees it. */
tj_status_t tj_store_load(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, void **image, size_t *len);

/* Write an entry through DIR/tmp and rename() it into place, so that readers see either the old
 * file or the whole new one. @p source (may be NULL) is written beside it as <hash>.cu the same
 * way. A RO store refuses with TJ_ERR_UNSUPPORTED and writes nothing. */
tj_status_t tj_store_save(tj_store_t *store, const char *toolchain, const char *arch,
                          const char *key, const void *image, size_t len, const char *source);

/* How many entries the calling thread's tj_store_save calls wrote and how many failed since the
 * last call (which resets both). tj_store_last_problem says why the last one failed. */
void tj_store_save_report(long *saved, long *failed);

#endif /* TJ_CACHE_ENTRY_H */
