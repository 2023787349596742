/* SPDX-License-Identifier: BSD-3-Clause */
/* Trimming the kernel cache to a size: the entries used least recently go first. */
#ifndef TJ_CACHE_TRIM_H
#define TJ_CACHE_TRIM_H

#include "typejit.h"

typedef struct tj_store tj_store_t;

typedef struct {
    long removed;         /* entries removed (invalid ones and orphaned sources included) */
    long long freed;      /* their bytes, sources included, and those of temporary files that
                             writers which died left in tmp/ (over an hour old) */
    long kept;            /* entries left */
    long long kept_bytes; /* their bytes, sources included */
    long busy;            /* entries kept over the size because a live process holds their
                             compile lock or was replacing them */
    long lines_dropped;   /* manifest lines of removed kernels dropped */
    long skipped;         /* folders of the layout refused (not looked into) */
} tj_store_trim_t;

/* Remove the least recently used entries (by access time, which loads set even on noatime
 * mounts, or the modification time when that is later) with their sources until entries and
 * sources take at most @p max_bytes; entries that fail validation go first. Never removes an
 * entry whose compile lock is live, nor one that a save replaced while trimming. The manifest
 * lines of the kernels removed are dropped unless another entry left (another toolchain) is the
 * same kernel, so that `typejit warm` does not compile them back. RW stores only
 * (TJ_ERR_UNSUPPORTED). @p result is filled even when the walk fails (a refused folder:
 * TJ_ERR_UNTRUSTED, after one warning; whatever it holds is neither counted nor removed). */
tj_status_t tj_store_trim(tj_store_t *store, long long max_bytes, tj_store_trim_t *result);

/* TYPEJIT_CACHE_MAX_SIZE: when set and the store is RW, the first call in the process adds up
 * the sizes of entries and sources (a walk of stat calls) and, when over the limit, trims to 90%
 * of it, so that the next few kernels do not trim again. Later calls return at once. */
tj_status_t tj_store_trim_if_needed(tj_store_t *store);

#endif /* TJ_CACHE_TRIM_H */
