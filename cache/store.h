/* The on-disk kernel cache: validated entries under readable toolchain/arch levels, atomic
 * writes, and the manifest of kernels the runtime needed. */
#ifndef TJ_CACHE_STORE_H
#define TJ_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;
typedef enum { TJ_STORE_RW, TJ_STORE_RO } tj_store_mode_t;

/* Longest manifest line, without its newline; longer lines are refused and skipped. */
#define TJ_STORE_LINE_MAX 4096

/* Version of the entry layout; entries of any other version are misses. */
#define TJ_STORE_FORMAT_VERSION 1

/* Open the store rooted at @p dir. RW creates missing directories (mode 0700). Refuses
 * (TJ_ERR_UNTRUSTED, one warning) a root or subdirectory not owned by the effective uid or
 * writable by group or others. RO on a missing directory gives TJ_ERR_NOT_FOUND, silently. The
 * store may be used from several threads at once. */
tj_status_t tj_store_open(const char *dir, tj_store_mode_t mode, tj_store_t **store);
void tj_store_close(tj_store_t *store);

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

/* Append @p line (printable, no newline, at most TJ_STORE_LINE_MAX bytes) to DIR/manifest.txt
 * with one O_APPEND write, unless this store has added it already or it was in the file when
 * the store first touched the manifest. */
tj_status_t tj_store_manifest_add(tj_store_t *store, const char *line);

/* Call @p fn once for each distinct well-formed line of the manifest (blank, over-long and
 * non-printable lines are skipped). TJ_ERR_NOT_FOUND when there is no manifest. */
tj_status_t tj_store_manifest_read(tj_store_t *store, void (*fn)(const char *line, void *arg),
                                   void *arg);

typedef struct {
    long entries; /* entries that validate */
    long bytes;   /* on-disk bytes of those entries and of the sources */
    long invalid; /* entries that fail validation (deleted when asked to) */
    long sources; /* saved .cu sources */
} tj_store_stats_t;

/* Walk every entry; with @p remove_invalid (RW stores only) delete those that fail validation. */
tj_status_t tj_store_stats(tj_store_t *store, bool remove_invalid, tj_store_stats_t *stats);

/* Remove every entry, source, temporary file and the manifest; keep the root directory. */
tj_status_t tj_store_clear(tj_store_t *store);

/* The root directory the store was opened on. */
const char *tj_store_dir(const tj_store_t *store);

#endif /* TJ_CACHE_STORE_H */
