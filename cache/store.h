/* SPDX-License-Identifier: BSD-3-Clause */
/* The on-disk kernel cache: a store rooted at one directory, opened with its trust checks. What
 * a store holds has a module each: validated entries under readable toolchain/arch levels
 * (cache/entry.h), the manifest of kernels the runtime needed (cache/manifest.h), maintenance
 * walks (cache/walk.h), per-kernel compile locks (cache/lock.h), the search path of shared caches
 * (cache/set.h) and trimming (cache/trim.h). */
#ifndef TJ_CACHE_STORE_H
#define TJ_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;
/* RW: the user's cache, read and written. RO: the same, only read. SHARED: read only, a cache
 * others may share (TYPEJIT_CACHE_PATH, e.g. a site-wide one warmed by an administrator): it
 * trusts what root owns as well as what the user owns. */
typedef enum { TJ_STORE_RW, TJ_STORE_RO, TJ_STORE_SHARED } tj_store_mode_t;

/* Open the store rooted at @p dir. RW creates missing directories (mode 0700). Refuses
 * (TJ_ERR_UNTRUSTED, one warning) a root or subdirectory not owned by the effective uid (or, for
 * SHARED, root) or writable by group or others. RO and SHARED on a missing directory give
 * TJ_ERR_NOT_FOUND, silently. The store may be used from several threads at once. */
tj_status_t tj_store_open(const char *dir, tj_store_mode_t mode, tj_store_t **store);
void tj_store_close(tj_store_t *store);

/* Whether a RW store can be written now: a file made and removed in its tmp/ folder, and its root
 * writable (new levels, the manifest). TJ_ERR_IO when not, with the reason for
 * tj_store_last_problem (a read-only file system, a folder without write permission), so that a
 * tool can refuse before doing work it could not keep. */
tj_status_t tj_store_probe_write(tj_store_t *store);

/* The root directory the store was opened on. */
const char *tj_store_dir(const tj_store_t *store);

/* The last problem the calling thread met in any store (a folder refused and why, a failed
 * write and its errno text), "" if none: for tools that must say why something was not done. */
const char *tj_store_last_problem(void);

#endif /* TJ_CACHE_STORE_H */
