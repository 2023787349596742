/* SPDX-License-Identifier: BSD-3-Clause */
/* The manifest of the kernel cache: the kernels runs needed, one line each. */
#ifndef TJ_CACHE_MANIFEST_H
#define TJ_CACHE_MANIFEST_H

#include "typejit.h"

typedef struct tj_store tj_store_t;

/* Longest manifest line, without its newline; longer lines are refused and skipped. */
#define TJ_STORE_LINE_MAX 16384

/* Append @p line (printable, no newline, at most TJ_STORE_LINE_MAX bytes) to DIR/manifest.txt
 * with one O_APPEND write, unless it is in the file already: the store remembers the lines it
 * has seen, and under an exclusive flock on the file reads the lines other processes appended
 * since, so that concurrent writers add each line once. */
tj_status_t tj_store_manifest_add(tj_store_t *store, const char *line);

/* Call @p fn once for each distinct well-formed line of the manifest (blank, over-long and
 * non-printable lines are skipped). TJ_ERR_NOT_FOUND when there is no manifest. */
tj_status_t tj_store_manifest_read(tj_store_t *store, void (*fn)(const char *line, void *arg),
                                   void *arg);

/* The well-formed lines of the manifest and how many of them are distinct (what
 * tj_store_manifest_read delivers); 0 and 0 when there is no manifest. */
tj_status_t tj_store_manifest_count(tj_store_t *store, long *lines, long *distinct);

#endif /* TJ_CACHE_MANIFEST_H */
