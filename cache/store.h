/* The on-disk kernel cache: a store rooted at one directory, with validated entries under
 * readable toolchain/arch levels (cache/entry.h), the manifest of kernels the runtime needed
 * (cache/manifest.h) and maintenance walks (cache/walk.h); this header includes all three. */
#ifndef TJ_CACHE_STORE_H
#define TJ_CACHE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "typejit.h"

typedef struct tj_store tj_store_t;
typedef enum { TJ_STORE_RW, TJ_STORE_RO } tj_store_mode_t;

/* Open the store rooted at @p dir. RW creates missing directories (mode 0700). Refuses
 * (TJ_ERR_UNTRUSTED, one warning) a root or subdirectory not owned by the effective uid or
 * writable by group or others. RO on a missing directory gives TJ_ERR_NOT_FOUND, silently. The
 * store may be used from several threads at once. */
tj_status_t tj_store_open(const char *dir, tj_store_mode_t mode, tj_store_t **store);
void tj_store_close(tj_store_t *store);

/* The root directory the store was opened on. */
const char *tj_store_dir(const tj_store_t *store);

/* The last problem the calling thread met in any store (a folder refused and why, a failed
 * write and its errno text), "" if none: for tools that must say why something was not done. */
const char *tj_store_last_problem(void);

#include "cache/entry.h"
#include "cache/manifest.h"
#include "cache/walk.h"

#endif /* TJ_CACHE_STORE_H */
